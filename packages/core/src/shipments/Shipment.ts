/**
 * @module Shipment
 *
 * The stored shape of a booked shipment: the order, its stops (pickup first, final delivery
 * last), the legs joining consecutive stops, and the piece details as given. Times are epoch
 * milliseconds (UTC); each stop carries its own IANA time zone so local times are derived, never
 * stored twice.
 */

/** Lifecycle states (see `Lifecycle`). */
export type ShipmentState =
  | "booked"
  | "assigned"
  | "picked_up"
  | "in_transit"
  | "attempt_failed"
  | "returning"
  | "delivered"
  | "returned"
  | "canceled"
  | "failed"

export type StopStatus = "pending" | "arrived" | "completed" | "attempt_failed" | "skipped"

export type StopRole = "pickup" | "intermediate" | "delivery"

export interface StopRecord {
  /** 0-based position in the route. */
  readonly seq: number
  readonly role: StopRole
  /** `stop_id` from multistop_route, or null for Pickup and Deliver fields. */
  readonly externalId: number | null
  readonly name: string
  readonly address: string
  readonly city: string
  readonly state: string
  readonly zip: string
  readonly contactName: string
  readonly phone: string
  readonly note: string
  readonly latitude: number
  readonly longitude: number
  readonly timeZone: string
  readonly status: StopStatus
  /** Estimated arrival (epoch ms). */
  readonly etaAt: number
}

import type { LegRecord } from "../geo/index.js"

export type { LegRecord }

export interface PieceRecord {
  readonly seq: number
  readonly pieceNo: string
  readonly weight: string
  readonly length: string
  readonly width: string
  readonly height: string
  readonly pc: string
  readonly sourceId: string
  readonly description: string
}

/** A charge split into the parts a customer sees (USD, rounded to cents). */
export interface ChargeBreakdown {
  readonly transport: number
  readonly weight: number
  readonly stops: number
  readonly fuel: number
  readonly extras: number
  readonly discount: number
  readonly total: number
}

export interface ShipmentRecord {
  readonly trackNo: string
  readonly customerNo: string
  /** false for bookings made with a test key: same rules, never dispatched. */
  readonly livemode: boolean
  readonly state: ShipmentState
  /** Bumped on every change; guards concurrent writers. */
  readonly version: number
  readonly driverId: string | null
  readonly contact: string
  readonly phone: string
  readonly email: string
  readonly billingReference: string
  readonly serviceType: string
  readonly vehicleType: string
  readonly pieces: number
  readonly weightLb: number
  readonly signatureRequired: boolean
  readonly liftgateRequired: boolean
  readonly pickupInstructions: string
  readonly deliverInstructions: string
  readonly readyAt: number
  readonly requestedDeliveryAt: number
  readonly estimatedDeliveryAt: number
  readonly guaranteedDeliveryAt: number
  readonly charge: ChargeBreakdown
  readonly jsonstrn: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly stops: ReadonlyArray<StopRecord>
  readonly legs: ReadonlyArray<LegRecord>
  readonly pieceDetails: ReadonlyArray<PieceRecord>
}

/** A stop as the booking gave it, under the wire names of `multistop_route` (views show it back). */
export const stopJson = (s: StopRecord) => ({
  stop_id: s.externalId,
  name: s.name,
  address: s.address,
  city: s.city,
  state: s.state,
  zip: s.zip,
  contact_name: s.contactName,
  phone_no: s.phone,
  stop_note: s.note
})

/**
 * A `piece_details` row under the names the API accepted it with (interface 2.2), for the views
 * that show it back (operator view, the owner's precise tracking view).
 */
export const pieceJson = (p: PieceRecord) => ({
  piece_no: p.pieceNo,
  piece_weight: p.weight,
  length: p.length,
  width: p.width,
  height: p.height,
  pc: p.pc,
  id: p.sourceId,
  description: p.description
})

/** A city and state, as a list row shows where a shipment starts or ends. */
export interface Place {
  readonly city: string
  readonly state: string
}

/**
 * One row of an account's shipment list (the portal's Shipments page): what a person scans for,
 * without the stops, pieces and contact details a detail view reads.
 */
export interface ShipmentSummary {
  readonly trackNo: string
  readonly customerNo: string
  readonly livemode: boolean
  readonly createdAt: number
  readonly state: ShipmentState
  /** The customer reference (`billing_reference`). */
  readonly reference: string
  /** The invoice number, "" until one is set. */
  readonly invoice: string
  readonly serviceType: string
  readonly vehicleType: string
  /** The pickup (first stop). */
  readonly from: Place
  /** The final delivery (last stop). */
  readonly to: Place
  /** The total charge in USD. */
  readonly total: number
}

/** The stop where the shipment ends (last of the route). */
export const destination = (s: Pick<ShipmentRecord, "stops">): StopRecord => s.stops[s.stops.length - 1]!
