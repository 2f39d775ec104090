/**
 * @module ShipmentStore
 *
 * Shipments with their stops, legs and pieces. Writes are whole: `book` stores the shipment,
 * all its parts and the event of its booking; `update` applies a lifecycle change only if the stored version is still
 * the one the change was computed from.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { DuplicateKey, Page, StorageError, VersionConflict } from "../shared/index.js"
import type { DomainEvent } from "./Event.js"
import type { ShipmentRecord, ShipmentState, ShipmentSummary, StopStatus } from "./Shipment.js"

/** A lifecycle change computed from `expectedVersion`; the store writes `expectedVersion + 1`. */
export interface ShipmentChange {
  readonly trackNo: string
  readonly expectedVersion: number
  readonly state: ShipmentState
  readonly driverId: string | null
  /** New statuses of the stops that changed. */
  readonly stops: ReadonlyArray<{ readonly seq: number; readonly status: StopStatus }>
  readonly updatedAt: number
}

/** Which of an account's shipments a search lists. */
export interface ShipmentSearch {
  /** Only this account's shipments; never any other's. */
  readonly customerNo: string
  /**
   * When given (already trimmed, not empty): only shipments whose tracking number, customer
   * reference or invoice number equals it, compared case-insensitively (SQL `lower`).
   */
  readonly q?: string | undefined
}

export interface ShipmentStoreShape {
  /**
   * Stores a new shipment with all its parts and the `shipment.booked` event that records it
   * (sequence 1, with its webhook deliveries), as one unit of work: inside a transaction the
   * fiber has open, as part of it. Fails with `DuplicateKey({ what: "track_no" })` when the
   * tracking number is taken, having stored nothing.
   */
  readonly book: (shipment: ShipmentRecord, booked: DomainEvent) => Effect.Effect<void, DuplicateKey | StorageError>
  /**
   * Stores a shipment and its parts without any event: for fixtures and imports, never for a
   * booking (see {@link book}). Fails with `DuplicateKey({ what: "track_no" })` when the tracking
   * number is taken.
   */
  readonly insert: (shipment: ShipmentRecord) => Effect.Effect<void, DuplicateKey | StorageError>
  readonly findByTrackNo: (trackNo: string) => Effect.Effect<Option.Option<ShipmentRecord>, StorageError>
  /** Fails with `VersionConflict` when the stored version is not `expectedVersion`. */
  readonly update: (change: ShipmentChange) => Effect.Effect<ShipmentRecord, VersionConflict | StorageError>
  /** A page of one account's shipments, newest first by `(createdAt, trackNo)`. */
  readonly search: (
    filter: ShipmentSearch,
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<ShipmentSummary>, StorageError>
}

export class ShipmentStore extends Context.Tag("@waybill/core/ShipmentStore")<ShipmentStore, ShipmentStoreShape>() {}
