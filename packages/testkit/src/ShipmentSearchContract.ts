/**
 * @module ShipmentSearchContract
 *
 * The conformance suite of `ShipmentStore.search`, the list behind an account's Shipments page:
 * one account's shipments newest first by `(createdAt, trackNo)`, paged by keyset, narrowed by
 * an exact, case-insensitive tracking number, customer reference or invoice number, and never
 * a row of another account. It runs with `DocumentStore`, which sets invoice numbers.
 *
 * Every case uses fresh customer numbers, so a `makeLayer` that returns a shared database works.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import { DocumentStore, type Page, type Shipment, ShipmentStore } from "@waybill/core"
import * as Fixtures from "./Fixtures.js"
import { registerCases, skipReasons } from "./internal/contract.js"
import { checkProperty, listSample, newestFirst, pageThrough } from "./internal/paging.js"

/** The services this suite exercises. */
export type ShipmentSearchServices = ShipmentStore | DocumentStore

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "search pages one account newest first, each once, never another account's (property)",
  "search matches a tracking number, a reference or an invoice exactly, ignoring case",
  "search rows carry state, reference, invoice, service, vehicle, from, to and total",
  "a search term never finds another account's shipment (property)"
] as const

/** The name of one case of the suite. */
export type ShipmentSearchCase = (typeof cases)[number]

/** A case an adapter cannot pass yet, with the reason shown in the test report. */
export interface SkippedShipmentSearchCase {
  readonly case: ShipmentSearchCase
  readonly reason: string
}

const services = Effect.all({ shipments: ShipmentStore, documents: DocumentStore })

const keyOf = (s: { readonly createdAt: number; readonly trackNo: string }): Page.TimeKey => [s.createdAt, s.trackNo]

/** Every row of one search, read `limit` at a time. */
const searchAll = (customerNo: string, q: string | undefined, limit = 7) =>
  Effect.flatMap(ShipmentStore, (store) => pageThrough(limit, keyOf, (page) => store.search({ customerNo, q }, page)))

const trackNos = (rows: ReadonlyArray<{ readonly trackNo: string }>) => rows.map((r) => r.trackNo)

/** ASCII text from a few letters in both cases, so many samples share a term up to case. */
const term = fc
  .array(fc.constantFrom("a", "A", "b", "B", "-", "1"), { minLength: 1, maxLength: 3 })
  .map((cs) => cs.join(""))

