/**
 * The dispatcher (`Webhooks.dispatchOnce`, `Webhooks.runDispatcher`) over real SQLite storage
 * with a scripted transport and Effect's `TestClock`: the retry schedule, `Retry-After`, 410,
 * auto-disable, per-shipment order while a receiver is down, redelivery after a crash between
 * send and record, leases given back on stop and renewed while a send is in flight. Nothing
 * here waits for real time.
 */
import Database from "better-sqlite3"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import {
  Entropy,
  EventOutbox,
  type Webhook,
  WebhookSchedule,
  WebhookSignature,
  Webhooks,
  WebhookStore,
  WebhookTransport,
  type WebhookRequest,
  type WebhookResponse
} from "@waybill/core"
import { migrate, sqliteEngine, StorageKysely } from "@waybill/storage-kysely"
import { keyRingLayer } from "../src/secrets.js"
import { Mail, type MailMessage, Mailer, UserStore } from "@waybill/core"

type Script = (request: WebhookRequest, call: number) => Effect.Effect<WebhookResponse>

const ok: WebhookResponse = { _tag: "Answered", status: 200, retryAfter: undefined, durationMs: 3, head: "ok" }
const status = (s: number, retryAfter?: string): WebhookResponse => ({
  _tag: "Answered",
  status: s,
  retryAfter,
  durationMs: 3,
  head: `status ${s}`
})
const down: WebhookResponse = { _tag: "NoAnswer", reason: "network", durationMs: 1, message: "ECONNREFUSED" }

/** A database, storage, a KeyRing, zero entropy (jitter at its low bound) and a scripted transport. */
const setup = (script: Script) =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.sync(() => sqliteEngine(new Database(":memory:"))),
      (d) => Effect.promise(() => d.close())
    )
    yield* migrate(db)
    const sent: Array<WebhookRequest> = []
    const transport = Layer.succeed(WebhookTransport, {
      send: (request) =>
        Effect.suspend(() => {
          sent.push(request)
          return script(request, sent.length)
        })
    })
    const mails: Array<MailMessage> = []
    const mailer = Layer.succeed(Mailer, { send: (m: MailMessage) => Effect.sync(() => void mails.push(m)) })
    const layer = Layer.mergeAll(
      mailer,
      StorageKysely.layer(db),
      keyRingLayer(new Uint8Array(32).fill(7)),
      Layer.succeed(Entropy, { bytes: (n) => Effect.succeed(new Uint8Array(n)) }),
      transport
    )
    const context = yield* Layer.build(layer)
    return { sent, context, mails }
  })

let seq = 0
const endpointRecord = (customerNo: string, overrides: Partial<Webhook.EndpointRecord> = {}) =>
  Effect.gen(function* () {
    const secret = Redacted.make(WebhookSignature.formatSecret(new Uint8Array(32).fill(1)))
    const e: Webhook.EndpointRecord = {
      id: `we_test${seq++}`,
      customerNo,
      url: "https://receiver.example/hooks",
      eventTypes: ["shipment.booked", "shipment.assigned", "shipment.delivered"],
      secret: yield* Webhooks.sealSecret(secret),
      previousSecret: null,
      previousSecretUntil: null,
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: 0,
      updatedAt: 0,
      ...overrides
    }
    yield* (yield* WebhookStore).insertEndpoint(e)
    return e
  })

const append = (
  customerNo: string,
  trackNo: string,
  type: "shipment.booked" | "shipment.assigned" | "shipment.delivered"
) =>
  Effect.gen(function* () {
    const outbox = yield* EventOutbox
    const now = yield* TestClock.currentTimeMillis
    return yield* outbox.append({
      id: `evt_${trackNo}_${type}`,
      type,
      customerNo,
      trackNo,
      livemode: true,
      occurredAt: now,
      data: { track_no: trackNo, note: "Zoë 🚚" }
    })
  })

const round = Webhooks.dispatchOnce({ owner: "test", leaseMs: 60_000 })

