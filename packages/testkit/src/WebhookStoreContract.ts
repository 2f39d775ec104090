/**
 * @module WebhookStoreContract
 *
 * The conformance suite of the `WebhookStore` port, run together with `EventOutbox` and
 * `Transactor` because their promises are joint: appending an event creates its deliveries in
 * the same transaction. The cases that matter most for safety: two dispatchers never hold the
 * same delivery, a lease that expires makes the delivery claimable again (crash recovery), and
 * a shipment's deliveries are claimable one at a time in `sequence` order.
 *
 * Times are passed explicitly (`now`), so no case waits.
 */
import { expect } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { EventOutbox, Transactor, type Webhook, WebhookStore } from "@waybill/core"
import * as Fixtures from "./Fixtures.js"
import { registerCases, skipReasons } from "./internal/contract.js"
import { checkProperty, compareKeys, listSample, newestFirst, pageThrough } from "./internal/paging.js"

/** The services this suite exercises. */
export type WebhookServices = WebhookStore | EventOutbox | Transactor

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "endpoint insert/find/update/list roundtrip",
  "endpoints page newest first, each once, only the account's (property)",
  "deliveries page newest first, each once, only the endpoint's (property)",
  "the delivery log pages newest first, each once, only the endpoint's (property)",
  "append fans out to enabled endpoints that selected the type, and only those",
  "fan-out rolls back with the event",
  "a claim leases a delivery until the lease expires",
  "two dispatchers never claim the same delivery",
  "a claim leaves out skipped endpoints and takes at most perEndpoint of each",
  "a shipment's deliveries are claimable one at a time in sequence order",
  "a delivery queued again goes before its shipment's later ones; a re-enabled endpoint resumes in order",
  "an event appended while its shipment's previous delivery is being recorded is claimable after both",
  "an endpoint enabled while its last send is being recorded resumes with the next delivery",
  "an endpoint saved as enabled while the dispatcher disables it keeps its backlog claimable",
  "complete records the outcome and the attempt log; a lost lease is reported",
  "a retry is not claimable before its time, a failed one never",
  "disabled endpoints are not claimed",
  "noteHealth disables an endpoint failing for too long",
  "enqueue, requeueEvent and recover queue deliveries again",
  "prune forgets finished deliveries and old log lines, never pending ones",
  "deleteEndpoint removes the endpoint, its subscriptions, deliveries and log",
  "releaseLeases makes the owner's pending deliveries claimable at once, and only those",
  "renewLeases moves the owner's leases on the given pending deliveries, and only those",
  "racing dispatchers send every delivery, no attempt twice, each shipment in order",
  "findEvent returns the stored event with its account, none for an unknown id"
] as const

/** The name of one case of the suite. */
export type WebhookStoreCase = (typeof cases)[number]

/** A case an adapter cannot pass yet, with the reason shown in the test report. */
export interface SkippedWebhookStoreCase {
  readonly case: WebhookStoreCase
  readonly reason: string
}

let counter = 0
const endpointId = () => `we_contract${Date.now().toString(36)}${(counter++).toString(36).padStart(6, "0")}`

const T = Fixtures.baseTime

/** An endpoint record with fresh ids. */
export const endpoint = (overrides: Partial<Webhook.EndpointRecord> = {}): Webhook.EndpointRecord => ({
  id: endpointId(),
  customerNo: Fixtures.customerNo(),
  url: "https://hooks.example.com/waybill",
  eventTypes: ["shipment.booked", "shipment.delivered"],
  secret: "sealed:v1:webhook-1:aaaa:bbbb",
  previousSecret: null,
  previousSecretUntil: null,
  enabled: true,
  disabledReason: null,
  failingSince: null,
  createdAt: T,
  updatedAt: T,
  ...overrides
})

const attempt = (c: Webhook.Claimed, at: number, status: number | null, ok: boolean): Webhook.AttemptRecord => ({
  endpointId: c.endpoint.id,
  eventId: c.event.id,
  attempt: c.delivery.attempts + 1,
  at,
  status,
  ok,
  durationMs: 12,
  response: ok ? "ok" : "nope"
})

const services = Effect.all({ store: WebhookStore, outbox: EventOutbox, transactor: Transactor })

/** Only the claims of the endpoints a case created (a shared database may hold others'). */
const mine = (claimed: ReadonlyArray<Webhook.Claimed>, ...endpoints: ReadonlyArray<Webhook.EndpointRecord>) =>
  claimed.filter((c) => endpoints.some((e) => e.id === c.endpoint.id))

const claimAll = (owner: string, now: number) =>
  Effect.flatMap(WebhookStore, (s) => s.claimDue({ owner, now, leaseMs: 60_000, limit: 1000 }))

/**
 * Two writers that cannot see each other's changes: `held` runs in a transaction kept open
 * until `write` has had 50 ms to start (and, where the database makes it, to wait on `held`),
 * then commits. Both results, once both are done.
 */
