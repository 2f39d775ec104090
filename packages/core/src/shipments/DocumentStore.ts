/**
 * @module DocumentStore
 *
 * Order versions, invoice numbers and documents (attachment batches, pages, signatures,
 * visibility, document versions), and the download grants the documents lookup issues. The
 * bytes live in the `BlobStore`; this port keeps what they are and who may see them. Orders are
 * the shipments of `ShipmentStore`: an order without a stored state is at version 1 with no
 * invoice number.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { DocumentRecord, OrderRecord, VisibilityFields } from "./Document.js"
import type { Page, StorageError, VersionConflict } from "../shared/index.js"

/** Which order field a lookup compares its values with; `any` is the legacy `id` (all three). */
export type LookupField = "control_no" | "customer_reference" | "invoice_no" | "any"

export interface OrderQuery {
  readonly field: LookupField
  /** Exact values (already split, trimmed and deduplicated). */
  readonly values: ReadonlyArray<string>
  /** Only orders of these customers are found (the credential's readable accounts). */
  readonly customers: ReadonlyArray<string>
  /** Return at most this many orders (callers ask one more than they accept to detect overflow). */
  readonly limit: number
}

/** An order as a documents lookup lists it: what the answer shows and the visibility rule reads. */
export type ListedOrder = Pick<OrderRecord, "trackNo" | "reference" | "requestedBy" | "invoice" | "currentVersion">

/** A document as a lookup lists it: what the answer shows, the visibility rule reads and a ticket grants. */
export type ListedDocument = VisibilityFields & Pick<DocumentRecord, "type" | "sourceId" | "version">

/** One order a lookup found, with its current documents. */
export interface OrderListing {
  readonly order: ListedOrder
  /** What {@link DocumentStoreShape.listCurrent} gives for the order, in no particular order. */
  readonly documents: ReadonlyArray<ListedDocument>
}

/**
 * What the download tickets of one lookup (or one set of portal links) grant, stored as one row:
 * the ticket with index `i` grants `documents[i]` at that version, to the key's holder, until
 * `expiresAt`. The download re-checks all of it against the key and the document as they are then.
 */
export interface TicketGrant {
  /**
   * 28 lowercase hex digits: the second of `expiresAt` (8 digits, big-endian) and 80 random bits,
   * so the grants that have expired are a range of the primary key.
   */
  readonly id: string
  readonly customerNo: string
  readonly keyId: string
  readonly keyMode: "live" | "test"
  readonly keyGeneration: number
  /** Epoch ms; the grant's tickets are dead from this instant on. */
  readonly expiresAt: number
  readonly documents: ReadonlyArray<{ readonly id: string; readonly version: number }>
}

export interface DocumentStoreShape {
  /**
   * Orders of `customers` whose field equals one of `values`, at most `limit`, each with its
   * current documents: one read for a whole documents lookup. Orders in no particular order.
   */
  readonly lookupOrders: (query: OrderQuery) => Effect.Effect<ReadonlyArray<OrderListing>, StorageError>
  /** One order by tracking number, whoever owns it (operator use and download re-checks). */
  readonly findOrder: (trackNo: string) => Effect.Effect<Option.Option<OrderRecord>, StorageError>
  /**
   * Per order: the attachments of its current version and every signature, hidden and removed
   * ones included (what customers may see is core's rule, `Document.visible`).
   */
  readonly listCurrent: (trackNos: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<DocumentRecord>, StorageError>
  /**
   * For a download: the order that holds document `id`, with that order's current documents
   * (what {@link listCurrent} gives for it), in one lookup; none when no document has that id.
   */
  readonly findDownload: (
    id: string
  ) => Effect.Effect<
    Option.Option<{ readonly order: OrderRecord; readonly current: ReadonlyArray<DocumentRecord> }>,
    StorageError
  >
  /** Every document of an order, every version, for operators. */
  readonly listAll: (trackNo: string) => Effect.Effect<ReadonlyArray<DocumentRecord>, StorageError>
  /** A page of every document of an order, every version, newest first by `(createdAt, id)`. */
  readonly listPage: (
    trackNo: string,
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<DocumentRecord>, StorageError>
  readonly findDocument: (id: string) => Effect.Effect<Option.Option<DocumentRecord>, StorageError>
  readonly insertDocument: (document: DocumentRecord) => Effect.Effect<void, StorageError>
  /**
   * Writes `document` (same id) if the stored version is still `expectedVersion`; otherwise
   * `VersionConflict` and nothing changes.
   */
  readonly updateDocument: (
    document: DocumentRecord,
    expectedVersion: number
  ) => Effect.Effect<void, VersionConflict | StorageError>
  /** Moves the order to `version` if it is still at `expectedVersion` (VersionConflict otherwise). */
  readonly setOrderVersion: (
    trackNo: string,
    expectedVersion: number,
    version: number
  ) => Effect.Effect<void, VersionConflict | StorageError>
  /** Stores the order's invoice number ("" clears it). */
  readonly setInvoice: (trackNo: string, invoice: string) => Effect.Effect<void, StorageError>
  /** Stores a new grant (its id is fresh: a clash is a `StorageError`). */
  readonly insertGrant: (grant: TicketGrant) => Effect.Effect<void, StorageError>
  /** The grant with this id, expired or not (it may have been deleted once expired). */
  readonly findGrant: (id: string) => Effect.Effect<Option.Option<TicketGrant>, StorageError>
  /**
   * Deletes at most `limit` grants that expired at or before `before` (epoch ms); answers how
   * many it deleted, so a caller repeats while that is `limit`.
   */
  readonly deleteExpiredGrants: (before: number, limit: number) => Effect.Effect<number, StorageError>
}

export class DocumentStore extends Context.Tag("@waybill/core/DocumentStore")<DocumentStore, DocumentStoreShape>() {}
