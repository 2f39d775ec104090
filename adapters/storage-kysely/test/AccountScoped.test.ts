/**
 * The use cases a person of one account calls (the portal, or an embedder's own UI) over the
 * real stores, on every target: `Shipments.search`, `detail` and `cancel`, `Documents.linksFor`
 * (tickets the API's download accepts, dead once the key is regenerated), and the account's
 * webhook programs (`Webhooks.account`), which never touch another account's endpoint,
 * deliveries or events.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  Accounts,
  Documents,
  DocumentStore,
  Entropy,
  EventOutbox,
  KeyRing,
  type KeySecret,
  Page,
  type SecretPurpose,
  Shipments,
  ShipmentStore,
  WaybillConfig,
  Webhooks,
  WebhookTransport
} from "@waybill/core"
import { DocumentStoreContract, Fixtures } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

const secret = (id: string, fill: number): KeySecret => ({ id, material: Redacted.make(new Uint8Array(32).fill(fill)) })
const secrets: Record<SecretPurpose, ReadonlyArray<KeySecret>> = {
  "api-key": [secret("k1", 1)],
  ticket: [secret("t1", 2)],
  otp: [secret("o1", 3)],
  webhook: [secret("w1", 4)]
}

const newAccount = Effect.map(Accounts.createAccount({ name: "Portal Test" }), (a) => a.account.customerNo)

/** A booked shipment of `customerNo` with its booking event, as the booking writes them. */
const book = (customerNo: string, overrides: Parameters<typeof Fixtures.shipment>[0] = {}) =>
  Effect.gen(function* () {
    const s = Fixtures.shipment({ customerNo, ...overrides })
    yield* (yield* ShipmentStore).insert(s)
    yield* (yield* EventOutbox).append(
      Fixtures.event({ customerNo, trackNo: s.trackNo, data: { track_no: s.trackNo, state: "booked" } })
    )
    return s
  })

const failure = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.map(Effect.either(self), Either.getLeft)
const tagOf = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(
    failure(self),
    Option.map((e) => e._tag)
  )

