/**
 * `Activity`: the status filter's ranges and parsing, `Activity.list` (filters reach the store as
 * ranges, cursors walk every matching entry once, newest first, a foreign cursor is refused),
 * `lastUsed` counting only the current key, the purge in batches, and `Accounts.keySlots`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as fc from "effect/FastCheck"
import {
  type Account,
  Accounts,
  Activity,
  type ActivityEntry,
  type ActivityQuery,
  ActivityStore,
  type ActivityStoreShape,
  AccountStore,
  type AccountStoreShape,
  Page
} from "../src/index.js"

const T0 = 1_800_000_000_000

/** An in-memory store that applies the query's ranges as a SQL store would (not via `Activity.matches`). */
const memoryStore = (rows: Array<ActivityEntry>) => {
  const seen: Array<ActivityQuery> = []
  const store: ActivityStoreShape = {
    append: (entries) => Effect.sync(() => void rows.push(...entries)),
    list: (customerNo, query, page) =>
      Effect.sync(() => {
        seen.push(query)
        const below = page.startingAfter
        const found = rows
          .filter((r) => r.customerNo === customerNo)
          .filter((r) => query.mode === undefined || r.keyMode === query.mode)
          .filter((r) => query.status === undefined || (r.status >= query.status.from && r.status < query.status.below))
          .filter((r) => below === undefined || r.at < below[0] || (r.at === below[0] && r.id < below[1]))
          .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
        return Page.sliceOf(found.slice(0, page.limit + 1), page.limit)
      }),
    lastUsed: (customerNo, mode) =>
      Effect.sync(() => {
        const ats = rows.filter((r) => r.customerNo === customerNo && r.keyMode === mode).map((r) => r.at)
        return ats.length === 0 ? Option.none() : Option.some(Math.max(...ats))
      }),
    deleteBefore: (before, limit) =>
      Effect.sync(() => {
        let n = 0
        for (let i = rows.length - 1; i >= 0 && n < limit; i--) {
          if (rows[i]!.at < before) {
            rows.splice(i, 1)
            n++
          }
        }
        return n
      })
  }
  return { store, seen, layer: Layer.succeed(ActivityStore, store) }
}

const entry = (i: number, over: Partial<ActivityEntry> = {}): ActivityEntry => ({
  id: `01J${i.toString().padStart(23, "0")}`,
  at: T0 + i,
  customerNo: "1234567",
  method: "POST",
  path: "/api/v1/order/json/",
  keyMode: "live",
  status: 200,
  clientIp: "203.0.113.1",
  requestId: `r${i}`,
  ...over
})

describe("Activity status filters", () => {
  it("classes and single statuses are ranges; a number that is no status matches nothing", () => {
    expect(Activity.statusRange("2xx")).toEqual({ from: 200, below: 300 })
    expect(Activity.statusRange("4xx")).toEqual({ from: 400, below: 500 })
    expect(Activity.statusRange("5xx")).toEqual({ from: 500, below: 600 })
    expect(Activity.statusRange(429)).toEqual({ from: 429, below: 430 })
    for (const bad of [0, 99, 600, 42.5, -1, Number.NaN]) {
      const r = Activity.statusRange(bad)
      expect(r.from >= r.below).toBe(true)
    }
  })

  it("parseStatus reads classes, three-digit statuses and nothing; refuses the rest", () => {
    expect(Activity.parseStatus(undefined)).toEqual(Option.some(undefined))
    expect(Activity.parseStatus("")).toEqual(Option.some(undefined))
    expect(Activity.parseStatus("4XX")).toEqual(Option.some("4xx"))
    expect(Activity.parseStatus("503")).toEqual(Option.some(503))
    for (const bad of ["3xx", "600", "42", "4001", "abc", " 200"])
      expect(Option.isNone(Activity.parseStatus(bad))).toBe(true)
  })

  it.prop(
    "a status passes a filter exactly when it lies in the filter's range",
    [
      fc.integer({ min: 100, max: 599 }),
      fc.constantFrom<Activity.StatusFilter>("2xx", "4xx", "5xx", 200, 404, 429, 503)
    ],
    ([status, filter]) => {
      const expected = typeof filter === "number" ? status === filter : Math.floor(status / 100) === Number(filter[0])
      expect(Activity.matches(entry(0, { status }), { status: filter })).toBe(expected)
    }
  )
})

