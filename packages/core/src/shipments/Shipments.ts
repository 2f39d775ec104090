/**
 * @module Shipments
 *
 * An account's own shipments, as a person of the account sees them (the portal's Shipments
 * page, or an embedder's own UI): the list newest first with a search, one shipment in detail,
 * and cancel. Every program takes the account's customer number and reads nothing of any other
 * account: another account's tracking number is `ShipmentNotFound`, exactly like an unknown one.
 *
 * Download links for a shipment's documents are made by `Documents.linksFor` (in `documents/`,
 * above this folder), with the same tickets and rules as the API's documents lookup.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Page, type StorageError } from "../shared/index.js"
import * as Cancel from "./Cancel.js"
import { type DocumentRecord, visible } from "./Document.js"
import { DocumentStore } from "./DocumentStore.js"
import type { DomainEvent } from "./Event.js"
import { EventOutbox } from "./EventOutbox.js"
import * as Lifecycle from "./Lifecycle.js"
import { ShipmentNotFound } from "./Operations.js"
import type { ShipmentRecord, ShipmentSummary } from "./Shipment.js"
import { ShipmentStore } from "./ShipmentStore.js"

/** A search term longer than this matches nothing (no tracking number, reference or invoice is). */
export const maxQueryLength = 200

/** What the list is narrowed to. */
export interface SearchFilter {
  /**
   * A tracking number, a customer reference or an invoice number: exact after trimming,
   * case-insensitive, no prefix match. Empty or absent: every shipment of the account.
   */
  readonly q?: string | undefined
}

/** How the list is paged: newest first by `(createdAt, trackNo)`. */
export const summaryKeying: Page.Keying<Page.TimeKey, ShipmentSummary> = {
  schema: Page.TimeKeySchema,
  of: (s) => [s.createdAt, s.trackNo]
}

/**
 * A page of the account's shipments (live and test bookings), newest first. `q` keeps those
 * whose tracking number, customer reference or invoice number equals it, ignoring case and
 * surrounding spaces; prefixes do not match (a reference like `PO-1` must not list `PO-10`
 * through `PO-19`, and an exact match is one index lookup per field).
 */
export const search = Effect.fn("Shipments.search")(function* (
  customerNo: string,
  filter: SearchFilter,
  query: Page.Query
): Effect.fn.Return<Page.Page<ShipmentSummary>, StorageError | Page.InvalidPage, ShipmentStore> {
  const store = yield* ShipmentStore
  const q = filter.q?.trim() ?? ""
  if (q.length > maxQueryLength) {
    // Still checks the paging parameters, so a bad cursor is reported whatever the term.
    return yield* Page.read(query, summaryKeying, () => Effect.succeed({ items: [], hasMore: false }))
  }
  return yield* Page.read(query, summaryKeying, (page) =>
    store.search({ customerNo, q: q === "" ? undefined : q }, page)
  )
})

/** One entry of a shipment's event timeline, oldest first. */
export interface TimelineEntry {
  readonly id: string
  readonly type: DomainEvent["type"]
  readonly sequence: number
  readonly occurredAt: number
  readonly data: DomainEvent["data"]
}

/** One shipment of the account in full, as its page shows it. */
export interface ShipmentDetail {
  /** The record: state, stops (each with its status and ETA), legs, pieces, charge. */
  readonly shipment: ShipmentRecord
  /** The invoice number, "" until one is set. */
  readonly invoice: string
  /** The shipment's events in `sequence` order. */
  readonly events: ReadonlyArray<TimelineEntry>
  /**
   * The documents a customer may see (`Document.visible`: current order version, not hidden or
   * removed). Pass them to `Documents.linksOf` for a download ticket of each.
   */
  readonly documents: ReadonlyArray<DocumentRecord>
  /** Whether the lifecycle allows a cancel now (`Lifecycle.canCancel`): offer the button. */
  readonly cancellable: boolean
}

/**
 * Reads one of the account's shipments or fails with `ShipmentNotFound` (also for another
 * account's shipment, and for text that cannot be a tracking number).
 */
export const loadOwned: (
  customerNo: string,
  trackNo: string
) => Effect.Effect<ShipmentRecord, ShipmentNotFound | StorageError, ShipmentStore> = Effect.fnUntraced(function* (
  customerNo: string,
  trackNo: string
) {
  const found = Cancel.TRACKING_NUMBER.test(trackNo)
    ? yield* Effect.flatMap(ShipmentStore, (s) => s.findByTrackNo(trackNo))
    : Option.none()
  if (Option.isNone(found) || found.value.customerNo !== customerNo) return yield* new ShipmentNotFound({ trackNo })
  return found.value
})

/** One shipment of the account with its events, visible documents and whether it can be canceled. */
export const detail = Effect.fn("Shipments.detail")(function* (
  customerNo: string,
  trackNo: string
): Effect.fn.Return<ShipmentDetail, ShipmentNotFound | StorageError, ShipmentStore | EventOutbox | DocumentStore> {
  const shipment = yield* loadOwned(customerNo, trackNo)
  const events = yield* Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo))
  const documents = yield* DocumentStore
  const order = yield* documents.findOrder(trackNo)
  const current = Option.isSome(order) ? yield* documents.listCurrent([trackNo]) : []
  return {
    shipment,
    invoice: Option.isSome(order) ? order.value.invoice : "",
    events: events
      .filter((e) => e.customerNo === customerNo)
      .map((e) => ({ id: e.id, type: e.type, sequence: e.sequence, occurredAt: e.occurredAt, data: e.data })),
    documents: Option.isSome(order) ? visible(order.value, current) : [],
    cancellable: Lifecycle.canCancel(shipment.state)
  }
})

/**
 * Cancels one of the account's shipments (`Cancel.cancelForAccount`): the lifecycle rule and
 * the account's cancel mode, as the API's cancel applies them.
 */
export const cancel = Cancel.cancelForAccount
