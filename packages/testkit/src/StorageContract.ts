/**
 * @module StorageContract
 *
 * The conformance suite every storage adapter runs: `ShipmentStore`, `AccountStore`,
 * `EventOutbox` and `Transactor` together, because their promises are joint (an event appended
 * in a rolled-back transaction must vanish with the shipment it describes).
 *
 * Each case builds a fresh layer from `makeLayer`, so cases never see each other's rows and an
 * adapter may hand out one database per case; the fixtures also use fresh keys, so a
 * `makeLayer` that returns a shared database works too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  AccountStore,
  type Account,
  type Event,
  EventOutbox,
  type IpBlock,
  IpBlocklist,
  type Shipment,
  ShipmentStore,
  Transactor
} from "@waybill/core"
import * as Fixtures from "./Fixtures.js"
import { skipReasons } from "./internal/contract.js"
import { checkProperty, listSample, newestFirst, pageThrough } from "./internal/paging.js"

/** The services a storage adapter provides and this suite exercises. */
export type StorageServices = ShipmentStore | AccountStore | EventOutbox | Transactor | IpBlocklist

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "shipment insert/find roundtrip",
  "shipment text fields roundtrip (property)",
  "duplicate track_no -> DuplicateKey",
  "find unknown track_no -> none",
  "update happy path bumps version and stop statuses",
  "update with stale version -> VersionConflict, nothing changed",
  "concurrent updates from one version: exactly one wins",
  "events get sequence 1,2,3 per shipment independently",
  "listByShipment returns events in sequence order",
  "transaction rolls back on failure",
  "transaction rolls back on defect",
  "transaction rolls back on interruption",
  "nested transaction joins the outer one",
  "concurrent transactions: every one answered is committed",
  "concurrent transactions: a failing one rolls back alone",
  "concurrent transactions: a unique violation fails only its own",
  "concurrent transactions: nested calls join their own outer transaction",
  "accounts insert/find/update",
  "duplicate customer_no -> DuplicateKey",
  "putKey replaces the slot",
  "blank key slots never collide and are never found by hash",
  "duplicate hash across customers -> DuplicateKey",
  "listKeys",
  "link/unlink/linkedChildren are idempotent",
  "ip blocks: put/find/replace/remove and listActive",
  "ip blocks page newest first, each once, only those in force (property)",
  "findKeyWithAccount returns the key and its account in one lookup",
  "findSlotWithAccount returns the key of a slot and its account in one lookup",
  "append honours a known sequence and rejects a taken one",
  "book stores the shipment with its booked event",
  "book with a taken track_no -> DuplicateKey, nothing of it stored",
  "book joins an open transaction: rolled back with it, and a taken number leaves it usable",
  "concurrent books: every one answered is stored"
] as const

/** The name of one case of the suite. */
export type ContractCase = (typeof cases)[number]

/** A case an adapter cannot pass yet, with the reason shown in the test report. */
export interface SkippedCase {
  readonly case: ContractCase
  readonly reason: string
}

/** Options of {@link storageContract}. */
export interface StorageContractOptions {
  /** Cases to report as skipped. Each needs a non-empty reason; unknown names are rejected. */
  readonly skip?: ReadonlyArray<SkippedCase>
}

const stores = Effect.all({
  shipments: ShipmentStore,
  accounts: AccountStore,
  outbox: EventOutbox,
  tx: Transactor,
  ipBlocks: IpBlocklist
})

const some = <A>(o: Option.Option<A>): A => {
  expect(Option.isSome(o), "expected Option.some").toBe(true)
  return Option.getOrThrow(o)
}

const byMode = (keys: ReadonlyArray<Account.ApiKeyRecord>) => [...keys].sort((a, b) => a.mode.localeCompare(b.mode))
const sorted = (xs: ReadonlyArray<string>) => [...xs].sort()

const eventFor = (s: Shipment.ShipmentRecord, overrides: Partial<Omit<Event.DomainEvent, "sequence">> = {}) =>
  Fixtures.event({ trackNo: s.trackNo, customerNo: s.customerNo, livemode: s.livemode, ...overrides })

/** Both shipment stores agree the shipment and its events are gone. */
const expectAbsent = (s: Shipment.ShipmentRecord) =>
  Effect.gen(function* () {
    const { outbox, shipments } = yield* stores
    expect(Option.isNone(yield* shipments.findByTrackNo(s.trackNo))).toBe(true)
    expect(yield* outbox.listByShipment(s.trackNo)).toEqual([])
  })

/** Text that PostgreSQL `text` and SQLite TEXT both store: any Unicode except NUL. */
const storableText = fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replaceAll("\u0000", ""))

