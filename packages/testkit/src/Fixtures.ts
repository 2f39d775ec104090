/**
 * @module Fixtures
 *
 * Builders for valid stored records. Each call returns a new record with fresh keys (tracking
 * number, customer number, key hash, event id), so tests that share a database never collide by
 * accident; pass overrides to pin exactly the fields a test is about. Values are deliberately
 * awkward for storage: multi-byte text, epoch-ms times beyond 32 bits, fractional money.
 */
import type { Account, Event, Shipment } from "@waybill/core"

let counter = 0
const next = (): number => ++counter

/** 2026-01-01T00:00:00Z: well past 2^31 ms, so a 32-bit timestamp column would fail loudly. */
export const baseTime = 1_767_225_600_000

/** Text that exercises encoding: accents, CJK, an astral emoji, quotes, a backslash and a newline. */
export const awkwardText = "Zoë Ångström — 東京都 🚚📦 \"quoted\" 'apos' back\\slash\nsecond line"

/** A fresh 8-digit tracking number (first digit not 0, like the real generator). */
export const trackNo = (): string => String(10_000_000 + next())

/** A fresh 7-digit customer number (first digit not 0, like the real generator). */
export const customerNo = (): string => String(1_000_000 + next())

/** A fresh 64-hex-character value shaped like an HMAC-SHA-256 key hash. */
export const keyHash = (): string => next().toString(16).padStart(8, "0").repeat(8)

/** A fresh `evt_` id (ULID-shaped; uniqueness is what storage cares about). */
export const eventId = (): string => `evt_01J${String(next()).padStart(23, "0")}`

const stop = (seq: number, role: Shipment.StopRole, trackNo: string): Shipment.StopRecord => ({
  seq,
  role,
  externalId: role === "intermediate" ? 9_000 + seq : null,
  name: `${awkwardText} #${seq}`,
  address: `${100 + seq} Main St, Suite “${seq}”`,
  city: seq === 0 ? "San José" : "New York",
  state: seq === 0 ? "CA" : "NY",
  zip: seq === 0 ? "95113" : "10001",
  contactName: "Renée O'Connor",
  phone: "+1 (555) 010-0000",
  note: seq === 0 ? "" : `leave at dock ${trackNo}`,
  latitude: seq === 0 ? 37.335_480_1 : 40.750_742_3 + seq / 1000,
  longitude: seq === 0 ? -121.893_028 : -73.996_803_7 - seq / 1000,
  timeZone: seq === 0 ? "America/Los_Angeles" : "America/New_York",
  status: "pending",
  etaAt: baseTime + seq * 3_600_000
})

/**
 * A booked shipment with three stops (pickup, one intermediate, delivery), two legs and two
 * piece details. Overriding `stops` does not recompute `legs`; keep them consistent yourself.
 */
export const shipment = (overrides: Partial<Shipment.ShipmentRecord> = {}): Shipment.ShipmentRecord => {
  const no = overrides.trackNo ?? trackNo()
  return {
    trackNo: no,
    customerNo: customerNo(),
    livemode: true,
    state: "booked",
    version: 1,
    driverId: null,
    contact: awkwardText,
    phone: "555-0100",
    email: "zoë@example.com",
    billingReference: `PO-${no}/ß`,
    serviceType: "STANDARD",
    vehicleType: "CAR",
    pieces: 3,
    weightLb: 42.75,
    signatureRequired: false,
    liftgateRequired: false,
    pickupInstructions: "Ring twice — 呼び鈴",
    deliverInstructions: "",
    readyAt: baseTime,
    requestedDeliveryAt: baseTime + 4 * 3_600_000,
    estimatedDeliveryAt: baseTime + 3 * 3_600_000 + 17,
    guaranteedDeliveryAt: baseTime + 5 * 3_600_000,
    charge: { transport: 123.45, weight: 7.1, stops: 15, fuel: 18.52, extras: 0, discount: -12.34, total: 151.73 },
    jsonstrn: JSON.stringify({ Contact: awkwardText, Pieces: 3, nested: { ok: true } }),
    createdAt: baseTime - 60_000,
    updatedAt: baseTime - 60_000,
    stops: [stop(0, "pickup", no), stop(1, "intermediate", no), stop(2, "delivery", no)],
    legs: [
      { seq: 0, fromStop: 0, toStop: 1, miles: 12.345_678 },
      { seq: 1, fromStop: 1, toStop: 2, miles: 0.5 }
    ],
    pieceDetails: [
      {
        seq: 0,
        pieceNo: "1",
        weight: "10.5",
        length: "12",
        width: "8",
        height: "4",
        pc: "2",
        sourceId: "SKU-Ä1",
        description: "Glass — handle with care 🥂"
      },
      {
        seq: 1,
        pieceNo: "2",
        weight: "",
        length: "",
        width: "",
        height: "",
        pc: "1",
        sourceId: "",
        description: ""
      }
    ],
    ...overrides
  }
}

/** A customer with a negotiated rate card and an IP allowlist (the fields stored as JSON). */
export const account = (overrides: Partial<Account.AccountRecord> = {}): Account.AccountRecord => ({
  customerNo: customerNo(),
  name: "Ünïcødé Freight 株式会社",
  cancelMode: "local",
  rateCard: { discountPercent: 12.5, vehicles: { CAR: { base: 20, perMile: 1.75 } }, floor: 15 },
  ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"],
  createdAt: baseTime,
  ...overrides
})

/**
 * An active live key slot of a fresh customer with a fresh hash. The id follows the core
 * convention `key_<customerNo>_<mode>` unless overridden.
 */
export const apiKey = (overrides: Partial<Account.ApiKeyRecord> = {}): Account.ApiKeyRecord => {
  const owner = overrides.customerNo ?? customerNo()
  const mode = overrides.mode ?? "live"
  return {
    id: `key_${owner}_${mode}`,
    customerNo: owner,
    mode,
    status: "active",
    generation: 1,
    hash: keyHash(),
    hint: `wb_${mode}_AbC1`,
    last4: "Zz9x",
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides
  }
}

/** An event ready for `EventOutbox.append` (no `sequence`: the outbox assigns it). */
export const event = (
  overrides: Partial<Omit<Event.DomainEvent, "sequence">> = {}
): Omit<Event.DomainEvent, "sequence"> => ({
  id: eventId(),
  type: "shipment.booked",
  customerNo: customerNo(),
  trackNo: trackNo(),
  livemode: true,
  occurredAt: baseTime,
  data: { state: "booked", note: awkwardText, nested: { list: [1, 2.5, "three", null, true] } },
  ...overrides
})
