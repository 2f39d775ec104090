/**
 * @module Event
 *
 * Domain events, appended in the same transaction as the change they describe. `sequence`
 * grows per shipment so receivers can drop stale events; `id` is stable across redeliveries.
 */

export type EventType =
  | "shipment.booked"
  | "shipment.assigned"
  | "shipment.unassigned"
  | "shipment.picked_up"
  | "shipment.stop_arrived"
  | "shipment.stop_completed"
  | "shipment.attempt_failed"
  | "shipment.in_transit"
  | "shipment.delivered"
  | "shipment.returning"
  | "shipment.returned"
  | "shipment.canceled"
  | "shipment.failed"
  | "document.available"
  | "webhook.test"

export interface DomainEvent {
  /** `evt_` + ULID. */
  readonly id: string
  readonly type: EventType
  readonly customerNo: string
  readonly trackNo: string
  readonly sequence: number
  readonly livemode: boolean
  readonly occurredAt: number
  readonly data: Readonly<Record<string, unknown>>
}