describe("Activity.list", () => {
  it.effect("passes the filter to the store as a mode and a status range", () => {
    const memory = memoryStore([])
    return Effect.gen(function* () {
      yield* Activity.list("1234567", { mode: "test", status: "5xx" }, { limit: 5 })
      yield* Activity.list("1234567", {}, { limit: 5 })
      expect(memory.seen).toEqual([{ mode: "test", status: { from: 500, below: 600 } }, {}])
    }).pipe(Effect.provide(memory.layer))
  })

  it.effect.prop(
    "pages of any size visit every matching entry once, newest first, and only the caller's",
    [
      fc.array(
        fc.record({
          at: fc.integer({ min: 0, max: 20 }),
          mode: fc.constantFrom<Account.KeyMode | null>("live", "test", null),
          status: fc.constantFrom(200, 201, 400, 401, 403, 429, 500, 503),
          mine: fc.boolean()
        }),
        { maxLength: 40 }
      ),
      fc.integer({ min: 1, max: 7 }),
      fc.record({
        mode: fc.option(fc.constantFrom<Account.KeyMode>("live", "test"), { nil: undefined }),
        status: fc.option(fc.constantFrom<Activity.StatusFilter>("2xx", "4xx", "5xx", 429, 500), { nil: undefined })
      })
    ],
    ([specs, limit, filter]) => {
      const rows = specs.map((s, i) =>
        entry(i, { at: T0 + s.at, keyMode: s.mode, status: s.status, customerNo: s.mine ? "1234567" : "7654321" })
      )
      const memory = memoryStore([...rows])
      const clean = {
        ...(filter.mode === undefined ? {} : { mode: filter.mode }),
        ...(filter.status === undefined ? {} : { status: filter.status })
      }
      return Effect.gen(function* () {
        const seen: Array<ActivityEntry> = []
        let cursor: string | undefined = undefined
        for (let round = 0; round < 100; round++) {
          const page: Page.Page<ActivityEntry> = yield* Activity.list(
            "1234567",
            clean,
            cursor === undefined ? { limit } : { limit, startingAfter: cursor }
          )
          expect(page.items.length).toBeLessThanOrEqual(limit)
          seen.push(...page.items)
          if (page.nextCursor === null) break
          cursor = page.nextCursor
        }
        const statusOk = (s: number) =>
          filter.status === undefined
            ? true
            : typeof filter.status === "number"
              ? s === filter.status
              : String(s)[0] === filter.status[0]
        const expected = rows
          .filter((r) => r.customerNo === "1234567")
          .filter((r) => filter.mode === undefined || r.keyMode === filter.mode)
          .filter((r) => statusOk(r.status))
          .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
        expect(seen).toEqual(expected)
      }).pipe(Effect.provide(memory.layer))
    },
    { fastCheck: { numRuns: 60 } }
  )

  it.effect("a cursor that is not one of this list's is InvalidPage", () =>
    Effect.gen(function* () {
      const result = yield* Effect.either(Activity.list("1234567", {}, { limit: 5, startingAfter: "not-a-cursor" }))
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidPage")
    }).pipe(Effect.provide(memoryStore([]).layer))
  )
})

describe("Activity.lastUsed and purgeExpired", () => {
  it.effect("last use counts calls at or after the current key's creation only", () =>
    Effect.gen(function* () {
      expect(yield* Activity.lastUsed("1234567", "live", null)).toBe(T0 + 5)
      expect(yield* Activity.lastUsed("1234567", "live", T0 + 5)).toBe(T0 + 5)
      expect(yield* Activity.lastUsed("1234567", "live", T0 + 6)).toBeNull()
      expect(yield* Activity.lastUsed("1234567", "test", null)).toBeNull()
    }).pipe(Effect.provide(memoryStore([entry(1), entry(5), entry(3, { keyMode: "test", customerNo: "1" })]).layer))
  )

  it.effect("purgeExpired deletes what is older than 30 days, in batches, and says how many", () => {
    const now = T0 + Activity.RETENTION_MS
    const rows = [
      ...Array.from({ length: Activity.PURGE_BATCH + 5 }, (_, i) => entry(i, { at: T0 - 1 - i })),
      entry(1, { at: T0 }),
      entry(2, { at: T0 + 10 })
    ]
    const memory = memoryStore(rows)
    return Effect.gen(function* () {
      yield* TestClock.setTime(now)
      expect(yield* Activity.purgeExpired).toBe(Activity.PURGE_BATCH + 5)
      expect(rows.map((r) => r.at)).toEqual([T0, T0 + 10])
    }).pipe(Effect.provide(memory.layer))
  })
})

describe("Accounts.keySlots", () => {
  const account: Account.AccountRecord = {
    customerNo: "1234567",
    name: "Acme",
    cancelMode: "local",
    rateCard: null,
    ipAllowlist: [],
    createdAt: 0
  }
  const key = (mode: Account.KeyMode, over: Partial<Account.ApiKeyRecord> = {}): Account.ApiKeyRecord => ({
    id: `key_${account.customerNo}_${mode}`,
    customerNo: account.customerNo,
    mode,
    status: "active",
    generation: 1,
    hash: `h-${mode}`,
    hint: `wb_${mode}_AbCd`,
    last4: "Wxyz",
    createdAt: T0 + 2,
    updatedAt: T0 + 2,
    ...over
  })
  const accounts = (keys: ReadonlyArray<Account.ApiKeyRecord>) =>
    Layer.succeed(AccountStore, {
      findAccount: (no: string) => Effect.succeed(no === account.customerNo ? Option.some(account) : Option.none()),
      listKeys: () => Effect.succeed(keys)
    } as unknown as AccountStoreShape)

  it.effect(
    "production then test; last use from the log, for the current key only; blanks and old keys show null",
    () =>
      Effect.gen(function* () {
        const slots = yield* Accounts.keySlots(account.customerNo)
        expect(slots).toEqual([
          { mode: "live", status: "disabled", last4: "Wxyz", createdAt: T0 + 2, lastUsedAt: T0 + 9 },
          { mode: "test", status: "active", last4: null, createdAt: null, lastUsedAt: T0 + 1 }
        ])
      }).pipe(
        Effect.provide(
          Layer.merge(
            accounts([key("test", { last4: null, createdAt: null }), key("live", { status: "disabled" })]),
            memoryStore([entry(1, { keyMode: "test" }), entry(9), entry(1)]).layer
          )
        )
      )
  )

  it.effect("a slot never filled is blank; an unknown account is AccountNotFound", () =>
    Effect.gen(function* () {
      const slots = yield* Accounts.keySlots(account.customerNo)
      expect(slots[1]).toEqual({ mode: "test", status: "blank", last4: null, createdAt: null, lastUsedAt: null })
      expect(slots[0]!.lastUsedAt).toBeNull()
      const missing = yield* Effect.either(Accounts.keySlots("7654321"))
      expect(Either.isLeft(missing) && missing.left._tag).toBe("AccountNotFound")
    }).pipe(Effect.provide(Layer.merge(accounts([key("live")]), memoryStore([entry(1)]).layer)))
  )
})
