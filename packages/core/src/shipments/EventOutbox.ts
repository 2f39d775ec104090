/**
 * @module EventOutbox
 *
 * Domain events appended in the same transaction as the change they record (call `append`
 * inside `Transactor.withTransaction`). Webhook delivery reads from here.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StorageError } from "../shared/index.js"
import type { DomainEvent } from "./Event.js"

export interface EventOutboxShape {
  /**
   * Stores the event with the next `sequence` of its shipment and returns it. A caller that
   * knows the sequence (1 for the event that creates a shipment, in the same transaction) may
   * pass it and save the lookup; a wrong guess fails on the unique (shipment, sequence) key.
   */
  readonly append: (
    event: Omit<DomainEvent, "sequence"> & { readonly sequence?: number }
  ) => Effect.Effect<DomainEvent, StorageError>
  /** Events of one shipment in `sequence` order. */
  readonly listByShipment: (trackNo: string) => Effect.Effect<ReadonlyArray<DomainEvent>, StorageError>
}

export class EventOutbox extends Context.Tag("@waybill/core/EventOutbox")<EventOutbox, EventOutboxShape>() {}