const body: { readonly [K in ContractCase]: Effect.Effect<void, unknown, StorageServices> } = {
  "shipment insert/find roundtrip": Effect.gen(function* () {
    const { shipments } = yield* stores
    const plain = Fixtures.shipment()
    const varied = Fixtures.shipment({
      livemode: false,
      state: "assigned",
      version: 7,
      driverId: "drv_Ü1",
      signatureRequired: true,
      liftgateRequired: true,
      weightLb: 0.1 + 0.2,
      charge: { transport: 0, weight: 0, stops: 0, fuel: 0, extras: 1e-2, discount: -0.01, total: 99_999.99 },
      pieceDetails: []
    })
    yield* shipments.insert(plain)
    yield* shipments.insert(varied)
    expect(some(yield* shipments.findByTrackNo(plain.trackNo))).toEqual(plain)
    expect(some(yield* shipments.findByTrackNo(varied.trackNo))).toEqual(varied)
  }),

  // Filled in by the property test below; kept here so the case list stays complete.
  "shipment text fields roundtrip (property)": Effect.void,

  "duplicate track_no -> DuplicateKey": Effect.gen(function* () {
    const { shipments } = yield* stores
    const first = Fixtures.shipment()
    yield* shipments.insert(first)
    const error = yield* Effect.flip(shipments.insert(Fixtures.shipment({ trackNo: first.trackNo, contact: "other" })))
    expect(error._tag).toBe("DuplicateKey")
    expect(error).toMatchObject({ _tag: "DuplicateKey", what: "track_no" })
    expect(some(yield* shipments.findByTrackNo(first.trackNo))).toEqual(first)
  }),

  "find unknown track_no -> none": Effect.gen(function* () {
    const { shipments } = yield* stores
    yield* shipments.insert(Fixtures.shipment())
    expect(Option.isNone(yield* shipments.findByTrackNo(Fixtures.trackNo()))).toBe(true)
  }),

  "update happy path bumps version and stop statuses": Effect.gen(function* () {
    const { shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)

    const first = yield* shipments.update({
      trackNo: s.trackNo,
      expectedVersion: s.version,
      state: "picked_up",
      driverId: "drv_42",
      stops: [{ seq: 0, status: "completed" }],
      updatedAt: s.updatedAt + 60_000
    })
    const expectedFirst: Shipment.ShipmentRecord = {
      ...s,
      state: "picked_up",
      driverId: "drv_42",
      version: s.version + 1,
      updatedAt: s.updatedAt + 60_000,
      stops: s.stops.map((st) => (st.seq === 0 ? { ...st, status: "completed" } : st))
    }
    expect(first).toEqual(expectedFirst)
    expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(expectedFirst)

    const second = yield* shipments.update({
      trackNo: s.trackNo,
      expectedVersion: first.version,
      state: "delivered",
      driverId: null,
      stops: [
        { seq: 1, status: "skipped" },
        { seq: 2, status: "completed" }
      ],
      updatedAt: first.updatedAt + 60_000
    })
    const expectedSecond: Shipment.ShipmentRecord = {
      ...expectedFirst,
      state: "delivered",
      driverId: null,
      version: first.version + 1,
      updatedAt: first.updatedAt + 60_000,
      stops: expectedFirst.stops.map((st) =>
        st.seq === 1 ? { ...st, status: "skipped" } : st.seq === 2 ? { ...st, status: "completed" } : st
      )
    }
    expect(second).toEqual(expectedSecond)
    expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(expectedSecond)
  }),

  "update with stale version -> VersionConflict, nothing changed": Effect.gen(function* () {
    const { shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const current = yield* shipments.update({
      trackNo: s.trackNo,
      expectedVersion: s.version,
      state: "assigned",
      driverId: "drv_1",
      stops: [],
      updatedAt: s.updatedAt + 1
    })
    const error = yield* Effect.flip(
      shipments.update({
        trackNo: s.trackNo,
        expectedVersion: s.version,
        state: "canceled",
        driverId: null,
        stops: [{ seq: 0, status: "skipped" }],
        updatedAt: s.updatedAt + 2
      })
    )
    expect(error).toMatchObject({ _tag: "VersionConflict", trackNo: s.trackNo })
    expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(current)
  }),

  "concurrent updates from one version: exactly one wins": Effect.gen(function* () {
    const { shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const change = (state: Shipment.ShipmentState, driverId: string) =>
      shipments.update({
        trackNo: s.trackNo,
        expectedVersion: s.version,
        state,
        driverId,
        stops: [{ seq: 0, status: "arrived" }],
        updatedAt: s.updatedAt + 1
      })
    const results = yield* Effect.all(
      [Effect.either(change("assigned", "drv_a")), Effect.either(change("canceled", "drv_b"))],
      {
        concurrency: "unbounded"
      }
    )
    const winners = results.filter(Either.isRight).map((r) => r.right)
    const losers = results.filter(Either.isLeft).map((r) => r.left)
    expect(winners).toHaveLength(1)
    expect(losers).toHaveLength(1)
    expect(losers[0]).toMatchObject({ _tag: "VersionConflict", trackNo: s.trackNo })
    const stored = some(yield* shipments.findByTrackNo(s.trackNo))
    expect(stored).toEqual(winners[0])
    expect(stored.version).toBe(s.version + 1)
  }),

  "events get sequence 1,2,3 per shipment independently": Effect.gen(function* () {
    const { outbox } = yield* stores
    const a = Fixtures.shipment()
    const b = Fixtures.shipment()
    const order = [a, b, a, a, b]
    const appended: Array<Event.DomainEvent> = []
    for (const s of order) appended.push(yield* outbox.append(eventFor(s)))
    expect(appended.map((e) => [e.trackNo, e.sequence])).toEqual([
      [a.trackNo, 1],
      [b.trackNo, 1],
      [a.trackNo, 2],
      [a.trackNo, 3],
      [b.trackNo, 2]
    ])
  }),

  "listByShipment returns events in sequence order": Effect.gen(function* () {
    const { outbox } = yield* stores
    const a = Fixtures.shipment()
    const b = Fixtures.shipment()
    // Occurrence times run backwards so an adapter ordering by time (or id) would be caught.
    const first = yield* outbox.append(
      eventFor(a, { type: "shipment.booked", occurredAt: Fixtures.baseTime + 3000, id: "evt_c" + Fixtures.trackNo() })
    )
    yield* outbox.append(eventFor(b))
    const second = yield* outbox.append(
      eventFor(a, { type: "shipment.assigned", occurredAt: Fixtures.baseTime + 2000, id: "evt_b" + Fixtures.trackNo() })
    )
    const third = yield* outbox.append(
      eventFor(a, {
        type: "shipment.picked_up",
        occurredAt: Fixtures.baseTime + 1000,
        id: "evt_a" + Fixtures.trackNo()
      })
    )
    const listed = yield* outbox.listByShipment(a.trackNo)
    expect(listed).toEqual([first, second, third])
    expect(listed.map((e) => e.sequence)).toEqual([1, 2, 3])
    expect(yield* outbox.listByShipment(Fixtures.trackNo())).toEqual([])
  }),

  "transaction rolls back on failure": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const s = Fixtures.shipment()
    const exit = yield* Effect.exit(
      tx.withTransaction(
        Effect.gen(function* () {
          yield* shipments.insert(s)
          yield* outbox.append(eventFor(s))
          // Reads inside the transaction see its own writes.
          expect(Option.isSome(yield* shipments.findByTrackNo(s.trackNo))).toBe(true)
          return yield* Effect.fail("boom" as const)
        })
      )
    )
    expect(exit).toStrictEqual(Exit.fail("boom"))
    yield* expectAbsent(s)
  }),

  "transaction rolls back on defect": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const s = Fixtures.shipment()
    const exit = yield* Effect.exit(
      tx.withTransaction(
        Effect.gen(function* () {
          yield* shipments.insert(s)
          yield* outbox.append(eventFor(s))
          return yield* Effect.die(new Error("kaboom"))
        })
      )
    )
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    yield* expectAbsent(s)
  }),

  "transaction rolls back on interruption": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const s = Fixtures.shipment()
    const written = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(
      tx.withTransaction(
        Effect.gen(function* () {
          yield* shipments.insert(s)
          yield* outbox.append(eventFor(s))
          yield* Deferred.succeed(written, undefined)
          return yield* Effect.never
        })
      )
    )
    yield* Deferred.await(written)
    const exit = yield* Fiber.interrupt(fiber)
    expect(Exit.isInterrupted(exit)).toBe(true)
    yield* expectAbsent(s)
  }),

  "nested transaction joins the outer one": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    // The inner transaction completes, then the outer fails: the inner's writes go too.
    const rolledBack = Fixtures.shipment()
    const exit = yield* Effect.exit(
      tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.withTransaction(shipments.insert(rolledBack))
          yield* tx.withTransaction(outbox.append(eventFor(rolledBack)))
          return yield* Effect.fail("outer" as const)
        })
      )
    )
    expect(exit).toStrictEqual(Exit.fail("outer"))
    yield* expectAbsent(rolledBack)

    // Both levels succeed: everything is there.
    const kept = Fixtures.shipment()
    yield* tx.withTransaction(
      Effect.gen(function* () {
        yield* tx.withTransaction(shipments.insert(kept))
        yield* tx.withTransaction(outbox.append(eventFor(kept)))
      })
    )
    expect(some(yield* shipments.findByTrackNo(kept.trackNo))).toEqual(kept)
    expect((yield* outbox.listByShipment(kept.trackNo)).map((e) => e.sequence)).toEqual([1])
  }),

  // An adapter may commit concurrent transactions together (SQLite's engine batches them, each
  // under its own savepoint): whatever it does, each caller sees its own transaction's outcome
  // and nothing else's.
  "concurrent transactions: every one answered is committed": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const all = Array.from({ length: 24 }, () => Fixtures.shipment())
    const answered = yield* Effect.all(
      all.map((s) =>
        tx
          .withTransaction(
            Effect.gen(function* () {
              yield* shipments.insert(s)
              yield* Effect.yieldNow() // let the others start meanwhile
              return yield* outbox.append(eventFor(s))
            })
          )
          // As soon as this one is answered (the others may still run), its writes are there.
          .pipe(
            Effect.tap(() =>
              Effect.flatMap(shipments.findByTrackNo(s.trackNo), (found) => Effect.sync(() => some(found)))
            )
          )
      ),
      { concurrency: "unbounded" }
    )
    for (const [i, s] of all.entries()) {
      expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
      expect(yield* outbox.listByShipment(s.trackNo)).toEqual([answered[i]])
    }
  }),

  "concurrent transactions: a failing one rolls back alone": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const all = Array.from({ length: 12 }, () => Fixtures.shipment())
    const outcome = (i: number) => (i % 4 === 1 ? "fail" : i % 4 === 3 ? "die" : "commit")
    const exits = yield* Effect.all(
      all.map((s, i) =>
        Effect.exit(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* shipments.insert(s)
              yield* Effect.yieldNow()
              yield* outbox.append(eventFor(s))
              if (outcome(i) === "fail") return yield* Effect.fail(`boom ${i}`)
              if (outcome(i) === "die") return yield* Effect.die(new Error(`kaboom ${i}`))
              return i
            })
          )
        )
      ),
      { concurrency: "unbounded" }
    )
    for (const [i, s] of all.entries()) {
      const exit = exits[i]!
      if (outcome(i) === "commit") {
        expect(exit).toStrictEqual(Exit.succeed(i))
        expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
        expect((yield* outbox.listByShipment(s.trackNo)).map((e) => e.sequence)).toEqual([1])
      } else {
        if (outcome(i) === "fail") expect(exit).toStrictEqual(Exit.fail(`boom ${i}`))
        else expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        yield* expectAbsent(s)
      }
    }
  }),

  "concurrent transactions: a unique violation fails only its own": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const taken = Fixtures.shipment()
    yield* shipments.insert(taken)
    const others = Array.from({ length: 8 }, () => Fixtures.shipment())
    const loser = Fixtures.shipment()
    const results = yield* Effect.all(
      [
        Effect.either(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* shipments.insert(loser)
              yield* Effect.yieldNow()
              // The second write of this transaction hits a taken tracking number.
              yield* shipments.insert({ ...Fixtures.shipment(), trackNo: taken.trackNo })
            })
          )
        ),
        ...others.map((s) =>
          Effect.either(
            tx.withTransaction(
              Effect.gen(function* () {
                yield* shipments.insert(s)
                yield* Effect.yieldNow()
                yield* outbox.append(eventFor(s))
              })
            )
          )
        )
      ],
      { concurrency: "unbounded" }
    )
    expect(Either.isLeft(results[0]!) && results[0].left).toMatchObject({ _tag: "DuplicateKey", what: "track_no" })
    expect(results.slice(1).every(Either.isRight)).toBe(true)
    yield* expectAbsent(loser)
    expect(some(yield* shipments.findByTrackNo(taken.trackNo))).toEqual(taken)
    for (const s of others) {
      expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
      expect((yield* outbox.listByShipment(s.trackNo)).map((e) => e.sequence)).toEqual([1])
    }
  }),

  "concurrent transactions: nested calls join their own outer transaction": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const all = Array.from({ length: 10 }, () => Fixtures.shipment())
    const exits = yield* Effect.all(
      all.map((s, i) =>
        Effect.exit(
          tx.withTransaction(
            Effect.gen(function* () {
              // The inner transactions complete; the outer decides for them.
              yield* tx.withTransaction(shipments.insert(s))
              yield* Effect.yieldNow()
              yield* tx.withTransaction(outbox.append(eventFor(s)))
              if (i % 2 === 1) return yield* Effect.fail(`outer ${i}`)
            })
          )
        )
      ),
      { concurrency: "unbounded" }
    )
    for (const [i, s] of all.entries()) {
      if (i % 2 === 1) {
        expect(exits[i]).toStrictEqual(Exit.fail(`outer ${i}`))
        yield* expectAbsent(s)
      } else {
        expect(Exit.isSuccess(exits[i]!)).toBe(true)
        expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
        expect((yield* outbox.listByShipment(s.trackNo)).map((e) => e.sequence)).toEqual([1])
      }
    }
  }),

  "accounts insert/find/update": Effect.gen(function* () {
    const { accounts } = yield* stores
    const a = Fixtures.account()
    yield* accounts.insertAccount(a)
    expect(some(yield* accounts.findAccount(a.customerNo))).toEqual(a)

    const changed: Account.AccountRecord = {
      ...a,
      name: "Renamed — ✓",
      cancelMode: "provider",
      rateCard: null,
      ipAllowlist: []
    }
    yield* accounts.updateAccount(changed)
    expect(some(yield* accounts.findAccount(a.customerNo))).toEqual(changed)

    const back: Account.AccountRecord = { ...changed, rateCard: { floor: 9.99 }, ipAllowlist: ["192.0.2.0/24"] }
    yield* accounts.updateAccount(back)
    expect(some(yield* accounts.findAccount(a.customerNo))).toEqual(back)

    expect(Option.isNone(yield* accounts.findAccount(Fixtures.customerNo()))).toBe(true)
  }),

  "duplicate customer_no -> DuplicateKey": Effect.gen(function* () {
    const { accounts } = yield* stores
    const a = Fixtures.account()
    yield* accounts.insertAccount(a)
    const error = yield* Effect.flip(
      accounts.insertAccount(Fixtures.account({ customerNo: a.customerNo, name: "Impostor" }))
    )
    expect(error).toMatchObject({ _tag: "DuplicateKey", what: "customer_no" })
    expect(some(yield* accounts.findAccount(a.customerNo))).toEqual(a)
  }),

  "putKey replaces the slot": Effect.gen(function* () {
    const { accounts } = yield* stores
    const a = Fixtures.account()
    yield* accounts.insertAccount(a)
    const old = Fixtures.apiKey({ customerNo: a.customerNo, mode: "live" })
    yield* accounts.putKey(old)
    expect(some(yield* accounts.findKey(a.customerNo, "live"))).toEqual(old)
    expect(some(yield* accounts.findKeyByHash(old.hash))).toEqual(old)

    const rotated = Fixtures.apiKey({
      customerNo: a.customerNo,
      mode: "live",
      generation: 2,
      hint: "wb_live_XyZ9",
      updatedAt: old.updatedAt + 1
    })
    yield* accounts.putKey(rotated)
    expect(some(yield* accounts.findKey(a.customerNo, "live"))).toEqual(rotated)
    expect(some(yield* accounts.findKeyByHash(rotated.hash))).toEqual(rotated)
    expect(Option.isNone(yield* accounts.findKeyByHash(old.hash))).toBe(true)
    expect(yield* accounts.listKeys(a.customerNo)).toEqual([rotated])

    // Same hash, new status: an in-place status change (disable) is a put too.
    const disabled: Account.ApiKeyRecord = { ...rotated, status: "disabled", generation: 3 }
    yield* accounts.putKey(disabled)
    expect(some(yield* accounts.findKeyByHash(rotated.hash))).toEqual(disabled)
    expect(Option.isNone(yield* accounts.findKey(a.customerNo, "test"))).toBe(true)
  }),

  "blank key slots never collide and are never found by hash": Effect.gen(function* () {
    const { accounts } = yield* stores
    const one = Fixtures.apiKey({ mode: "test", status: "blank", hash: "" })
    const two = Fixtures.apiKey({ mode: "test", status: "blank", hash: "" })
    yield* accounts.putKey(one)
    yield* accounts.putKey(two)
    expect(some(yield* accounts.findKey(one.customerNo, "test"))).toEqual(one)
    expect(some(yield* accounts.findKey(two.customerNo, "test"))).toEqual(two)
    expect(Option.isNone(yield* accounts.findKeyByHash(""))).toBe(true)
  }),

  "duplicate hash across customers -> DuplicateKey": Effect.gen(function* () {
    const { accounts } = yield* stores
    const taken = Fixtures.apiKey()
    yield* accounts.putKey(taken)
    const other = Fixtures.apiKey({ hash: taken.hash })
    const error = yield* Effect.flip(accounts.putKey(other))
    expect(error).toMatchObject({ _tag: "DuplicateKey", what: "key" })
    expect(Option.isNone(yield* accounts.findKey(other.customerNo, "live"))).toBe(true)
    expect(some(yield* accounts.findKeyByHash(taken.hash))).toEqual(taken)

    // The other slot of the same customer may not reuse it either.
    const sameOwner = Fixtures.apiKey({ customerNo: taken.customerNo, mode: "test", hash: taken.hash })
    expect(yield* Effect.flip(accounts.putKey(sameOwner))).toMatchObject({ _tag: "DuplicateKey", what: "key" })
  }),

  listKeys: Effect.gen(function* () {
    const { accounts } = yield* stores
    const owner = Fixtures.customerNo()
    const live = Fixtures.apiKey({ customerNo: owner, mode: "live" })
    const test = Fixtures.apiKey({ customerNo: owner, mode: "test", status: "disabled", generation: 4 })
    const stranger = Fixtures.apiKey()
    yield* accounts.putKey(test)
    yield* accounts.putKey(stranger)
    yield* accounts.putKey(live)
    expect(byMode(yield* accounts.listKeys(owner))).toEqual([live, test])
    expect(yield* accounts.listKeys(stranger.customerNo)).toEqual([stranger])
    expect(yield* accounts.listKeys(Fixtures.customerNo())).toEqual([])
  }),

  "link/unlink/linkedChildren are idempotent": Effect.gen(function* () {
    const { accounts } = yield* stores
    const parent = Fixtures.customerNo()
    const c1 = Fixtures.customerNo()
    const c2 = Fixtures.customerNo()
    yield* accounts.linkAccount(parent, c1)
    yield* accounts.linkAccount(parent, c1)
    yield* accounts.linkAccount(parent, c2)
    expect(sorted(yield* accounts.linkedChildren(parent))).toEqual(sorted([c1, c2]))
    yield* accounts.unlinkAccount(parent, c1)
    yield* accounts.unlinkAccount(parent, c1)
    yield* accounts.unlinkAccount(parent, Fixtures.customerNo())
    expect(yield* accounts.linkedChildren(parent)).toEqual([c2])
    // Links are directed.
    expect(yield* accounts.linkedChildren(c2)).toEqual([])
    yield* accounts.linkAccount(parent, c1)
    expect(sorted(yield* accounts.linkedChildren(parent))).toEqual(sorted([c1, c2]))
  }),

  "findKeyWithAccount returns the key and its account in one lookup": Effect.gen(function* () {
    const { accounts } = yield* stores
    const account = Fixtures.account({ rateCard: { discountPercent: 10 }, ipAllowlist: ["10.0.0.0/8"] })
    yield* accounts.insertAccount(account)
    const key = Fixtures.apiKey({ customerNo: account.customerNo })
    yield* accounts.putKey(key)
    expect(some(yield* accounts.findKeyWithAccount(key.hash))).toEqual({ key, account })
    expect(yield* accounts.findKeyWithAccount(Fixtures.keyHash())).toEqual(Option.none())
    expect(yield* accounts.findKeyWithAccount("")).toEqual(Option.none())
  }),

  "findSlotWithAccount returns the key of a slot and its account in one lookup": Effect.gen(function* () {
    const { accounts } = yield* stores
    const account = Fixtures.account({ rateCard: { discountPercent: 5 }, ipAllowlist: ["192.0.2.0/24"] })
    yield* accounts.insertAccount(account)
    const live = Fixtures.apiKey({ customerNo: account.customerNo, mode: "live" })
    yield* accounts.putKey(live)
    expect(some(yield* accounts.findSlotWithAccount(account.customerNo, "live"))).toEqual({ key: live, account })
    // An empty slot, and another customer's, are none.
    expect(yield* accounts.findSlotWithAccount(account.customerNo, "test")).toEqual(Option.none())
    expect(yield* accounts.findSlotWithAccount(Fixtures.customerNo(), "live")).toEqual(Option.none())
    // A blank (disabled and cleared) slot is still found: the caller reads its status.
    const blank = { ...live, status: "blank" as const, hash: "", generation: live.generation + 1 }
    yield* accounts.putKey(blank)
    expect(some(yield* accounts.findSlotWithAccount(account.customerNo, "live"))).toEqual({ key: blank, account })
  }),

  "append honours a known sequence and rejects a taken one": Effect.gen(function* () {
    const { outbox, shipments } = yield* stores
    const shipment = Fixtures.shipment()
    yield* shipments.insert(shipment)
    const first = yield* outbox.append({
      ...Fixtures.event({ trackNo: shipment.trackNo, customerNo: shipment.customerNo }),
      sequence: 1
    })
    expect(first.sequence).toBe(1)
    const next = yield* outbox.append(Fixtures.event({ trackNo: shipment.trackNo, customerNo: shipment.customerNo }))
    expect(next.sequence).toBe(2)
    const clash = yield* Effect.either(
      outbox.append({ ...Fixtures.event({ trackNo: shipment.trackNo, customerNo: shipment.customerNo }), sequence: 2 })
    )
    expect(clash._tag).toBe("Left")
    expect((yield* outbox.listByShipment(shipment.trackNo)).map((e) => e.sequence)).toEqual([1, 2])
  }),

  "book stores the shipment with its booked event": Effect.gen(function* () {
    const { outbox, shipments } = yield* stores
    const shipment = Fixtures.shipment()
    const booked = { ...eventFor(shipment), sequence: 1 }
    yield* shipments.book(shipment, booked)
    expect(some(yield* shipments.findByTrackNo(shipment.trackNo))).toEqual(shipment)
    expect(yield* outbox.listByShipment(shipment.trackNo)).toEqual([booked])
    // The next event of the shipment follows the booked one.
    const next = yield* outbox.append(eventFor(shipment, { type: "shipment.assigned" }))
    expect(next.sequence).toBe(2)
  }),

  "book with a taken track_no -> DuplicateKey, nothing of it stored": Effect.gen(function* () {
    const { outbox, shipments } = yield* stores
    const first = Fixtures.shipment()
    yield* shipments.book(first, { ...eventFor(first), sequence: 1 })
    const second = Fixtures.shipment({ trackNo: first.trackNo, contact: "Someone Else", pieceDetails: [] })
    const clash = yield* Effect.either(shipments.book(second, { ...eventFor(second), sequence: 1 }))
    expect(Either.isLeft(clash) && clash.left).toMatchObject({ _tag: "DuplicateKey", what: "track_no" })
    expect(some(yield* shipments.findByTrackNo(first.trackNo))).toEqual(first)
    expect((yield* outbox.listByShipment(first.trackNo)).length).toBe(1)
  }),

  "book joins an open transaction: rolled back with it, and a taken number leaves it usable": Effect.gen(function* () {
    const { outbox, shipments, tx } = yield* stores
    const taken = Fixtures.shipment()
    yield* shipments.book(taken, { ...eventFor(taken), sequence: 1 })
    // A booking that meets a taken number inside a transaction draws again in the same one
    // (an `Idempotency-Key` booking): the transaction must still work and commit.
    const fresh = Fixtures.shipment()
    yield* tx.withTransaction(
      Effect.gen(function* () {
        const retaken = Fixtures.shipment({ trackNo: taken.trackNo })
        const clash = yield* Effect.either(shipments.book(retaken, { ...eventFor(retaken), sequence: 1 }))
        expect(Either.isLeft(clash) && clash.left._tag).toBe("DuplicateKey")
        yield* shipments.book(fresh, { ...eventFor(fresh), sequence: 1 })
      })
    )
    expect(some(yield* shipments.findByTrackNo(fresh.trackNo))).toEqual(fresh)
    expect((yield* outbox.listByShipment(taken.trackNo)).length).toBe(1)
    // And a booking inside a transaction that fails goes with it.
    const lost = Fixtures.shipment()
    const failed = yield* Effect.exit(
      tx.withTransaction(Effect.zipRight(shipments.book(lost, { ...eventFor(lost), sequence: 1 }), Effect.fail("boom")))
    )
    expect(Exit.isFailure(failed)).toBe(true)
    yield* expectAbsent(lost)
  }),

  "concurrent books: every one answered is stored": Effect.gen(function* () {
    const { outbox, shipments } = yield* stores
    const all = Array.from({ length: 24 }, () => Fixtures.shipment())
    yield* Effect.forEach(all, (s) => shipments.book(s, { ...eventFor(s), sequence: 1 }), { concurrency: "unbounded" })
    for (const s of all) {
      expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
      expect((yield* outbox.listByShipment(s.trackNo)).map((e) => e.sequence)).toEqual([1])
    }
  }),

  "ip blocks: put/find/replace/remove and listActive": Effect.gen(function* () {
    const { ipBlocks } = yield* stores
    const t0 = Fixtures.baseTime
    expect(yield* ipBlocks.find("203.0.113.9")).toEqual(Option.none())
    const first = { ipKey: "203.0.113.9", until: t0 + 3_600_000, reason: "manual", createdAt: t0, strikes: 1 }
    yield* ipBlocks.put(first)
    expect(some(yield* ipBlocks.find("203.0.113.9"))).toEqual(first)
    const again = { ...first, until: t0 + 6 * 3_600_000, strikes: 2, reason: "repeat" }
    yield* ipBlocks.put(again)
    expect(some(yield* ipBlocks.find("203.0.113.9"))).toEqual(again)
    const v6 = { ipKey: "2001:db8:1:2::/64", until: t0 + 60_000, reason: "misses", createdAt: t0, strikes: 1 }
    const expired = { ipKey: "198.51.100.1", until: t0 - 1, reason: "old", createdAt: t0 - 10, strikes: 1 }
    yield* ipBlocks.put(v6)
    yield* ipBlocks.put(expired)
    // Newest first by (createdAt, ipKey): the two blocks of t0 by key, descending.
    expect((yield* ipBlocks.listActive(t0, { limit: 10 })).items.map((b) => b.ipKey)).toEqual([
      "203.0.113.9",
      "2001:db8:1:2::/64"
    ])
    expect(yield* ipBlocks.remove("203.0.113.9")).toBe(true)
    expect(yield* ipBlocks.remove("203.0.113.9")).toBe(false)
    expect(yield* ipBlocks.find("203.0.113.9")).toEqual(Option.none())
  }),

  "ip blocks page newest first, each once, only those in force (property)": Effect.flatMap(stores, ({ ipBlocks }) =>
    checkProperty(listSample, ({ limit, times }) =>
      Effect.gen(function* () {
        const now = Fixtures.baseTime
        // Fixed-width keys, so every collation orders them as code units do.
        const blocks = times.map((t, i) => ({
          ipKey: `192.0.2.${String(100 + i)}`,
          until: now + 1 + (i % 4 === 3 ? -2 : i),
          reason: "paging",
          createdAt: now - 10 + t,
          strikes: 1
        }))
        for (const b of blocks) yield* ipBlocks.put(b)
        const key = (b: IpBlock) => [b.createdAt, b.ipKey] as const
        const got = yield* pageThrough(limit, key, (request) => ipBlocks.listActive(now, request))
        expect(got).toEqual(
          newestFirst(
            blocks.filter((b) => b.until > now),
            key
          )
        )
        for (const b of blocks) yield* ipBlocks.remove(b.ipKey)
      })
    )
  )
}

