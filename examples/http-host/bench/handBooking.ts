/**
 * What the hand-written bookings (ceiling.ts on SQLite, floorPg.ts on PostgreSQL) share: the
 * values Waybill derives for the bench shipment, fixed, and the few helpers that shape a row
 * the way Waybill does. No database driver here, so either target imports only its own.
 */
import { randomBytes } from "node:crypto"

/** The one account of a hand-written target. */
export const CUSTOMER_NO = "1000001"

/**
 * What Waybill derives for the bench shipment (two stops in Chicago, a car, 2 hours), fixed:
 * the ceiling measures storage, not rating.
 */
export const DERIVED = {
  pieces: 2,
  weightLb: 15,
  etaMs: 133_497_000,
  guaranteedMs: 139_199_000,
  charge: { transport: 27.53, weight: 0, stops: 0, fuel: 3.3, extras: 0, discount: 0, total: 30.83 },
  pickup: { name: "Acme Parts", city: "Chicago", state: "IL", lat: 41.8868, lon: -87.6386 },
  delivery: { name: "Bolt Labs", city: "Chicago", state: "IL", lat: 41.9543, lon: -87.6575 },
  timeZone: "America/Chicago",
  miles: 5.95,
  answer: {
    estimated_delivery: "2026-11-23T08:22:51",
    guaranteed_delivery: "2026-11-23T10:00:00",
    destination_tz: "CST"
  }
} as const

/** Waybill keeps a phone number's digits only. */
export const digits = (v: unknown): string => String(v ?? "").replace(/\D/g, "")

/** Time-ordered and unique, like Waybill's ULID event ids (so the id index grows at its end). */
export const eventId = (now: number): string =>
  `evt_${now.toString(32).padStart(10, "0")}${randomBytes(8).toString("hex")}`
