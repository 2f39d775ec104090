/**
 * @module ActivityStoreContract
 *
 * The conformance suite of the `ActivityStore` port (the account's API activity log): a batch
 * is written whole or not at all, lists are scoped by customer number, newest first by
 * `(at, id)` and paged by keyset without gaps or repeats (ties on `at` included), the key-mode
 * and status filters select exactly the matching entries, `lastUsed` is the latest call per
 * mode, and the purge deletes old entries only, in bounded batches.
 *
 * Cases use fresh customer numbers, so a shared store works too (except the purge case, which
 * deletes by time alone and uses times no other case writes).
 */
import { expect } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Activity, type ActivityEntry, ActivityStore, type Page, Transactor, Ulid } from "@waybill/core"
import { registerCases, skipReasons } from "./internal/contract.js"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "append writes a batch; list answers the customer's entries newest first",
  "lists are scoped by customer number",
  "keyset pages visit every entry once, in order, ties on the time included",
  "filters: key mode, one status, a status class",
  "lastUsed is the latest call per key mode, none for an unused mode",
  "a batch appended in a failed transaction is not kept",
  "a batch of 1500 entries is written whole",
  "deleteBefore deletes older entries only, at most limit per call"
] as const

/** The name of one case of the suite. */
export type ActivityStoreCase = (typeof cases)[number]

/** A case an implementation cannot pass yet, with the reason shown in the test report. */
export interface SkippedActivityStoreCase {
  readonly case: ActivityStoreCase
  readonly reason: string
}

let counter = 0
/** A customer number no other case (or earlier run on a shared store) has used. */
const freshCustomer = () => `9${(Date.now() % 1_000_000).toString().padStart(6, "0")}${(counter++).toString(36)}`

const T0 = 1_800_000_000_000

let idCounter = 0
const idAt = (at: number) => {
  const random = new Uint8Array(10)
  let n = idCounter++
  for (let i = 9; i >= 0 && n > 0; i--) {
    random[i] = n & 0xff
    n = Math.floor(n / 256)
  }
  return Ulid.encode(at, random)
}

/** An entry of `customerNo` at `at`; the id is a fresh ULID of that time. */
export const entry = (customerNo: string, at: number, over: Partial<ActivityEntry> = {}): ActivityEntry => ({
  id: idAt(at),
  at,
  customerNo,
  method: "POST",
  path: "/api/v1/order/json/",
  keyMode: "live",
  status: 200,
  clientIp: "203.0.113.7",
  requestId: `req-${(counter++).toString(36)}`,
  ...over
})

const newestFirst = (entries: ReadonlyArray<ActivityEntry>) =>
  [...entries].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))

/** Every entry of the customer matching `query`, page by page of `limit`. */
const all = (customerNo: string, query: Parameters<ActivityStore["Type"]["list"]>[1], limit: number) =>
  Effect.gen(function* () {
    const store = yield* ActivityStore
    const seen: Array<ActivityEntry> = []
    let startingAfter: Page.TimeKey | undefined = undefined
    for (let round = 0; round < 1000; round++) {
      const slice: Page.Slice<ActivityEntry> = yield* store.list(customerNo, query, { limit, startingAfter })
      expect(slice.items.length).toBeLessThanOrEqual(limit)
      seen.push(...slice.items)
      if (!slice.hasMore) return seen
      const last = slice.items[slice.items.length - 1]!
      startingAfter = [last.at, last.id]
    }
    throw new Error("the pages never ended")
  })

class Boom extends Data.TaggedError("Boom") {}

