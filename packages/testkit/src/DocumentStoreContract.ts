/**
 * @module DocumentStoreContract
 *
 * The conformance suite of `DocumentStore`: order state (lazy version 1, invoice numbers),
 * lookups by each field restricted to the given customers (with each order's current
 * documents), documents round trips, the current listing, optimistic updates, transactions,
 * and download grants. Orders are shipments, so the suite writes them
 * through `ShipmentStore` of the same adapter.
 *
 * Each case builds a fresh layer from `makeLayer`; fixtures use fresh keys, so a shared
 * database works too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Document, DocumentStore, ShipmentStore, type TicketGrant, Transactor } from "@waybill/core"
import * as Fixtures from "./Fixtures.js"
import { checkProperty, listSample, newestFirst, pageThrough } from "./internal/paging.js"

/** The services this suite exercises. */
export type DocumentStoreServices = DocumentStore | ShipmentStore | Transactor

export const cases = [
  "findOrder joins the shipment; no state means version 1 and no invoice",
  "lookupOrders by control_no, customer_reference, invoice_no and any, only for the given customers",
  "lookupOrders honours the limit and returns nothing for no customers or no values",
  "lookupOrders brings each order's current documents (listCurrent's rule), in the listed columns",
  "document insert/find/listAll roundtrip",
  "an order's documents page newest first, each once, only the order's (property)",
  "listCurrent: the current version's attachments and every signature, hidden and removed included",
  "findDownload: a document's order and that order's current documents, in one lookup",
  "updateDocument is optimistic: a stale version is VersionConflict and nothing changes",
  "setOrderVersion checks the expected version",
  "setInvoice upserts without touching the version",
  "a rolled-back transaction leaves no document",
  "grants round-trip by id; a second grant with the same id is refused",
  "deleteExpiredGrants deletes only expired grants, at most limit at a time"
] as const

export type DocumentStoreCase = (typeof cases)[number]

let counter = 0
/** A fresh document of `trackNo` with awkward text; override what a case is about. */
export const document = (
  trackNo: string,
  overrides: Partial<Document.DocumentRecord> = {}
): Document.DocumentRecord => {
  const n = ++counter
  return {
    id: `doc_01J${String(n).padStart(23, "0")}`,
    trackNo,
    kind: "attachment",
    orderVersion: 1,
    batch: 1,
    page: n,
    type: "bol",
    sourceId: `${Fixtures.awkwardText} ${n}`,
    contentType: "application/pdf",
    rotation: 90,
    blobKey: n.toString(16).padStart(64, "0"),
    size: 2 ** 33 + n,
    version: 1,
    hidden: false,
    removed: false,
    capturedAt: Fixtures.baseTime + n,
    createdAt: Fixtures.baseTime + n,
    updatedAt: Fixtures.baseTime + n,
    ...overrides
  }
}

const stores = Effect.all({ docs: DocumentStore, shipments: ShipmentStore, tx: Transactor })

/**
 * Two orders: `s` with two attachments of version 1 (one hidden, in batch 2), a signature, and a
 * removed attachment of version 2 (while `s` is still at version 1); `t` with one attachment.
 */
const versionedOrder = Effect.gen(function* () {
  const { docs, shipments } = yield* stores
  const s = Fixtures.shipment()
  const t = Fixtures.shipment()
  yield* shipments.insert(s)
  yield* shipments.insert(t)
  const v1 = document(s.trackNo, { orderVersion: 1 })
  const v1Hidden = document(s.trackNo, { orderVersion: 1, hidden: true, batch: 2 })
  const sig1 = document(s.trackNo, { kind: "signature", type: "signature", orderVersion: 1 })
  const v2 = document(s.trackNo, { orderVersion: 2, removed: true })
  const other = document(t.trackNo)
  for (const d of [v1, v1Hidden, sig1, v2, other]) yield* docs.insertDocument(d)
  return { s, t, v1, v1Hidden, sig1, v2, other }
})

const sortedIds = (docs: ReadonlyArray<Document.DocumentRecord>) => docs.map((d) => d.id).sort()