for (const target of targets) {
  describe(`account-scoped use cases over storage-kysely: ${target.name}`, () => {
    const layer = () =>
      Layer.mergeAll(storageLayer(target), Entropy.webCrypto, KeyRing.fromSecrets(secrets), WaybillConfig.layer())

    it.effect("Shipments.search pages the account's own shipments; another account's cursor reveals nothing", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const b = yield* newAccount
        const mine: Array<{ readonly trackNo: string; readonly createdAt: number }> = []
        for (let i = 0; i < 5; i++)
          mine.push(yield* book(a, { createdAt: Fixtures.baseTime + i, billingReference: `Ref-${i}` }))
        const theirs = yield* book(b, { createdAt: Fixtures.baseTime + 10, billingReference: "Ref-0" })

        const first = yield* Shipments.search(a, {}, { limit: 2 })
        expect(first.items.map((s) => s.trackNo)).toEqual([mine[4]!.trackNo, mine[3]!.trackNo])
        expect(first.nextCursor).not.toBeNull()
        const second = yield* Shipments.search(a, {}, { limit: 10, startingAfter: first.nextCursor! })
        expect(second.items.map((s) => s.trackNo)).toEqual([mine[2]!.trackNo, mine[1]!.trackNo, mine[0]!.trackNo])
        expect(second.nextCursor).toBeNull()

        // B's cursor is a position only: used by A it lists A's rows past it.
        const theirPage = yield* Shipments.search(b, {}, { limit: 1 })
        expect(theirPage.items.map((s) => s.trackNo)).toEqual([theirs.trackNo])
        const cursor = Page.encodeCursor(Shipments.summaryKeying, [theirs.createdAt, theirs.trackNo])
        const crossed = yield* Shipments.search(a, {}, { limit: 10, startingAfter: cursor })
        expect(crossed.items.map((s) => s.trackNo)).toEqual(mine.map((s) => s.trackNo).reverse())

        // A search by a shared reference, and by the other account's tracking number.
        const byRef = yield* Shipments.search(a, { q: " REF-0 " }, { limit: 10 })
        expect(byRef.items.map((s) => s.trackNo)).toEqual([mine[0]!.trackNo])
        expect((yield* Shipments.search(a, { q: theirs.trackNo }, { limit: 10 })).items).toEqual([])
        expect((yield* Shipments.search(a, { q: "x".repeat(201) }, { limit: 10 })).items).toEqual([])
        expect(yield* tagOf(Shipments.search(a, {}, { limit: 10, startingAfter: "not-a-cursor" }))).toEqual(
          Option.some("InvalidPage")
        )
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Shipments.search never lists another account's shipment, whatever the term (property)", () =>
      Effect.gen(function* () {
        const accounts = [yield* newAccount, yield* newAccount]
        const terms = ["ab", "AB", "x-1"]
        const stored: Array<{ readonly trackNo: string }> = []
        for (const [i, ref] of [...terms, ...terms].entries())
          stored.push(yield* book(accounts[i % 2]!, { billingReference: ref }))
        const context = yield* Effect.context<ShipmentStore>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.constantFrom(...terms, ...stored.map((s) => s.trackNo), ""),
              fc.integer({ min: 0, max: 1 }),
              (q, who) =>
                Effect.runPromise(
                  Effect.gen(function* () {
                    const page = yield* Shipments.search(accounts[who]!, { q }, { limit: 100 })
                    for (const row of page.items) expect(row.customerNo).toBe(accounts[who])
                  }).pipe(Effect.provide(context))
                )
            ),
            { numRuns: 20 }
          )
        )
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Shipments.detail and cancel: the account's own shipment only, cancellable while booked", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const b = yield* newAccount
        const s = yield* book(a)
        const documents = yield* DocumentStore
        const shown = DocumentStoreContract.document(s.trackNo)
        const hidden = DocumentStoreContract.document(s.trackNo, { hidden: true })
        yield* documents.insertDocument(shown)
        yield* documents.insertDocument(hidden)
        yield* documents.setInvoice(s.trackNo, "INV-77")

        const detail = yield* Shipments.detail(a, s.trackNo)
        expect(detail.shipment.trackNo).toBe(s.trackNo)
        expect(detail.shipment.stops).toHaveLength(s.stops.length)
        expect(detail.shipment.legs).toEqual(s.legs)
        expect(detail.invoice).toBe("INV-77")
        expect(detail.events.map((e) => e.type)).toEqual(["shipment.booked"])
        expect(detail.documents.map((d) => d.id)).toEqual([shown.id])
        expect(detail.cancellable).toBe(true)

        expect(yield* tagOf(Shipments.detail(b, s.trackNo))).toEqual(Option.some("ShipmentNotFound"))
        expect(yield* tagOf(Shipments.detail(a, "nope"))).toEqual(Option.some("ShipmentNotFound"))
        expect(yield* tagOf(Shipments.cancel(b, s.trackNo))).toEqual(Option.some("ShipmentNotFound"))

        expect(yield* Shipments.cancel(a, s.trackNo)).toEqual({ result: "success" })
        const after = yield* Shipments.detail(a, s.trackNo)
        expect(after.shipment.state).toBe("canceled")
        expect(after.cancellable).toBe(false)
        expect(after.events.map((e) => e.type)).toEqual(["shipment.booked", "shipment.canceled"])
        expect(yield* tagOf(Shipments.cancel(a, s.trackNo))).toEqual(Option.some("TransitionRejected"))
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Documents.linksFor: the API's tickets, bound to the live key, dead once it is regenerated", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const b = yield* newAccount
        const s = yield* book(a)
        const doc = DocumentStoreContract.document(s.trackNo, { rotation: 0 })
        yield* (yield* DocumentStore).insertDocument(doc)

        expect(yield* tagOf(Documents.linksFor({ customerNo: b }, s.trackNo))).toEqual(Option.some("ShipmentNotFound"))
        const issued = yield* Documents.linksFor({ customerNo: a }, s.trackNo)
        expect(issued.keyMode).toBe("live")
        expect(issued.links.map((l) => l.document.id)).toEqual([doc.id])
        // The shipment's page signs the documents Shipments.detail read: the same links.
        const detail = yield* Shipments.detail(a, s.trackNo)
        const signed = yield* Documents.linksOf({ customerNo: a }, detail.documents)
        expect(signed.keyMode).toBe("live")
        expect(signed.links.map((l) => l.document)).toEqual(issued.links.map((l) => l.document))
        expect(
          yield* tagOf(Documents.download({ client: Option.none(), ticket: [signed.links[0]!.ticket], head: true }))
        ).toEqual(Option.some("DocumentsNotConfigured"))
        const link = issued.links[0]!
        expect(link.path).toBe(`${Documents.downloadPath}?ticket=${link.ticket}`)

        const download = (ticket: string) => Documents.download({ client: Option.none(), ticket: [ticket], head: true })
        // Every check a ticket is put to passes; only the file store is missing in this test.
        expect(yield* tagOf(download(link.ticket))).toEqual(Option.some("DocumentsNotConfigured"))
        yield* Accounts.rotateKey(a, "live")
        expect(Option.getOrThrow(yield* failure(download(link.ticket)))).toMatchObject({
          _tag: "TicketRejected",
          reason: "key"
        })
        // New links follow the new key; with the live key disabled, the test key's.
        const fresh = yield* Documents.linksFor({ customerNo: a }, s.trackNo)
        expect(yield* tagOf(download(fresh.links[0]!.ticket))).toEqual(Option.some("DocumentsNotConfigured"))
        yield* Accounts.setKeyStatus(a, "live", "disabled")
        expect(yield* tagOf(download(fresh.links[0]!.ticket))).toEqual(Option.some("TicketRejected"))
        const viaTest = yield* Documents.linksFor({ customerNo: a }, s.trackNo)
        expect(viaTest.keyMode).toBe("test")
        expect(yield* tagOf(download(viaTest.links[0]!.ticket))).toEqual(Option.some("DocumentsNotConfigured"))
        yield* Accounts.setKeyStatus(a, "test", "disabled")
        expect(yield* Documents.linksFor({ customerNo: a }, s.trackNo)).toEqual({
          keyMode: null,
          expiresAt: null,
          links: []
        })
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Webhooks.account: another account's endpoint, deliveries and events are WebhookNotFound", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const b = yield* newAccount
        const policy = {}
        const { endpoint: theirs } = yield* Webhooks.account.add(
          b,
          { url: "https://hooks.example.com/b", eventTypes: ["*"] },
          policy
        )
        const { endpoint: mine } = yield* Webhooks.account.add(a, {
          url: "https://hooks.example.com/a",
          eventTypes: ["shipment.booked"]
        })
        const theirShipment = yield* book(b)
        const myShipment = yield* book(a)
        const theirEvents = yield* (yield* EventOutbox).listByShipment(theirShipment.trackNo)
        const myEvents = yield* (yield* EventOutbox).listByShipment(myShipment.trackNo)

        const q = { limit: 10 }
        const notFound = Option.some("WebhookNotFound")
        expect(yield* tagOf(Webhooks.account.get(a, theirs.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.update(a, theirs.id, { eventTypes: ["shipment.canceled"] }))).toEqual(
          notFound
        )
        expect(yield* tagOf(Webhooks.account.setEnabled(a, theirs.id, false))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.rotateSecret(a, theirs.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.deliveries(a, theirs.id, q))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.deliveryLog(a, theirs.id, q))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.recover(a, theirs.id, 0))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.sendTest(a, theirs.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.resend(a, theirs.id, theirEvents[0]!.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.resend(a, theirs.id, myEvents[0]!.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.resend(a, mine.id, theirEvents[0]!.id))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.resend(a, mine.id, "evt_unknown"))).toEqual(notFound)
        expect(yield* tagOf(Webhooks.account.delete(a, theirs.id))).toEqual(notFound)
        // Nothing of B's changed.
        const still = yield* Webhooks.getEndpoint(theirs.id)
        expect(still).toEqual(theirs)
        expect((yield* Webhooks.deliveries(theirs.id, q)).page.items.map((d) => d.eventId)).toEqual([
          theirEvents[0]!.id
        ])

        // A's own endpoint: every program works.
        expect((yield* Webhooks.account.list(a, q)).items.map((e) => e.id)).toEqual([mine.id])
        expect((yield* Webhooks.account.get(a, mine.id)).id).toBe(mine.id)
        expect((yield* Webhooks.account.deliveries(a, mine.id, q)).page.items.map((d) => d.eventId)).toEqual([
          myEvents[0]!.id
        ])
        expect(yield* Webhooks.account.resend(a, mine.id, myEvents[0]!.id)).toBe(1)
        const testEvent = yield* Webhooks.account.sendTest(a, mine.id)
        expect(testEvent).toMatch(/^evt_/)
        expect(yield* Webhooks.account.resend(a, mine.id, testEvent)).toBe(1)
        expect(yield* tagOf(Webhooks.account.resend(b, theirs.id, testEvent))).toEqual(Option.some("WebhookNotFound"))
        expect((yield* Webhooks.account.update(a, mine.id, { eventTypes: ["shipment.canceled"] })).eventTypes).toEqual([
          "shipment.canceled"
        ])
        expect((yield* Webhooks.account.setEnabled(a, mine.id, false)).enabled).toBe(false)
        yield* Webhooks.account.rotateSecret(a, mine.id)
        yield* Webhooks.account.deliveryLog(a, mine.id, q)
        yield* Webhooks.account.recover(a, mine.id, 0)
        yield* Webhooks.account.delete(a, mine.id)
        expect((yield* Webhooks.account.list(a, q)).items).toEqual([])
        expect((yield* Webhooks.account.list(b, q)).items.map((e) => e.id)).toEqual([theirs.id])
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Webhooks.account.log: the delivery log with each line's event type, scoped to the account", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const b = yield* newAccount
        const { endpoint } = yield* Webhooks.account.add(a, { url: "https://hooks.example.com/log", eventTypes: ["*"] })
        const shipment = yield* book(a)
        const testEvent = yield* Webhooks.account.sendTest(a, endpoint.id)
        const transport = Layer.succeed(WebhookTransport, {
          send: () =>
            Effect.succeed({ _tag: "Answered", status: 202, retryAfter: undefined, durationMs: 12, head: "thanks" })
        })
        const booked = (yield* (yield* EventOutbox).listByShipment(shipment.trackNo))[0]!
        // The fixture's event is queued at its own (later) time; a resend makes it due now.
        yield* Webhooks.account.resend(a, endpoint.id, booked.id)
        yield* Webhooks.dispatchOnce({ owner: "log-test" }).pipe(Effect.provide(transport))
        const { page } = yield* Webhooks.account.log(a, endpoint.id, { limit: 10 })
        expect(page.items.map((l) => [l.eventId, l.eventType, l.status, l.durationMs, l.response]).sort()).toEqual(
          [
            [booked.id, "shipment.booked", 202, 12, "thanks"],
            [testEvent, "webhook.test", 202, 12, "thanks"]
          ].sort()
        )
        expect(yield* tagOf(Webhooks.account.log(b, endpoint.id, { limit: 10 }))).toEqual(
          Option.some("WebhookNotFound")
        )
      }).pipe(Effect.provide(layer()))
    )

    it.effect("Webhooks.account.resend sends the event to that endpoint only, not to the account's others", () =>
      Effect.gen(function* () {
        const a = yield* newAccount
        const { endpoint: one } = yield* Webhooks.account.add(a, {
          url: "https://hooks.example.com/one",
          eventTypes: ["*"]
        })
        const { endpoint: two } = yield* Webhooks.account.add(a, {
          url: "https://hooks.example.com/two",
          eventTypes: ["*"]
        })
        const shipment = yield* book(a)
        const booked = (yield* (yield* EventOutbox).listByShipment(shipment.trackNo))[0]!
        const transport = Layer.succeed(WebhookTransport, {
          send: () =>
            Effect.succeed({ _tag: "Answered", status: 200, retryAfter: undefined, durationMs: 3, head: "ok" })
        })
        // Both deliveries wait for the fixture's (later) time; the resend makes only one's due now.
        expect(yield* Webhooks.account.resend(a, one.id, booked.id)).toBe(1)
        yield* Webhooks.dispatchOnce({ owner: "resend-test" }).pipe(Effect.provide(transport))
        const logOf = (id: string) =>
          Effect.map(Webhooks.account.log(a, id, { limit: 10 }), ({ page }) => page.items.map((l) => l.eventId))
        expect(yield* logOf(one.id)).toEqual([booked.id])
        expect(yield* logOf(two.id)).toEqual([])
      }).pipe(Effect.provide(layer()))
    )
  })
}

describe("Webhooks.catalog", () => {
  it("lists every selectable event type once, in order, each with a one-line description", () => {
    expect(Webhooks.catalog.map((c) => c.type)).toEqual(Webhooks.selectableTypes)
    for (const entry of Webhooks.catalog) {
      expect(entry.description.length).toBeGreaterThan(10)
      expect(entry.description).not.toContain("\n")
    }
    expect(Webhooks.catalog.some((c) => c.type === "webhook.test")).toBe(false)
  })
})