const body: { readonly [K in ShipmentSearchCase]: Effect.Effect<void, unknown, ShipmentSearchServices> } = {
  "search pages one account newest first, each once, never another account's (property)": checkProperty(
    fc.record({ sample: listSample, owners: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 12 }) }),
    ({ owners, sample: { limit, times } }) =>
      Effect.gen(function* () {
        const { shipments } = yield* services
        const accounts = [Fixtures.customerNo(), Fixtures.customerNo(), Fixtures.customerNo()]
        const stored: Array<Shipment.ShipmentRecord> = []
        for (const [i, t] of times.entries()) {
          const s = Fixtures.shipment({ customerNo: accounts[owners[i] ?? 0]!, createdAt: Fixtures.baseTime + t })
          yield* shipments.insert(s)
          stored.push(s)
        }
        for (const customerNo of accounts) {
          const listed = yield* pageThrough(limit, keyOf, (page) => shipments.search({ customerNo }, page))
          const expected = newestFirst(
            stored.filter((s) => s.customerNo === customerNo),
            keyOf
          )
          expect(trackNos(listed)).toEqual(trackNos(expected))
          for (const row of listed) expect(row.customerNo).toBe(customerNo)
        }
      })
  ),

  "search matches a tracking number, a reference or an invoice exactly, ignoring case": Effect.gen(function* () {
    const { documents, shipments } = yield* services
    const a = Fixtures.customerNo()
    const b = Fixtures.customerNo()
    const byRef = Fixtures.shipment({ customerNo: a, billingReference: "PO-Abc-7", createdAt: Fixtures.baseTime + 1 })
    const byRefToo = Fixtures.shipment({ customerNo: a, billingReference: "po-abc-7", createdAt: Fixtures.baseTime })
    const byInvoice = Fixtures.shipment({ customerNo: a, billingReference: "other" })
    const longer = Fixtures.shipment({ customerNo: a, billingReference: "PO-Abc-70" })
    const theirs = Fixtures.shipment({ customerNo: b, billingReference: "PO-Abc-7" })
    for (const s of [byRef, byRefToo, byInvoice, longer, theirs]) yield* shipments.insert(s)
    yield* documents.setInvoice(byInvoice.trackNo, "INV-Zz9")
    yield* documents.setInvoice(theirs.trackNo, "INV-Zz9")

    expect(trackNos(yield* searchAll(a, "pO-aBc-7"))).toEqual([byRef.trackNo, byRefToo.trackNo])
    expect(trackNos(yield* searchAll(a, "inv-zz9"))).toEqual([byInvoice.trackNo])
    expect(trackNos(yield* searchAll(a, byInvoice.trackNo))).toEqual([byInvoice.trackNo])
    // No prefix match, and another account's tracking number is not found.
    expect(yield* searchAll(a, "PO-Abc")).toEqual([])
    expect(yield* searchAll(a, theirs.trackNo)).toEqual([])
    expect(trackNos(yield* searchAll(b, "PO-ABC-7"))).toEqual([theirs.trackNo])
    expect(trackNos(yield* searchAll(b, "INV-ZZ9"))).toEqual([theirs.trackNo])
    expect(yield* searchAll(b, byRef.trackNo)).toEqual([])
  }),

  "search rows carry state, reference, invoice, service, vehicle, from, to and total": Effect.gen(function* () {
    const { documents, shipments } = yield* services
    const s = Fixtures.shipment({ livemode: false })
    yield* shipments.insert(s)
    const without = yield* shipments.search({ customerNo: s.customerNo }, { limit: 5 })
    expect(without.items[0]?.invoice).toBe("")
    yield* documents.setInvoice(s.trackNo, "INV-1")
    const page = yield* shipments.search({ customerNo: s.customerNo }, { limit: 5 })
    expect(page.hasMore).toBe(false)
    const first = s.stops[0]!
    const last = s.stops[s.stops.length - 1]!
    expect(page.items).toEqual([
      {
        trackNo: s.trackNo,
        customerNo: s.customerNo,
        livemode: false,
        createdAt: s.createdAt,
        state: s.state,
        reference: s.billingReference,
        invoice: "INV-1",
        serviceType: s.serviceType,
        vehicleType: s.vehicleType,
        from: { city: first.city, state: first.state },
        to: { city: last.city, state: last.state },
        total: s.charge.total
      } satisfies Shipment.ShipmentSummary
    ])
  }),

  "a search term never finds another account's shipment (property)": checkProperty(
    fc.record({
      rows: fc.array(fc.record({ owner: fc.integer({ min: 0, max: 1 }), reference: term, invoice: term }), {
        maxLength: 8
      }),
      q: term
    }),
    ({ q, rows }) =>
      Effect.gen(function* () {
        const { documents, shipments } = yield* services
        const accounts = [Fixtures.customerNo(), Fixtures.customerNo()]
        const stored: Array<{ readonly s: Shipment.ShipmentRecord; readonly invoice: string }> = []
        for (const row of rows) {
          const s = Fixtures.shipment({ customerNo: accounts[row.owner]!, billingReference: row.reference })
          yield* shipments.insert(s)
          yield* documents.setInvoice(s.trackNo, row.invoice)
          stored.push({ s, invoice: row.invoice })
        }
        const same = (x: string) => x.toLowerCase() === q.toLowerCase()
        for (const customerNo of accounts) {
          const found = yield* searchAll(customerNo, q, 3)
          const expected = newestFirst(
            stored
              .filter(({ invoice, s }) => s.customerNo === customerNo && (same(s.billingReference) || same(invoice)))
              .map(({ s }) => s),
            keyOf
          )
          expect(trackNos(found)).toEqual(trackNos(expected))
        }
      })
  )
}

/**
 * Registers the `ShipmentStore.search` conformance suite as a `describe(name)` block; `makeLayer`
 * must provide `ShipmentStore` and `DocumentStore` over the same database.
 */
export const shipmentSearchContract = (
  name: string,
  makeLayer: () => Layer.Layer<ShipmentSearchServices, unknown>,
  options: { readonly skip?: ReadonlyArray<SkippedShipmentSearchCase> } = {}
): void => {
  registerCases(name, cases, body, makeLayer, skipReasons("shipmentSearchContract", name, cases, options.skip))
}