describe("Webhooks.dispatchOnce", () => {
  it.scoped("retries on the schedule (jitter at its low bound), then gives up", () =>
    Effect.gen(function* () {
      const { context, sent } = yield* setup(() => Effect.succeed(status(500)))
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("100")
        yield* append("100", "T1", "shipment.booked")
        const times: Array<number> = []
        for (let i = 0; i < 40 && times.length < WebhookSchedule.maxAttempts + 1; i++) {
          const before = sent.length
          yield* round
          if (sent.length > before) times.push(yield* TestClock.currentTimeMillis)
          const [d] = (yield* (yield* WebhookStore).listDeliveries(e.id, { limit: 1 })).items
          if (d!.status !== "pending") break
          // Just before the next attempt nothing is due; at it, it is.
          yield* TestClock.setTime(d!.nextAttemptAt - 1)
          yield* round
          expect(sent.length).toBe(times.length)
          yield* TestClock.setTime(d!.nextAttemptAt)
        }
        expect(times).toHaveLength(12)
        const gaps = times.slice(1).map((t, i) => t - times[i]!)
        expect(gaps).toEqual(WebhookSchedule.delays.map((d) => Math.round(d * 0.8)))
        const [d] = (yield* (yield* WebhookStore).listDeliveries(e.id, { limit: 1 })).items
        expect(d).toMatchObject({ status: "failed", attempts: 12 })
        // Every attempt sent the same bytes with the same webhook-id.
        expect(new Set(sent.map((r) => r.body)).size).toBe(1)
        expect(new Set(sent.map((r) => r.headers["webhook-id"]))).toEqual(new Set(["evt_T1_shipment.booked"]))
        expect((yield* (yield* WebhookStore).listAttempts(e.id, { limit: 50 })).items).toHaveLength(12)
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("honours Retry-After on a 429 and waits at least 60 s", () =>
    Effect.gen(function* () {
      const answers = [status(429, "600"), status(429), ok]
      const { context } = yield* setup((_r, n) => Effect.succeed(answers[n - 1] ?? ok))
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("101")
        yield* append("101", "T2", "shipment.booked")
        yield* round
        const store = yield* WebhookStore
        expect((yield* store.listDeliveries(e.id, { limit: 1 })).items[0]!.nextAttemptAt).toBe(600_000)
        yield* TestClock.setTime(600_000)
        yield* round
        // Second failure, 429 without Retry-After: 30 s * 0.8 lifted to the 60 s floor.
        expect((yield* store.listDeliveries(e.id, { limit: 1 })).items[0]!.nextAttemptAt).toBe(660_000)
        yield* TestClock.setTime(660_000)
        yield* round
        expect((yield* store.listDeliveries(e.id, { limit: 1 })).items[0]!.status).toBe("delivered")
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("a 410 disables the endpoint; its deliveries wait until it is enabled", () =>
    Effect.gen(function* () {
      const answers = [status(410)]
      const { context, sent } = yield* setup((_r, n) => Effect.succeed(answers[n - 1] ?? ok))
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("102")
        yield* append("102", "T3", "shipment.booked")
        yield* round
        const store = yield* WebhookStore
        const after = Option.getOrThrow(yield* store.findEndpoint(e.id))
        expect([after.enabled, after.disabledReason]).toEqual([false, "gone"])
        yield* TestClock.setTime(86_400_000)
        expect((yield* round).claimed).toBe(0)
        yield* Webhooks.setEnabled(e.id, true)
        expect(yield* round).toEqual({ claimed: 1, delivered: 1, failed: 0 })
        expect(sent).toHaveLength(2)
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("disables an endpoint after 5 days of failures", () =>
    Effect.gen(function* () {
      const { context, mails } = yield* setup(() => Effect.succeed(down))
      yield* Effect.gen(function* () {
        // The account's owners who signed up are told; a member and an owner still invited are not.
        const user = (email: string, role: "owner" | "member", passwordHash: string | null) =>
          Effect.flatMap(UserStore, (u) =>
            u.insertUser({
              userId: `usr_${email}`,
              customerNo: "103",
              email,
              role,
              passwordHash,
              passwordVersion: 1,
              passwordChangedAt: null,
              invitedBy: null,
              createdAt: 0
            })
          )
        yield* user("owner@acme.test", "owner", "$scrypt$x")
        yield* user("member@acme.test", "member", "$scrypt$x")
        yield* user("invited@acme.test", "owner", null)
        const owner = { email: "owner@acme.test" }
        const e = yield* endpointRecord("103", { failingSince: 0 })
        yield* TestClock.setTime(5 * 86_400_000 - 1)
        yield* append("103", "T4", "shipment.booked")
        yield* round
        const store = yield* WebhookStore
        expect(Option.getOrThrow(yield* store.findEndpoint(e.id)).enabled).toBe(true)
        yield* TestClock.setTime(5 * 86_400_000 + 10_000)
        yield* round
        const after = Option.getOrThrow(yield* store.findEndpoint(e.id))
        expect([after.enabled, after.disabledReason]).toEqual([false, "failing"])
        expect(mails).toEqual([
          { _tag: "WebhookDisabled", to: owner.email, endpointId: e.id, url: e.url, reason: "failing" }
        ])
        expect(Mail.render(mails[0]!).text).toContain(e.url)
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("receiver down, then up: every event arrives, in order per shipment", () =>
    Effect.gen(function* () {
      let up = false
      const { context, sent } = yield* setup(() => Effect.succeed(up ? ok : down))
      yield* Effect.gen(function* () {
        yield* endpointRecord("104")
        for (const t of ["A", "B", "C"]) {
          yield* append("104", t, "shipment.booked")
          yield* append("104", t, "shipment.assigned")
          yield* append("104", t, "shipment.delivered")
        }
        for (let i = 0; i < 6; i++) {
          yield* round
          yield* TestClock.adjust("1 hour")
        }
        up = true
        for (let i = 0; i < 10; i++) {
          yield* round
          yield* TestClock.adjust("10 hours")
        }
        // Only the first event of each shipment was ever tried while the receiver was down.
        const whileDown = sent.slice(0, sent.length - 9)
        expect(new Set(whileDown.map((r) => JSON.parse(r.body).sequence))).toEqual(new Set([1]))
        const delivered = sent
          .slice(-9)
          .map((r) => JSON.parse(r.body) as { data: { track_no: string }; sequence: number })
        for (const t of ["A", "B", "C"])
          expect(delivered.filter((p) => p.data.track_no === t).map((p) => p.sequence)).toEqual([1, 2, 3])
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("a crash between send and record redelivers the same bytes with the same webhook-id", () =>
    Effect.gen(function* () {
      const { context, sent } = yield* setup((_r, n) => (n === 1 ? Effect.never : Effect.succeed(ok)))
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("105")
        yield* append("105", "T5", "shipment.booked")
        const fiber = yield* Effect.fork(round)
        while (sent.length === 0) yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber) // the dispatcher dies after sending, before recording
        expect((yield* round).claimed).toBe(0) // still leased
        yield* TestClock.adjust(60_000)
        expect(yield* round).toEqual({ claimed: 1, delivered: 1, failed: 0 })
        expect(sent).toHaveLength(2)
        expect(sent[1]!.body).toBe(sent[0]!.body)
        expect(sent[1]!.headers["webhook-id"]).toBe(sent[0]!.headers["webhook-id"])
        expect((yield* (yield* WebhookStore).listDeliveries(e.id, { limit: 1 })).items[0]!.status).toBe("delivered")
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("a stopped dispatcher gives back its leases: another claims them at once", () =>
    Effect.gen(function* () {
      // The receiver never answers, so the delivery stays leased for as long as the send lasts.
      const { context, sent } = yield* setup(() => Effect.never)
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("110")
        yield* append("110", "T10", "shipment.booked")
        const store = yield* WebhookStore
        const fiber = yield* Effect.fork(Webhooks.runDispatcher({ owner: "stopping", idle: "1 hour" }))
        while (sent.length === 0) yield* Effect.yieldNow()
        const [leased] = (yield* store.listDeliveries(e.id, { limit: 1 })).items
        expect([leased!.leaseOwner, leased!.leaseUntil]).toEqual(["stopping", 60_000])
        yield* Fiber.interrupt(fiber)
        const [released] = (yield* store.listDeliveries(e.id, { limit: 1 })).items
        expect([released!.status, released!.leaseOwner, released!.leaseUntil, released!.attempts]).toEqual([
          "pending",
          null,
          0,
          0
        ])
        // Well before the 60 s lease would have run out.
        const taken = yield* store.claimDue({ owner: "next", now: 1, leaseMs: 60_000, limit: 10 })
        expect(taken.map((c) => c.event.id)).toEqual(["evt_T10_shipment.booked"])
      }).pipe(Effect.provide(context))
    })
  )

  it.scoped("runDispatcher renews the lease of a send in flight: no rival takes it over mid-send", () =>
    Effect.gen(function* () {
      // The receiver never answers: the send outlasts its 3 s lease many times over.
      const { context, sent } = yield* setup(() => Effect.never)
      yield* Effect.gen(function* () {
        const e = yield* endpointRecord("111")
        yield* append("111", "T11", "shipment.booked")
        const store = yield* WebhookStore
        const fiber = yield* Effect.fork(Webhooks.runDispatcher({ owner: "slow", idle: "1 hour", leaseMs: 3_000 }))
        while (sent.length === 0) yield* Effect.yieldNow()
        const lease = Effect.map(store.listDeliveries(e.id, { limit: 1 }), (p) => [
          p.items[0]!.leaseOwner,
          p.items[0]!.leaseUntil
        ])
        expect(yield* lease).toEqual(["slow", 3_000])
        // Renewed every second (a third of the lease), a full lease ahead each time.
        yield* TestClock.adjust(2_500)
        expect(yield* lease).toEqual(["slow", 5_000])
        expect(yield* store.claimDue({ owner: "rival", now: 4_000, leaseMs: 3_000, limit: 10 })).toEqual([])
        yield* TestClock.adjust(30_000)
        expect(yield* lease).toEqual(["slow", 35_000])
        expect(yield* store.claimDue({ owner: "rival", now: 34_999, leaseMs: 3_000, limit: 10 })).toEqual([])
        expect(sent).toHaveLength(1)
        // Once it stops (and so stops renewing), the delivery is free again.
        yield* Fiber.interrupt(fiber)
        const taken = yield* store.claimDue({ owner: "rival", now: 32_501, leaseMs: 3_000, limit: 10 })
        expect(taken.map((c) => c.event.id)).toEqual(["evt_T11_shipment.booked"])
      }).pipe(Effect.provide(context))
    })
  )
})