/**
 * Registers the storage conformance suite as a `describe(name)` block.
 *
 * `makeLayer` is called once per case (and once for the property case), so it may create a fresh
 * database each time; it must provide all four ports over the same database. Skipped cases are
 * reported with their reason so a gap stays visible in every test run.
 */
export const storageContract = (
  name: string,
  makeLayer: () => Layer.Layer<StorageServices, unknown>,
  options: StorageContractOptions = {}
): void => {
  const skipped = skipReasons("storageContract", name, cases, options.skip)

  describe(name, () => {
    for (const c of cases) {
      const reason = skipped.get(c)
      if (reason !== undefined) {
        it.effect.skip(`${c} (skipped: ${reason})`, () => Effect.provide(body[c], makeLayer()))
      } else if (c === "shipment text fields roundtrip (property)") {
        // Every sample gets its own layer (so its own database when `makeLayer` makes one).
        it.effect.prop(
          c,
          { contact: storableText, note: storableText, description: storableText, data: storableText },
          ({ contact, data, description, note }) =>
            Effect.gen(function* () {
              const { outbox, shipments } = yield* stores
              const base = Fixtures.shipment({ contact, pickupInstructions: note, jsonstrn: data })
              const s: Shipment.ShipmentRecord = {
                ...base,
                stops: base.stops.map((st) => ({ ...st, note, name: contact })),
                pieceDetails: base.pieceDetails.map((p) => ({ ...p, description }))
              }
              yield* shipments.insert(s)
              expect(some(yield* shipments.findByTrackNo(s.trackNo))).toEqual(s)
              const appended = yield* outbox.append(eventFor(s, { data: { [contact]: data, list: [note] } }))
              expect(yield* outbox.listByShipment(s.trackNo)).toEqual([appended])
            }).pipe(Effect.provide(makeLayer())),
          { fastCheck: { numRuns: 25 } }
        )
      } else {
        it.effect(c, () => Effect.provide(body[c], makeLayer()))
      }
    }
  })
}
