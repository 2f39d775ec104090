/**
 * @module EventOutbox
 *
 * Domain events appended in the same transaction as the change they record (call `append`
 * inside `Transactor.withTransaction`). Webhook delivery reads from here.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StorageError } from "./Errors.js"
import type { DomainEvent } from "./Event.js"

export interface EventOutboxShape {
  /** Stores the event with the next `sequence` of its shipment and returns it. */
  readonly append: (event: Omit<DomainEvent, "sequence">) => Effect.Effect<DomainEvent, StorageError>
  /** Events of one shipment in `sequence` order. */
  readonly listByShipment: (trackNo: string) => Effect.Effect<ReadonlyArray<DomainEvent>, StorageError>
}

export class EventOutbox extends Context.Tag("@waybill/core/EventOutbox")<EventOutbox, EventOutboxShape>() {}