const body: { readonly [K in DocumentStoreCase]: Effect.Effect<void, unknown, DocumentStoreServices> } = {
  "findOrder joins the shipment; no state means version 1 and no invoice": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const s = Fixtures.shipment({ livemode: false })
    yield* shipments.insert(s)
    expect(Option.getOrThrow(yield* docs.findOrder(s.trackNo))).toEqual({
      trackNo: s.trackNo,
      customerNo: s.customerNo,
      livemode: false,
      reference: s.billingReference,
      requestedBy: s.contact,
      invoice: "",
      currentVersion: 1
    })
    expect(Option.isNone(yield* docs.findOrder(Fixtures.trackNo()))).toBe(true)
  }),

  "lookupOrders by control_no, customer_reference, invoice_no and any, only for the given customers": Effect.gen(
    function* () {
      const { docs, shipments } = yield* stores
      const customer = Fixtures.customerNo()
      const other = Fixtures.customerNo()
      const [x, y, z] = [
        Fixtures.shipment({ customerNo: customer }),
        Fixtures.shipment({ customerNo: customer }),
        Fixtures.shipment({ customerNo: other })
      ]
      for (const s of [x, y, z]) yield* shipments.insert(s)
      yield* docs.setInvoice(y.trackNo, "INV-Ü-1")
      const find = (field: "control_no" | "customer_reference" | "invoice_no" | "any", values: Array<string>) =>
        Effect.map(docs.lookupOrders({ field, values, customers: [customer], limit: 10 }), (os) =>
          os.map((o) => o.order.trackNo).sort()
        )
      expect(yield* find("control_no", [x.trackNo, z.trackNo, "00000000"])).toEqual([x.trackNo])
      expect(yield* find("customer_reference", [y.billingReference, z.billingReference])).toEqual([y.trackNo])
      // Exact: a reference that differs only in case is another reference.
      expect(yield* find("customer_reference", [y.billingReference.toLowerCase()])).toEqual([])
      expect(yield* find("invoice_no", ["INV-Ü-1"])).toEqual([y.trackNo])
      expect(yield* find("invoice_no", [""])).toEqual([])
      expect(yield* find("any", [x.billingReference, "INV-Ü-1", z.trackNo])).toEqual([x.trackNo, y.trackNo].sort())
      // Each key alone, exact, and never another account's order by any of them.
      yield* docs.setInvoice(z.trackNo, "INV-Z-1")
      expect(yield* find("any", [x.trackNo])).toEqual([x.trackNo])
      expect(yield* find("any", [y.billingReference.toLowerCase(), "inv-ü-1"])).toEqual([])
      expect(yield* find("any", [z.trackNo, z.billingReference, "INV-Z-1"])).toEqual([])
      const both = yield* docs.lookupOrders({
        field: "control_no",
        values: [x.trackNo, z.trackNo],
        customers: [customer, other],
        limit: 10
      })
      expect(both.map((o) => o.order.trackNo).sort()).toEqual([x.trackNo, z.trackNo].sort())
      expect(both.find((o) => o.order.trackNo === y.trackNo)).toBeUndefined()
      const withInvoice = yield* docs.lookupOrders({
        field: "control_no",
        values: [y.trackNo],
        customers: [customer],
        limit: 1
      })
      expect(withInvoice).toEqual([
        {
          order: {
            trackNo: y.trackNo,
            reference: y.billingReference,
            requestedBy: y.contact,
            invoice: "INV-Ü-1",
            currentVersion: 1
          },
          documents: []
        }
      ])
    }
  ),

  "lookupOrders honours the limit and returns nothing for no customers or no values": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const customer = Fixtures.customerNo()
    const all = Array.from({ length: 5 }, () => Fixtures.shipment({ customerNo: customer, billingReference: "SAME" }))
    for (const s of all) yield* shipments.insert(s)
    // Documents do not count against the limit: it bounds orders.
    for (const s of all) for (let i = 0; i < 3; i++) yield* docs.insertDocument(document(s.trackNo))
    for (const field of ["customer_reference", "any"] as const) {
      const limited = yield* docs.lookupOrders({ field, values: ["SAME"], customers: [customer], limit: 3 })
      expect(limited).toHaveLength(3)
      for (const listing of limited) expect(listing.documents).toHaveLength(3)
    }
    const trackNos = all.map((s) => s.trackNo)
    for (const limit of [2, 5, 6]) {
      const byTrackNo = yield* docs.lookupOrders({
        field: "control_no",
        values: trackNos,
        customers: [customer],
        limit
      })
      expect(byTrackNo).toHaveLength(Math.min(limit, 5))
      for (const listing of byTrackNo) expect(listing.documents).toHaveLength(3)
    }
    expect(
      yield* docs.lookupOrders({ field: "customer_reference", values: ["SAME"], customers: [], limit: 3 })
    ).toEqual([])
    expect(yield* docs.lookupOrders({ field: "any", values: [], customers: [customer], limit: 3 })).toEqual([])
  }),

  "lookupOrders brings each order's current documents (listCurrent's rule), in the listed columns": Effect.gen(
    function* () {
      const { docs } = yield* stores
      const { s, t, v1, v1Hidden, sig1, v2, other } = yield* versionedOrder
      const listed = (d: Document.DocumentRecord) => ({
        id: d.id,
        kind: d.kind,
        orderVersion: d.orderVersion,
        batch: d.batch,
        page: d.page,
        type: d.type,
        sourceId: d.sourceId,
        version: d.version,
        hidden: d.hidden,
        removed: d.removed,
        capturedAt: d.capturedAt,
        createdAt: d.createdAt
      })
      const lookup = (values: ReadonlyArray<string>) =>
        Effect.map(
          docs.lookupOrders({ field: "control_no", values, customers: [s.customerNo, t.customerNo], limit: 10 }),
          (found) =>
            Object.fromEntries(
              found.map((o) => [o.order.trackNo, [...o.documents].sort((a, b) => (a.id < b.id ? -1 : 1))])
            )
        )
      const byId = (ds: ReadonlyArray<Document.DocumentRecord>) => ds.map(listed).sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(yield* lookup([s.trackNo, t.trackNo])).toEqual({
        [s.trackNo]: byId([v1, v1Hidden, sig1]),
        [t.trackNo]: byId([other])
      })
      yield* docs.setOrderVersion(s.trackNo, 1, 2)
      const later = yield* docs.lookupOrders({
        field: "control_no",
        values: [s.trackNo],
        customers: [s.customerNo],
        limit: 10
      })
      expect(later.map((o) => o.order.currentVersion)).toEqual([2])
      expect((yield* lookup([s.trackNo]))[s.trackNo]).toEqual(byId([sig1, v2]))
      // The same documents listCurrent gives, whatever the field the orders were found by.
      for (const field of ["customer_reference", "any"] as const) {
        const found = yield* docs.lookupOrders({
          field,
          values: [s.billingReference],
          customers: [s.customerNo],
          limit: 10
        })
        expect(found.flatMap((o) => o.documents.map((d) => d.id)).sort()).toEqual(sortedIds([sig1, v2]))
      }
    }
  ),

  "document insert/find/listAll roundtrip": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const a = document(s.trackNo, { contentType: "image/tiff", rotation: 270, hidden: true })
    const b = document(s.trackNo, { kind: "signature", type: "signature", batch: 0, page: 1, removed: true })
    yield* docs.insertDocument(a)
    yield* docs.insertDocument(b)
    expect(Option.getOrThrow(yield* docs.findDocument(a.id))).toEqual(a)
    expect(Option.getOrThrow(yield* docs.findDocument(b.id))).toEqual(b)
    expect(Option.isNone(yield* docs.findDocument("doc_missing"))).toBe(true)
    expect(sortedIds(yield* docs.listAll(s.trackNo))).toEqual(sortedIds([a, b]))
    expect(yield* docs.listAll(Fixtures.trackNo())).toEqual([])
  }),

  "an order's documents page newest first, each once, only the order's (property)": Effect.flatMap(
    stores,
    ({ docs, shipments }) =>
      checkProperty(listSample, ({ limit, times }) =>
        Effect.gen(function* () {
          const [s, t] = [Fixtures.shipment(), Fixtures.shipment()]
          yield* shipments.insert(s)
          yield* shipments.insert(t)
          const mine = times.map((at) => document(s.trackNo, { createdAt: Fixtures.baseTime + at }))
          for (const d of mine) {
            yield* docs.insertDocument(d)
            yield* docs.insertDocument(document(t.trackNo, { createdAt: d.createdAt }))
          }
          const key = (d: Document.DocumentRecord) => [d.createdAt, d.id] as const
          const got = yield* pageThrough(limit, key, (request) => docs.listPage(s.trackNo, request))
          expect(got).toEqual(newestFirst(mine, key))
        })
      )
  ),

  "listCurrent: the current version's attachments and every signature, hidden and removed included": Effect.gen(
    function* () {
      const { docs } = yield* stores
      const { s, t, v1, v1Hidden, sig1, v2, other } = yield* versionedOrder
      expect(sortedIds(yield* docs.listCurrent([s.trackNo]))).toEqual(sortedIds([v1, v1Hidden, sig1]))
      yield* docs.setOrderVersion(s.trackNo, 1, 2)
      expect(sortedIds(yield* docs.listCurrent([s.trackNo]))).toEqual(sortedIds([sig1, v2]))
      expect(sortedIds(yield* docs.listCurrent([s.trackNo, t.trackNo]))).toEqual(sortedIds([sig1, v2, other]))
      expect(yield* docs.listCurrent([])).toEqual([])
    }
  ),

  "findDownload: a document's order and that order's current documents, in one lookup": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const { s, v1, v1Hidden, sig1, v2, other } = yield* versionedOrder
    const order = Option.getOrThrow(yield* docs.findOrder(s.trackNo))
    const seen = Option.getOrThrow(yield* docs.findDownload(v1.id))
    expect(seen.order).toEqual(order)
    // The same documents, in the same order, as listCurrent gives.
    expect(seen.current).toEqual(yield* docs.listCurrent([s.trackNo]))
    expect(sortedIds(seen.current)).toEqual(sortedIds([v1, v1Hidden, sig1]))
    yield* docs.setInvoice(s.trackNo, "INV-9")
    yield* docs.setOrderVersion(s.trackNo, 1, 2)
    // A document that is no longer current still finds its order, whose current documents exclude it.
    const later = Option.getOrThrow(yield* docs.findDownload(v1.id))
    expect(later.order).toEqual({ ...order, invoice: "INV-9", currentVersion: 2 })
    expect(sortedIds(later.current)).toEqual(sortedIds([sig1, v2]))
    // An order with no current document: the order, and nothing current.
    const u = Fixtures.shipment()
    yield* shipments.insert(u)
    const old = document(u.trackNo, { orderVersion: 1 })
    yield* docs.insertDocument(old)
    yield* docs.setOrderVersion(u.trackNo, 1, 2)
    const empty = Option.getOrThrow(yield* docs.findDownload(old.id))
    expect(empty.order.trackNo).toBe(u.trackNo)
    expect(empty.current).toEqual([])
    expect(yield* docs.findDownload("no-such-document")).toEqual(Option.none())
    expect(Option.getOrThrow(yield* docs.findDownload(other.id)).current.map((d) => d.id)).toEqual([other.id])
  }),

  "updateDocument is optimistic: a stale version is VersionConflict and nothing changes": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const d = document(s.trackNo)
    yield* docs.insertDocument(d)
    const hidden = { ...d, hidden: true, version: 2, updatedAt: d.updatedAt + 1 }
    yield* docs.updateDocument(hidden, 1)
    expect(Option.getOrThrow(yield* docs.findDocument(d.id))).toEqual(hidden)
    const replaced = { ...d, blobKey: "f".repeat(64), contentType: "image/png" as const, version: 2 }
    const error = yield* Effect.flip(docs.updateDocument(replaced, 1))
    expect(error).toMatchObject({ _tag: "VersionConflict", trackNo: s.trackNo })
    expect(Option.getOrThrow(yield* docs.findDocument(d.id))).toEqual(hidden)
  }),

  "setOrderVersion checks the expected version": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const stale = yield* Effect.flip(docs.setOrderVersion(s.trackNo, 2, 3))
    expect(stale._tag).toBe("VersionConflict")
    yield* docs.setOrderVersion(s.trackNo, 1, 2)
    yield* docs.setOrderVersion(s.trackNo, 2, 3)
    expect((yield* Effect.flip(docs.setOrderVersion(s.trackNo, 2, 3)))._tag).toBe("VersionConflict")
    expect(Option.getOrThrow(yield* docs.findOrder(s.trackNo)).currentVersion).toBe(3)
  }),

  "setInvoice upserts without touching the version": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    yield* docs.setInvoice(s.trackNo, "A-1")
    yield* docs.setOrderVersion(s.trackNo, 1, 2)
    yield* docs.setInvoice(s.trackNo, "B-2")
    expect(Option.getOrThrow(yield* docs.findOrder(s.trackNo))).toMatchObject({ invoice: "B-2", currentVersion: 2 })
    yield* docs.setInvoice(s.trackNo, "")
    expect(Option.getOrThrow(yield* docs.findOrder(s.trackNo)).invoice).toBe("")
  }),

  "a rolled-back transaction leaves no document": Effect.gen(function* () {
    const { docs, shipments, tx } = yield* stores
    const s = Fixtures.shipment()
    yield* shipments.insert(s)
    const d = document(s.trackNo)
    const exit = yield* Effect.exit(
      tx.withTransaction(Effect.zipRight(docs.insertDocument(d), Effect.fail("boom" as const)))
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Option.isNone(yield* docs.findDocument(d.id))).toBe(true)
  }),

  "grants round-trip by id; a second grant with the same id is refused": Effect.gen(function* () {
    const { docs } = yield* stores
    const g = grant(Fixtures.baseTime + 900_000, {
      documents: [
        { id: `doc_${Fixtures.awkwardText}`, version: 1 },
        { id: "doc_2", version: 2 ** 31 - 1 },
        { id: "", version: 7 }
      ]
    })
    yield* docs.insertGrant(g)
    expect(yield* docs.findGrant(g.id)).toEqual(Option.some(g))
    const test = grant(Fixtures.baseTime, { keyMode: "test", documents: [] })
    yield* docs.insertGrant(test)
    expect(yield* docs.findGrant(test.id)).toEqual(Option.some(test))
    expect(yield* docs.findGrant(grant(Fixtures.baseTime).id)).toEqual(Option.none())
    const clash = yield* Effect.flip(docs.insertGrant({ ...test, customerNo: "9999999" }))
    expect(clash._tag).toBe("StorageError")
    expect(yield* docs.findGrant(test.id)).toEqual(Option.some(test))
  }),

  "deleteExpiredGrants deletes only expired grants, at most limit at a time": Effect.gen(function* () {
    const { docs } = yield* stores
    // Years before any other grant a shared database may hold (other cases', and the live ones
    // of tests that download), so the deletes here only ever reach this case's and earlier runs'.
    const now = Fixtures.baseTime - 5 * 365 * 86_400_000 + (counter % 1000) * 3_600_000 + 500
    const expired = [now - 3_600_000, now - 1_001, now - 1, now].map((at) => grant(at))
    // Expiring in the same second as `now`, but later: still live.
    const live = [now + 1, now + 499, now + 900_000].map((at) => grant(at))
    for (const g of [...expired, ...live]) yield* docs.insertGrant(g)
    let deleted = 0
    for (;;) {
      const n = yield* docs.deleteExpiredGrants(now, 1)
      expect(n).toBeLessThanOrEqual(1)
      deleted += n
      if (n === 0) break
    }
    // Everything that expired in an earlier second is gone; one that expired this very second
    // may wait for the next round, never longer.
    expect(deleted).toBeGreaterThanOrEqual(2)
    for (const g of expired.slice(0, 2)) expect(yield* docs.findGrant(g.id)).toEqual(Option.none())
    for (const g of live) expect(yield* docs.findGrant(g.id)).toEqual(Option.some(g))
    expect(yield* docs.deleteExpiredGrants(now + 2_000, 100)).toBeGreaterThanOrEqual(2)
    for (const g of [...expired, ...live.slice(0, 2)]) expect(yield* docs.findGrant(g.id)).toEqual(Option.none())
    expect(yield* docs.findGrant(live[2]!.id)).toEqual(Option.some(live[2]!))
  })
}

/**
 * A grant expiring at `expiresAt`, its id laid out as the port says (the expiry second, then
 * random digits; here a counter, so ids are fresh across cases and runs of a shared database).
 */
export const grant = (
  expiresAt: number,
  overrides: Partial<Omit<TicketGrant, "id" | "expiresAt">> = {}
): TicketGrant => {
  const n = ++counter
  const random = `${Date.now().toString(16).slice(-8)}${n.toString(16).padStart(12, "0")}`.slice(-20)
  return {
    id:
      Math.floor(expiresAt / 1000)
        .toString(16)
        .padStart(8, "0") + random,
    customerNo: Fixtures.customerNo(),
    keyId: `key_${Fixtures.awkwardText}`,
    keyMode: "live",
    keyGeneration: 3,
    expiresAt,
    documents: [{ id: "doc_1", version: 1 }],
    ...overrides
  }
}

/** Registers the `DocumentStore` conformance suite as a `describe(name)` block. */
export const documentStoreContract = (
  name: string,
  makeLayer: () => Layer.Layer<DocumentStoreServices, unknown>
): void => {
  describe(name, () => {
    for (const c of cases) it.effect(c, () => Effect.provide(body[c], makeLayer()))
  })
}