const body: { readonly [K in ActivityStoreCase]: Effect.Effect<void, unknown, ActivityStore | Transactor> } = {
  "append writes a batch; list answers the customer's entries newest first": Effect.gen(function* () {
    const store = yield* ActivityStore
    const customer = freshCustomer()
    const entries = [
      entry(customer, T0 + 1, { method: "GET", path: "/api/v1/order/docs/", keyMode: "test", status: 404 }),
      entry(customer, T0 + 3, { clientIp: "", requestId: "01J0000000000000000000000A" }),
      entry(customer, T0 + 2, { keyMode: null, status: 429, clientIp: "2001:db8::1" })
    ]
    yield* store.append(entries)
    const slice = yield* store.list(customer, {}, { limit: 10 })
    expect(slice.hasMore).toBe(false)
    expect(slice.items).toEqual(newestFirst(entries))
    yield* store.append([])
    expect((yield* store.list(customer, {}, { limit: 10 })).items).toHaveLength(3)
  }),

  "lists are scoped by customer number": Effect.gen(function* () {
    const store = yield* ActivityStore
    const mine = freshCustomer()
    const theirs = freshCustomer()
    yield* store.append([entry(mine, T0), entry(theirs, T0 + 1), entry(theirs, T0 + 2)])
    const slice = yield* store.list(mine, {}, { limit: 10 })
    expect(slice.items.map((e) => e.customerNo)).toEqual([mine])
    // A cursor taken from the other account's list only positions within the caller's own.
    const other = yield* store.list(theirs, {}, { limit: 1 })
    const last = other.items[0]!
    const after = yield* store.list(mine, {}, { limit: 10, startingAfter: [last.at, last.id] })
    expect(after.items.map((e) => e.customerNo)).toEqual([mine])
    expect(Option.isNone(yield* store.lastUsed(mine, "test"))).toBe(true)
    expect(yield* store.lastUsed(theirs, "live")).toEqual(Option.some(T0 + 2))
  }),

  "keyset pages visit every entry once, in order, ties on the time included": Effect.gen(function* () {
    const store = yield* ActivityStore
    const customer = freshCustomer()
    // 23 entries over 6 distinct times: several pages split a run of equal times.
    const entries = Array.from({ length: 23 }, (_, i) => entry(customer, T0 + Math.floor(i / 4)))
    yield* store.append(entries)
    for (const limit of [1, 3, 4, 5, 23, 100]) {
      expect(yield* all(customer, {}, limit)).toEqual(newestFirst(entries))
    }
    const first = yield* store.list(customer, {}, { limit: 23 })
    expect(first.hasMore).toBe(false)
    const short = yield* store.list(customer, {}, { limit: 22 })
    expect(short.hasMore).toBe(true)
  }),

  "filters: key mode, one status, a status class": Effect.gen(function* () {
    const customer = freshCustomer()
    const store = yield* ActivityStore
    const statuses = [200, 201, 204, 299, 300, 400, 401, 403, 404, 429, 499, 500, 503, 599]
    const entries = statuses.flatMap((status, i) => [
      entry(customer, T0 + i, { status, keyMode: "live" }),
      entry(customer, T0 + i, { status, keyMode: "test" }),
      entry(customer, T0 + i, { status, keyMode: null })
    ])
    yield* store.append(entries)
    const filters: ReadonlyArray<Activity.ActivityFilter> = [
      {},
      { mode: "live" },
      { mode: "test" },
      { status: 429 },
      { status: "2xx" },
      { status: "4xx" },
      { status: "5xx" },
      { mode: "test", status: "4xx" },
      { mode: "live", status: 500 },
      { status: 302 }
    ]
    for (const filter of filters) {
      const query = {
        ...(filter.mode === undefined ? {} : { mode: filter.mode }),
        ...(filter.status === undefined ? {} : { status: Activity.statusRange(filter.status) })
      }
      const expected = newestFirst(entries.filter((e) => Activity.matches(e, filter)))
      expect(yield* all(customer, query, 7)).toEqual(expected)
    }
  }),

  "lastUsed is the latest call per key mode, none for an unused mode": Effect.gen(function* () {
    const store = yield* ActivityStore
    const customer = freshCustomer()
    expect(Option.isNone(yield* store.lastUsed(customer, "live"))).toBe(true)
    yield* store.append([
      entry(customer, T0 + 5, { keyMode: "live", status: 429 }),
      entry(customer, T0 + 9, { keyMode: "live" }),
      entry(customer, T0 + 7, { keyMode: "live" }),
      entry(customer, T0 + 50, { keyMode: null })
    ])
    expect(yield* store.lastUsed(customer, "live")).toEqual(Option.some(T0 + 9))
    expect(Option.isNone(yield* store.lastUsed(customer, "test"))).toBe(true)
    yield* store.append([entry(customer, T0 + 8, { keyMode: "test" })])
    expect(yield* store.lastUsed(customer, "test")).toEqual(Option.some(T0 + 8))
  }),

  "a batch appended in a failed transaction is not kept": Effect.gen(function* () {
    const store = yield* ActivityStore
    const tx = yield* Transactor
    const customer = freshCustomer()
    const failed = yield* Effect.either(
      tx.withTransaction(Effect.zipRight(store.append([entry(customer, T0), entry(customer, T0 + 1)]), new Boom()))
    )
    expect(Either.isLeft(failed)).toBe(true)
    expect((yield* store.list(customer, {}, { limit: 10 })).items).toEqual([])
    yield* tx.withTransaction(store.append([entry(customer, T0 + 2)]))
    expect((yield* store.list(customer, {}, { limit: 10 })).items).toHaveLength(1)
  }),

  "a batch of 1500 entries is written whole": Effect.gen(function* () {
    const store = yield* ActivityStore
    const customer = freshCustomer()
    const entries = Array.from({ length: 1500 }, (_, i) =>
      entry(customer, T0 + i, { keyMode: i % 2 === 0 ? "live" : "test" })
    )
    yield* store.append(entries)
    const seen = yield* all(customer, {}, 100)
    expect(seen).toHaveLength(1500)
    expect(seen[0]).toEqual(entries[1499])
    expect(yield* store.lastUsed(customer, "live")).toEqual(Option.some(T0 + 1498))
  }),

  "deleteBefore deletes older entries only, at most limit per call": Effect.gen(function* () {
    const store = yield* ActivityStore
    const customer = freshCustomer()
    // Long before T0, so entries of other cases (on a shared store) are not in the way.
    const base = T0 - 10 * 365 * 86_400_000
    const old = Array.from({ length: 7 }, (_, i) => entry(customer, base + i))
    const kept = [entry(customer, base + 100), entry(customer, base + 101)]
    yield* store.append([...old, ...kept])
    const cutoff = base + 100
    expect(yield* store.deleteBefore(cutoff, 3)).toBe(3)
    let total = 3
    for (let round = 0; round < 10; round++) {
      const n = yield* store.deleteBefore(cutoff, 3)
      expect(n).toBeLessThanOrEqual(3)
      total += n
      if (n === 0) break
    }
    expect(total).toBe(7)
    expect((yield* store.list(customer, {}, { limit: 10 })).items).toEqual(newestFirst(kept))
  })
}

/**
 * Registers the `ActivityStore` conformance suite as a `describe(name)` block. `makeLayer` is
 * called once per case and provides the store and the `Transactor` of the same database.
 */
export const activityStoreContract = (
  name: string,
  makeLayer: () => Layer.Layer<ActivityStore | Transactor, unknown>,
  options: { readonly skip?: ReadonlyArray<SkippedActivityStoreCase> } = {}
): void => {
  registerCases(name, cases, body, makeLayer, skipReasons("activityStoreContract", name, cases, options.skip))
}