const beside = <A, B>(
  held: Effect.Effect<A, unknown, WebhookServices>,
  write: Effect.Effect<B, unknown, WebhookServices>
) =>
  Effect.gen(function* () {
    const { transactor } = yield* services
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const first = yield* Effect.fork(
      transactor.withTransaction(
        Effect.zipLeft(held, Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)))
      )
    )
    yield* Deferred.await(started)
    const second = yield* Effect.fork(write)
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    yield* Deferred.succeed(release, undefined)
    return [yield* Fiber.join(first), yield* Fiber.join(second)] as const
  })

const body: { readonly [K in WebhookStoreCase]: Effect.Effect<void, unknown, WebhookServices> } = {
  "endpoint insert/find/update/list roundtrip": Effect.gen(function* () {
    const { store } = yield* services
    const e = endpoint({ url: `https://hooks.example.com/${Fixtures.awkwardText.length}?q=ü` })
    yield* store.insertEndpoint(e)
    expect(yield* store.findEndpoint(e.id)).toEqual(Option.some(e))
    const changed = {
      ...e,
      eventTypes: ["shipment.canceled"] as const,
      previousSecret: e.secret,
      previousSecretUntil: T + 5,
      enabled: false,
      disabledReason: "operator",
      failingSince: T + 1,
      updatedAt: T + 9
    }
    expect(yield* store.updateEndpoint(changed)).toBe(true)
    expect(yield* store.findEndpoint(e.id)).toEqual(Option.some(changed))
    expect(yield* store.updateEndpoint({ ...changed, id: endpointId() })).toBe(false)
    const other = endpoint({ customerNo: e.customerNo, createdAt: T + 1 })
    yield* store.insertEndpoint(other)
    expect(yield* store.listEndpoints({ customerNo: e.customerNo }, { limit: 10 })).toEqual({
      items: [other, changed],
      hasMore: false
    })
    expect(yield* store.findEndpoint(endpointId())).toEqual(Option.none())
  }),

  "endpoints page newest first, each once, only the account's (property)": Effect.flatMap(services, ({ store }) =>
    checkProperty(listSample, ({ limit, times }) =>
      Effect.gen(function* () {
        const customerNo = Fixtures.customerNo()
        const mine = times.map((t) => endpoint({ customerNo, createdAt: T + t }))
        // Another account's endpoints at the same times, interleaved by id with the account's.
        const theirs = times.map((t) => endpoint({ createdAt: T + t }))
        for (const e of mine.flatMap((m, i) => [m, theirs[i]!])) yield* store.insertEndpoint(e)
        const key = (e: Webhook.EndpointRecord) => [e.createdAt, e.id] as const
        const list = (request: Parameters<typeof store.listEndpoints>[1]) =>
          store.listEndpoints({ customerNo }, request)
        expect((yield* pageThrough(limit, key, list)).map((e) => e.id)).toEqual(newestFirst(mine, key).map((e) => e.id))
        // Another account's item as the cursor is only a position: the account's items below it.
        for (const other of theirs) {
          const below = (yield* pageThrough(limit, key, list, key(other))).map((e) => e.id)
          const expected = newestFirst(mine, key).filter((e) => compareKeys(key(e), key(other)) < 0)
          expect(below).toEqual(expected.map((e) => e.id))
        }
        // Without a filter: every endpoint once, the account's and the other's among them.
        const all = yield* pageThrough(limit + 10, key, (request) => store.listEndpoints({}, request))
        expect(new Set(all.map((e) => e.id)).size).toBe(all.length)
        expect(all).toEqual(newestFirst(all, key))
        for (const e of [...mine, ...theirs]) expect(all.map((x) => x.id)).toContain(e.id)
      })
    )
  ),

  "deliveries page newest first, each once, only the endpoint's (property)": Effect.flatMap(
    services,
    ({ outbox, store }) =>
      checkProperty(listSample, ({ limit, times }) =>
        Effect.gen(function* () {
          // Selects no type the events have: deliveries come from enqueue, at the sampled times.
          const e = endpoint({ eventTypes: ["shipment.canceled"] })
          const other = endpoint({ customerNo: e.customerNo, eventTypes: ["shipment.canceled"] })
          yield* store.insertEndpoint(e)
          yield* store.insertEndpoint(other)
          for (const t of times) {
            const ev = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
            yield* store.enqueue(e.id, ev.id, T + t)
            yield* store.enqueue(other.id, ev.id, T + t)
          }
          const key = (d: Webhook.DeliveryRecord) => [d.createdAt, d.eventId] as const
          const read = (id: string) => pageThrough(limit, key, (request) => store.listDeliveries(id, request))
          const got = yield* read(e.id)
          expect(got.every((d) => d.endpointId === e.id)).toBe(true)
          expect(got).toHaveLength(times.length)
          expect(got).toEqual(newestFirst(got, key))
          expect(new Set(got.map((d) => d.eventId)).size).toBe(times.length)
          expect(got.map((d) => d.createdAt).sort()).toEqual(times.map((t) => T + t).sort())
          expect((yield* read(other.id)).map(key)).toEqual(got.map(key))
        })
      )
  ),

  "the delivery log pages newest first, each once, only the endpoint's (property)": Effect.flatMap(
    services,
    ({ store }) =>
      checkProperty(listSample, ({ limit, times }) =>
        Effect.gen(function* () {
          const e = endpoint()
          const other = endpoint({ customerNo: e.customerNo })
          yield* store.insertEndpoint(e)
          yield* store.insertEndpoint(other)
          // Lines of a few events, several attempts each, many at one time: the whole key breaks ties.
          const lines = times.map(
            (t, i): Webhook.AttemptRecord => ({
              endpointId: e.id,
              eventId: `evt_page_${String(i % 3).padStart(3, "0")}`,
              attempt: 1 + Math.floor(i / 3),
              at: T + t,
              status: 200,
              ok: true,
              durationMs: i,
              response: `line ${i}`
            })
          )
          // No delivery is leased by this owner: complete only logs the line.
          for (const line of lines) {
            yield* store.complete({ owner: "nobody", attempt: line, outcome: { _tag: "Delivered" } })
            yield* store.complete({
              owner: "nobody",
              attempt: { ...line, endpointId: other.id },
              outcome: { _tag: "Delivered" }
            })
          }
          const key = (a: Webhook.AttemptRecord) => [a.at, a.eventId, a.attempt] as const
          const got = yield* pageThrough(limit, key, (request) => store.listAttempts(e.id, request))
          expect(got).toEqual(newestFirst(lines, key))
        })
      )
  ),

  "append fans out to enabled endpoints that selected the type, and only those": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const customerNo = Fixtures.customerNo()
    const a = endpoint({ customerNo, eventTypes: ["shipment.booked"] })
    const b = endpoint({ customerNo, eventTypes: ["shipment.booked", "shipment.canceled"] })
    const notSelected = endpoint({ customerNo, eventTypes: ["shipment.canceled"] })
    const disabled = endpoint({ customerNo, enabled: false, disabledReason: "operator" })
    const otherAccount = endpoint({ eventTypes: ["shipment.booked"] })
    for (const e of [a, b, notSelected, disabled, otherAccount]) yield* store.insertEndpoint(e)
    const ev = yield* outbox.append(Fixtures.event({ customerNo, occurredAt: T }))
    const claimed = mine(yield* claimAll("d1", T), a, b, notSelected, disabled, otherAccount)
    expect(claimed.map((c) => c.endpoint.id).sort()).toEqual([a.id, b.id].sort())
    for (const c of claimed) {
      expect(c.event).toEqual({
        id: ev.id,
        type: ev.type,
        customerNo,
        trackNo: ev.trackNo,
        sequence: 1,
        livemode: ev.livemode,
        occurredAt: T,
        dataJson: JSON.stringify(ev.data)
      })
      expect(c.delivery).toMatchObject({ status: "pending", attempts: 0, trackNo: ev.trackNo, sequence: 1 })
      expect(c.delivery.leaseOwner).toBe("d1")
    }
  }),

  "fan-out rolls back with the event": Effect.gen(function* () {
    const { outbox, store, transactor } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    yield* Effect.either(
      transactor.withTransaction(
        Effect.zipRight(outbox.append(Fixtures.event({ customerNo: e.customerNo })), Effect.fail("abort"))
      )
    )
    expect(mine(yield* claimAll("d1", T + 1000), e)).toEqual([])
    expect((yield* store.listDeliveries(e.id, { limit: 10 })).items).toEqual([])
  }),

  "a claim leases a delivery until the lease expires": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const first = mine(yield* store.claimDue({ owner: "a", now: T, leaseMs: 1000, limit: 10 }), e)
    expect(first).toHaveLength(1)
    expect(mine(yield* store.claimDue({ owner: "b", now: T + 999, leaseMs: 1000, limit: 10 }), e)).toEqual([])
    // The holder crashed: once the lease runs out, another dispatcher sends it again.
    const again = mine(yield* store.claimDue({ owner: "b", now: T + 1000, leaseMs: 1000, limit: 10 }), e)
    expect(again.map((c) => [c.event.id, c.delivery.leaseOwner])).toEqual([[first[0]!.event.id, "b"]])
    // The first holder's late completion no longer counts.
    expect(
      yield* store.complete({
        owner: "a",
        attempt: attempt(first[0]!, T + 1001, 200, true),
        outcome: { _tag: "Delivered" }
      })
    ).toBe(false)
  }),

  "two dispatchers never claim the same delivery": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    for (let i = 0; i < 40; i++) yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    // Four dispatchers claim in interleaved rounds until nothing is left; each scan sees the
    // same candidates, so they keep racing for the same rows.
    const rounds = yield* Effect.all(
      ["a", "b", "c", "d"].map((owner) =>
        Effect.forEach(Array.from({ length: 8 }), () =>
          Effect.zipLeft(store.claimDue({ owner, now: T, leaseMs: 60_000, limit: 15 }), Effect.yieldNow())
        )
      ),
      { concurrency: "unbounded" }
    )
    const perOwner = rounds.map((r) => r.flat().flatMap((c) => (mine([c], e).length === 1 ? [c.event.id] : [])))
    const ids = perOwner.flat()
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.length).toBe(40)
  }),

  "a claim leaves out skipped endpoints and takes at most perEndpoint of each": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const customerNo = Fixtures.customerNo()
    const slow = endpoint({ customerNo })
    const fast = endpoint({ customerNo })
    yield* store.insertEndpoint(slow)
    yield* store.insertEndpoint(fast)
    // Every event (a shipment each) goes to both endpoints.
    for (let i = 0; i < 6; i++) yield* outbox.append(Fixtures.event({ customerNo }))
    const count = (claimed: ReadonlyArray<Webhook.Claimed>, e: Webhook.EndpointRecord) =>
      claimed.filter((c) => c.endpoint.id === e.id).length
    const capped = yield* store.claimDue({ owner: "a", now: T, leaseMs: 60_000, limit: 1000, perEndpoint: 2 })
    expect([count(capped, slow), count(capped, fast)]).toEqual([2, 2])
    const skipping = yield* store.claimDue({
      owner: "a",
      now: T,
      leaseMs: 60_000,
      limit: 1000,
      skipEndpoints: [slow.id]
    })
    expect([count(skipping, slow), count(skipping, fast)]).toEqual([0, 4])
    const rest = yield* claimAll("a", T)
    expect([count(rest, slow), count(rest, fast)]).toEqual([4, 0])
  }),

  "a shipment's deliveries are claimable one at a time in sequence order": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked", "shipment.delivered"] })
    yield* store.insertEndpoint(e)
    const trackNo = Fixtures.trackNo()
    const other = Fixtures.trackNo()
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo }))
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo, type: "shipment.delivered" }))
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo: other }))
    const first = mine(yield* claimAll("a", T), e)
    expect(first.map((c) => [c.event.trackNo, c.event.sequence]).sort()).toEqual(
      [
        [trackNo, 1],
        [other, 1]
      ].sort()
    )
    // A retry of sequence 1 still blocks sequence 2.
    const one = first.find((c) => c.event.trackNo === trackNo)!
    yield* store.complete({
      owner: "a",
      attempt: attempt(one, T, 500, false),
      outcome: { _tag: "Retry", nextAttemptAt: T + 5000 }
    })
    expect(mine(yield* claimAll("a", T + 1), e)).toEqual([])
    const retried = mine(yield* claimAll("a", T + 5000), e)
    expect(retried.map((c) => c.event.sequence)).toEqual([1])
    yield* store.complete({
      owner: "a",
      attempt: attempt(retried[0]!, T + 5000, 200, true),
      outcome: { _tag: "Delivered" }
    })
    const next = mine(yield* claimAll("a", T + 5001), e)
    expect(next.map((c) => [c.event.trackNo, c.event.sequence, c.event.type])).toEqual([
      [trackNo, 2, "shipment.delivered"]
    ])
  }),

  "a delivery queued again goes before its shipment's later ones; a re-enabled endpoint resumes in order": Effect.gen(
    function* () {
      const { outbox, store } = yield* services
      const e = endpoint({ eventTypes: ["shipment.booked", "shipment.delivered"] })
      yield* store.insertEndpoint(e)
      const trackNo = Fixtures.trackNo()
      const deliver = (c: Webhook.Claimed | undefined, owner: string, at: number) =>
        store.complete({ owner, attempt: attempt(c!, at, 200, true), outcome: { _tag: "Delivered" } })
      const first = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo }))
      yield* deliver(mine(yield* claimAll("a", T), e)[0], "a", T)
      const second = yield* outbox.append(
        Fixtures.event({ customerNo: e.customerNo, trackNo, type: "shipment.delivered" })
      )
      const third = yield* outbox.append(
        Fixtures.event({ customerNo: e.customerNo, trackNo, type: "shipment.delivered" })
      )
      // Sent again, the first event goes before the two still waiting.
      yield* store.requeueEvent(first.id, T + 1)
      const again = mine(yield* claimAll("b", T + 1), e)
      expect(again.map((c) => c.event.id)).toEqual([first.id])
      yield* deliver(again[0], "b", T + 1)
      const next = mine(yield* claimAll("c", T + 2), e)
      expect(next.map((c) => c.event.id)).toEqual([second.id])
      // Disabled while the second is out: its outcome leaves the third waiting for the endpoint.
      yield* store.updateEndpoint({ ...e, enabled: false, disabledReason: "gone" })
      yield* deliver(next[0], "c", T + 2)
      expect(mine(yield* claimAll("d", T + 3), e)).toEqual([])
      yield* store.updateEndpoint(e)
      expect(mine(yield* claimAll("d", T + 4), e).map((c) => c.event.id)).toEqual([third.id])
    }
  ),

  "an event appended while its shipment's previous delivery is being recorded is claimable after both": Effect.gen(
    function* () {
      // Two writers that cannot see each other's rows: the outcome makes the shipment's next
      // delivery claimable, the append decides whether its own delivery is first. Whatever the
      // database, the new delivery must not wait for a predecessor that is gone.
      const { outbox, store } = yield* services
      const e = endpoint({ eventTypes: ["shipment.booked", "shipment.delivered"] })
      yield* store.insertEndpoint(e)
      const trackNo = Fixtures.trackNo()
      yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo }))
      const [c1] = mine(yield* claimAll("a", T), e)
      const [, second] = yield* beside(
        store.complete({ owner: "a", attempt: attempt(c1!, T, 200, true), outcome: { _tag: "Delivered" } }),
        outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo, type: "shipment.delivered" }))
      )
      expect(mine(yield* claimAll("b", T + 1), e).map((c) => c.event.id)).toEqual([second.id])
    }
  ),

  "an endpoint enabled while its last send is being recorded resumes with the next delivery": Effect.gen(function* () {
    // Disabled while a send was out; enabled again while that send's outcome is being
    // recorded. Neither writer sees the other's change; the next delivery must not be left
    // waiting behind the finished one.
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked", "shipment.delivered"] })
    yield* store.insertEndpoint(e)
    const trackNo = Fixtures.trackNo()
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo }))
    const second = yield* outbox.append(
      Fixtures.event({ customerNo: e.customerNo, trackNo, type: "shipment.delivered" })
    )
    const [c1] = mine(yield* claimAll("a", T), e)
    yield* store.updateEndpoint({ ...e, enabled: false, disabledReason: "operator" })
    const [, enabled] = yield* beside(
      store.complete({ owner: "a", attempt: attempt(c1!, T, 200, true), outcome: { _tag: "Delivered" } }),
      store.updateEndpoint(e)
    )
    expect(enabled).toBe(true)
    expect(mine(yield* claimAll("b", T + 1), e).map((c) => c.event.id)).toEqual([second.id])
  }),

  "an endpoint saved as enabled while the dispatcher disables it keeps its backlog claimable": Effect.gen(function* () {
    // An operator saves the endpoint (a new URL, enabled) while a dispatcher's health note is
    // disabling it for 5 days of failures: the save wins, and so must the backlog.
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    const queued = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [disabled, saved] = yield* beside(
      store.noteHealth({ endpointId: e.id, ok: false, now: T, disableAfterMs: 0 }),
      store.updateEndpoint({ ...e, url: "https://hooks.example.com/fixed" })
    )
    expect([disabled, saved]).toEqual([true, true])
    expect(Option.map(yield* store.findEndpoint(e.id), (x) => x.enabled)).toEqual(Option.some(true))
    expect(mine(yield* claimAll("a", T + 1), e).map((c) => c.event.id)).toEqual([queued.id])
  }),

  "complete records the outcome and the attempt log; a lost lease is reported": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [c] = mine(yield* claimAll("a", T), e)
    const log = attempt(c!, T + 10, 204, true)
    expect(yield* store.complete({ owner: "a", attempt: log, outcome: { _tag: "Delivered" } })).toBe(true)
    expect((yield* store.listAttempts(e.id, { limit: 10 })).items).toEqual([log])
    const [d] = (yield* store.listDeliveries(e.id, { limit: 10 })).items
    expect(d).toMatchObject({ status: "delivered", attempts: 1, leaseOwner: null, lastStatus: 204 })
    expect(mine(yield* claimAll("b", T + 10_000_000), e)).toEqual([])
    expect(yield* store.complete({ owner: "b", attempt: { ...log, attempt: 2 }, outcome: { _tag: "Delivered" } })).toBe(
      false
    )
    expect((yield* store.listAttempts(e.id, { limit: 10 })).items).toHaveLength(2)
  }),

  "a retry is not claimable before its time, a failed one never": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [x, y] = mine(yield* claimAll("a", T), e)
    yield* store.complete({
      owner: "a",
      attempt: attempt(x!, T, 503, false),
      outcome: { _tag: "Retry", nextAttemptAt: T + 30_000 }
    })
    yield* store.complete({ owner: "a", attempt: attempt(y!, T, null, false), outcome: { _tag: "Exhausted" } })
    expect(mine(yield* claimAll("a", T + 29_999), e)).toEqual([])
    const due = mine(yield* claimAll("a", T + 30_000), e)
    expect(due.map((c) => [c.event.id, c.delivery.attempts])).toEqual([[x!.event.id, 1]])
    const statuses = (yield* store.listDeliveries(e.id, { limit: 10 })).items.map((d) => [d.eventId, d.status])
    expect(statuses).toContainEqual([y!.event.id, "failed"])
  }),

  "disabled endpoints are not claimed": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    yield* store.updateEndpoint({ ...e, enabled: false, disabledReason: "gone" })
    expect(mine(yield* claimAll("a", T), e)).toEqual([])
    // Events appended while disabled are not queued for it.
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    yield* store.updateEndpoint(e)
    expect(mine(yield* claimAll("a", T), e)).toHaveLength(1)
  }),

  "noteHealth disables an endpoint failing for too long": Effect.gen(function* () {
    const { store } = yield* services
    const e = endpoint()
    yield* store.insertEndpoint(e)
    const day = 86_400_000
    expect(yield* store.noteHealth({ endpointId: e.id, ok: false, now: T, disableAfterMs: 5 * day })).toBe(false)
    expect(yield* store.noteHealth({ endpointId: e.id, ok: false, now: T + 4 * day, disableAfterMs: 5 * day })).toBe(
      false
    )
    expect(Option.getOrThrow(yield* store.findEndpoint(e.id)).failingSince).toBe(T)
    // A success resets the clock.
    yield* store.noteHealth({ endpointId: e.id, ok: true, now: T + 4 * day, disableAfterMs: 5 * day })
    expect(yield* store.noteHealth({ endpointId: e.id, ok: false, now: T + 5 * day, disableAfterMs: 5 * day })).toBe(
      false
    )
    expect(yield* store.noteHealth({ endpointId: e.id, ok: false, now: T + 10 * day, disableAfterMs: 5 * day })).toBe(
      true
    )
    const after = Option.getOrThrow(yield* store.findEndpoint(e.id))
    expect([after.enabled, after.disabledReason]).toEqual([false, "failing"])
  }),

  "findEvent returns the stored event with its account, none for an unknown id": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const appended = yield* outbox.append(Fixtures.event({ data: { note: Fixtures.awkwardText } }))
    const found = yield* store.findEvent(appended.id)
    expect(Option.isSome(found)).toBe(true)
    const event = Option.getOrThrow(found)
    expect(event).toMatchObject({
      id: appended.id,
      type: appended.type,
      customerNo: appended.customerNo,
      trackNo: appended.trackNo,
      sequence: appended.sequence,
      livemode: appended.livemode,
      occurredAt: appended.occurredAt
    })
    expect(JSON.parse(event.dataJson)).toEqual(appended.data)
    expect(Option.isNone(yield* store.findEvent(Fixtures.eventId()))).toBe(true)
  }),

  "enqueue, requeueEvent and recover queue deliveries again": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    const old = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, occurredAt: T - 10_000 }))
    const recent = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, occurredAt: T }))
    const [c1, c2] = mine(yield* claimAll("a", T), e)
    yield* store.complete({ owner: "a", attempt: attempt(c1!, T, 200, true), outcome: { _tag: "Delivered" } })
    yield* store.complete({ owner: "a", attempt: attempt(c2!, T, null, false), outcome: { _tag: "Exhausted" } })
    expect(mine(yield* claimAll("a", T + 1), e)).toEqual([])

    // A later endpoint gets events by recover, only since the time asked for.
    const late = endpoint({ customerNo: e.customerNo, eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(late)
    expect(yield* store.recover(late.id, T - 1, T + 2)).toBe(1)
    expect(mine(yield* claimAll("a", T + 2), late).map((c) => c.event.id)).toEqual([recent.id])

    // recover on the first endpoint re-queues the failed one, not the delivered one.
    const failedId = c2!.event.id
    expect(yield* store.recover(e.id, T - 20_000, T + 3)).toBe(1)
    const rec = mine(yield* claimAll("b", T + 3), e)
    expect(rec.map((c) => [c.event.id, c.delivery.attempts])).toEqual([[failedId, 0]])
    yield* store.complete({ owner: "b", attempt: attempt(rec[0]!, T + 3, 200, true), outcome: { _tag: "Delivered" } })

    // resend: every delivery of the event, delivered or not.
    expect(yield* store.requeueEvent(old.id, T + 4)).toBeGreaterThanOrEqual(1)
    expect(mine(yield* claimAll("c", T + 4), e).map((c) => c.event.id)).toEqual([old.id])

    // enqueue: one endpoint, one event, even of a type it did not select.
    const other = yield* outbox.append(Fixtures.event({ customerNo: e.customerNo, type: "webhook.test", trackNo: "" }))
    yield* store.enqueue(late.id, other.id, T + 5)
    expect(mine(yield* claimAll("d", T + 5), late).map((c) => c.event.id)).toEqual([other.id])
  }),
  "prune forgets finished deliveries and old log lines, never pending ones": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    for (let i = 0; i < 3; i++) yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [a, b, c] = mine(yield* claimAll("a", T), e)
    yield* store.complete({ owner: "a", attempt: attempt(a!, T, 200, true), outcome: { _tag: "Delivered" } })
    yield* store.complete({ owner: "a", attempt: attempt(b!, T, null, false), outcome: { _tag: "Exhausted" } })
    yield* store.complete({
      owner: "a",
      attempt: attempt(c!, T, 500, false),
      outcome: { _tag: "Retry", nextAttemptAt: T + 1 }
    })
    yield* store.prune(T)
    expect((yield* store.listDeliveries(e.id, { limit: 10 })).items).toHaveLength(3)
    yield* store.prune(T + 1)
    const left = (yield* store.listDeliveries(e.id, { limit: 10 })).items
    expect(left.map((d) => [d.eventId, d.status])).toEqual([[c!.event.id, "pending"]])
    expect((yield* store.listAttempts(e.id, { limit: 10 })).items).toEqual([])
  }),

  "deleteEndpoint removes the endpoint, its subscriptions, deliveries and log": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    const kept = endpoint({ customerNo: e.customerNo, eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    yield* store.insertEndpoint(kept)
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [done] = mine(yield* claimAll("a", T), e)
    yield* store.complete({ owner: "a", attempt: attempt(done!, T, 200, true), outcome: { _tag: "Delivered" } })
    expect(yield* store.deleteEndpoint(e.id)).toBe(true)
    expect(yield* store.findEndpoint(e.id)).toEqual(Option.none())
    expect((yield* store.listDeliveries(e.id, { limit: 10 })).items).toEqual([])
    expect((yield* store.listAttempts(e.id, { limit: 10 })).items).toEqual([])
    expect((yield* store.listEndpoints({ customerNo: e.customerNo }, { limit: 100 })).items.map((x) => x.id)).toEqual([
      kept.id
    ])
    // Its queued deliveries are gone, and new events no longer fan out to it.
    yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const later = yield* claimAll("b", T + 1)
    expect(mine(later, e)).toEqual([])
    expect(mine(later, kept)).toHaveLength(1)
    expect(yield* store.deleteEndpoint(e.id)).toBe(false)
    // The other endpoint's deliveries and the events themselves are untouched.
    expect((yield* store.listDeliveries(kept.id, { limit: 10 })).items).toHaveLength(3)
  }),

  "releaseLeases makes the owner's pending deliveries claimable at once, and only those": Effect.gen(function* () {
    const { outbox, store } = yield* services
    // Owners of this case alone: a shared database may hold other cases' leases.
    const [a, b, c] = ["a", "b", "c"].map((x) => `${x}-${endpointId()}`) as [string, string, string]
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    const f = endpoint({ eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    yield* store.insertEndpoint(f)
    for (let i = 0; i < 2; i++) yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    yield* outbox.append(Fixtures.event({ customerNo: f.customerNo }))
    const held = yield* store.claimDue({ owner: a, now: T, leaseMs: 60_000, limit: 1000, skipEndpoints: [f.id] })
    const [x, y] = mine(held, e)
    const [z] = mine(yield* claimAll(b, T), f)
    yield* store.complete({ owner: a, attempt: attempt(x!, T, 200, true), outcome: { _tag: "Delivered" } })
    expect(mine(yield* claimAll(c, T + 1), e, f)).toEqual([])
    expect(yield* store.releaseLeases(a)).toBe(held.length - 1)
    // y is claimable well before its lease would have run out; z stays with b; x stays delivered.
    const again = mine(yield* claimAll(c, T + 2), e, f)
    expect(again.map((d) => [d.event.id, d.delivery.leaseOwner])).toEqual([[y!.event.id, c]])
    const statuses = (yield* store.listDeliveries(e.id, { limit: 10 })).items.map((d) => [d.eventId, d.status])
    expect(statuses).toContainEqual([x!.event.id, "delivered"])
    const zDone = yield* store.complete({
      owner: b,
      attempt: attempt(z!, T + 3, 200, true),
      outcome: { _tag: "Delivered" }
    })
    expect(zDone).toBe(true)
  }),

  "renewLeases moves the owner's leases on the given pending deliveries, and only those": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const [a, b] = ["a", "b"].map((x) => `${x}-${endpointId()}`) as [string, string]
    const e = endpoint({ eventTypes: ["shipment.booked"] })
    yield* store.insertEndpoint(e)
    for (let i = 0; i < 3; i++) yield* outbox.append(Fixtures.event({ customerNo: e.customerNo }))
    const [x, y, z] = mine(yield* store.claimDue({ owner: a, now: T, leaseMs: 1000, limit: 1000 }), e)
    const key = (c: Webhook.Claimed) => ({ endpointId: c.endpoint.id, eventId: c.event.id })
    yield* store.complete({ owner: a, attempt: attempt(z!, T, 200, true), outcome: { _tag: "Delivered" } })
    // x is renewed; y is not asked for; z is no longer pending; b holds nothing.
    expect(yield* store.renewLeases({ owner: b, deliveries: [key(x!)], leaseUntil: T + 5000 })).toBe(0)
    expect(yield* store.renewLeases({ owner: a, deliveries: [key(x!), key(z!)], leaseUntil: T + 5000 })).toBe(1)
    expect(yield* store.renewLeases({ owner: a, deliveries: [], leaseUntil: T + 5000 })).toBe(0)
    // After the first lease: y is taken over, x is not until the renewed lease runs out.
    const taken = mine(yield* store.claimDue({ owner: b, now: T + 1000, leaseMs: 10_000, limit: 1000 }), e)
    expect(taken.map((c) => c.event.id)).toEqual([y!.event.id])
    // a may no longer renew y (b holds it now), and a's renewal never shortens b's lease.
    expect(yield* store.renewLeases({ owner: a, deliveries: [key(y!)], leaseUntil: T + 1001 })).toBe(0)
    expect(mine(yield* store.claimDue({ owner: a, now: T + 1999, leaseMs: 1000, limit: 1000 }), e)).toEqual([])
    expect(mine(yield* store.claimDue({ owner: b, now: T + 4999, leaseMs: 1000, limit: 1000 }), e)).toEqual([])
    const after = mine(yield* store.claimDue({ owner: b, now: T + 5000, leaseMs: 1000, limit: 1000 }), e)
    expect(after.map((c) => c.event.id)).toEqual([x!.event.id])
    // Taken over at last: the first holder's late completion no longer counts.
    expect(
      yield* store.complete({ owner: a, attempt: attempt(x!, T + 4000, 200, true), outcome: { _tag: "Delivered" } })
    ).toBe(false)
  }),

  "racing dispatchers send every delivery, no attempt twice, each shipment in order": Effect.gen(function* () {
    const { outbox, store } = yield* services
    const e = endpoint({ eventTypes: ["shipment.booked", "shipment.delivered"] })
    yield* store.insertEndpoint(e)
    const shipments = Array.from({ length: 16 }, () => Fixtures.trackNo())
    for (let seq = 0; seq < 4; seq++)
      for (const trackNo of shipments)
        yield* outbox.append(
          Fixtures.event({
            customerNo: e.customerNo,
            trackNo,
            type: seq % 2 === 0 ? "shipment.booked" : "shipment.delivered"
          })
        )
    const total = shipments.length * 4
    // One clock for all: every claim sees a later time, so a retry scheduled "now" is due to the
    // next claim of any dispatcher, and leases (far longer than the run) never expire.
    let clock = T
    const sent = new Set<string>()
    const duplicates: Array<string> = []
    const holder = new Map<string, string>()
    const overlaps: Array<string> = []
    const delivered = new Map<string, Array<number>>()
    let done = 0
    let retries = 0
    const dispatcher = (owner: string) =>
      Effect.gen(function* () {
        for (let round = 0; round < 400 && done < total; round++) {
          const claimed = mine(yield* store.claimDue({ owner, now: ++clock, leaseMs: 1e9, limit: 12 }), e)
          for (const c of claimed) {
            const id = `${c.event.id}#${c.delivery.attempts + 1}`
            if (sent.has(id)) duplicates.push(id)
            sent.add(id)
            const other = holder.get(c.event.trackNo)
            if (other !== undefined) overlaps.push(`${c.event.trackNo}: ${other} and ${owner}`)
            holder.set(c.event.trackNo, owner)
          }
          yield* Effect.yieldNow()
          for (const c of claimed) {
            holder.delete(c.event.trackNo)
            // Every third attempt fails and is due again at once: rivals whose scan saw the
            // delivery before this attempt must not claim (and send) it with the old count.
            const retry = (c.delivery.attempts + c.event.sequence + owner.length) % 3 === 0 && c.delivery.attempts < 2
            if (retry) retries++
            else {
              done++
              delivered.set(c.event.trackNo, [...(delivered.get(c.event.trackNo) ?? []), c.event.sequence])
            }
            const ok = yield* store.complete({
              owner,
              attempt: attempt(c, clock, retry ? 503 : 200, !retry),
              outcome: retry ? { _tag: "Retry", nextAttemptAt: clock } : { _tag: "Delivered" }
            })
            expect(ok).toBe(true)
            yield* Effect.yieldNow()
          }
        }
      })
    yield* Effect.all(["a", "bb", "ccc", "dddd", "eeeee", "ffffff"].map(dispatcher), { concurrency: "unbounded" })
    expect(duplicates).toEqual([])
    expect(overlaps).toEqual([])
    expect(done).toBe(total)
    expect(retries).toBeGreaterThan(0)
    for (const trackNo of shipments) expect(delivered.get(trackNo)).toEqual([1, 2, 3, 4])
    const log = yield* store.listAttempts(e.id, { limit: 1000 })
    expect(log.items).toHaveLength(total + retries)
  })
}

/**
 * Registers the `WebhookStore` conformance suite as a `describe(name)` block. `makeLayer` is
 * called once per case; cases use fresh ids and filter claims to their own endpoints, so a
 * shared database works too.
 */
export const webhookStoreContract = (
  name: string,
  makeLayer: () => Layer.Layer<WebhookServices, unknown>,
  options: { readonly skip?: ReadonlyArray<SkippedWebhookStoreCase> } = {}
): void => {
  registerCases(name, cases, body, makeLayer, skipReasons("webhookStoreContract", name, cases, options.skip))
}
