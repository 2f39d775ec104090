/**
 * @module DocumentStoreContract
 *
 * The conformance suite of `DocumentStore`: order state (lazy version 1, invoice numbers),
 * lookups by each field restricted to the given customers, documents round trips, the current
 * listing, optimistic updates, and transactions. Orders are shipments, so the suite writes them
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
import { type Document, DocumentStore, ShipmentStore, Transactor } from "@waybill/core"
import * as Fixtures from "./Fixtures.js"
import { checkProperty, listSample, newestFirst, pageThrough } from "./internal/paging.js"

/** The services this suite exercises. */
export type DocumentStoreServices = DocumentStore | ShipmentStore | Transactor

export const cases = [
  "findOrder joins the shipment; no state means version 1 and no invoice",
  "findOrders by control_no, customer_reference, invoice_no and any, only for the given customers",
  "findOrders honours the limit and returns nothing for no customers or no values",
  "document insert/find/listAll roundtrip",
  "an order's documents page newest first, each once, only the order's (property)",
  "listCurrent: the current version's attachments and every signature, hidden and removed included",
  "findDownload: a document's order and that order's current documents, in one lookup",
  "updateDocument is optimistic: a stale version is VersionConflict and nothing changes",
  "setOrderVersion checks the expected version",
  "setInvoice upserts without touching the version",
  "a rolled-back transaction leaves no document"
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

  "findOrders by control_no, customer_reference, invoice_no and any, only for the given customers": Effect.gen(
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
        Effect.map(docs.findOrders({ field, values, customers: [customer], limit: 10 }), (os) =>
          os.map((o) => o.trackNo).sort()
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
      const both = yield* docs.findOrders({
        field: "control_no",
        values: [x.trackNo, z.trackNo],
        customers: [customer, other],
        limit: 10
      })
      expect(both.map((o) => o.trackNo).sort()).toEqual([x.trackNo, z.trackNo].sort())
      expect(both.find((o) => o.trackNo === y.trackNo)).toBeUndefined()
      const withInvoice = yield* docs.findOrders({
        field: "control_no",
        values: [y.trackNo],
        customers: [customer],
        limit: 1
      })
      expect(withInvoice[0]).toMatchObject({ invoice: "INV-Ü-1", currentVersion: 1, customerNo: customer })
    }
  ),

  "findOrders honours the limit and returns nothing for no customers or no values": Effect.gen(function* () {
    const { docs, shipments } = yield* stores
    const customer = Fixtures.customerNo()
    const all = Array.from({ length: 5 }, () => Fixtures.shipment({ customerNo: customer, billingReference: "SAME" }))
    for (const s of all) yield* shipments.insert(s)
    const limited = yield* docs.findOrders({
      field: "customer_reference",
      values: ["SAME"],
      customers: [customer],
      limit: 3
    })
    expect(limited).toHaveLength(3)
    expect(yield* docs.findOrders({ field: "customer_reference", values: ["SAME"], customers: [], limit: 3 })).toEqual(
      []
    )
    expect(yield* docs.findOrders({ field: "any", values: [], customers: [customer], limit: 3 })).toEqual([])
  }),

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
  })
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
