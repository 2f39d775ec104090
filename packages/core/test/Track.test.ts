import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import type { DomainEvent, EventType } from "../src/shipments/Event.js"
import type { ZipLocation } from "../src/geo/Geo.js"
import type { ShipmentRecord, StopRecord } from "../src/shipments/Shipment.js"
import * as Track from "../src/shipments/Track.js"

const NOW = Date.UTC(2026, 10, 17, 16, 0, 0)

const stop = (seq: number, last: number, overrides: Partial<StopRecord> = {}): StopRecord => ({
  seq,
  role: seq === 0 ? "pickup" : seq === last ? "delivery" : "intermediate",
  externalId: null,
  name: `Name ${seq}`,
  address: `${seq} Main St`,
  city: "Chicago",
  state: "IL",
  zip: "60606",
  contactName: "Contact",
  phone: "3125550100",
  note: "Leave at the back",
  latitude: 41.882312,
  longitude: -87.637845,
  timeZone: "America/Chicago",
  status: "pending",
  etaAt: NOW,
  ...overrides
})

const shipment = (stops: ReadonlyArray<StopRecord>, overrides: Partial<ShipmentRecord> = {}): ShipmentRecord => ({
  trackNo: "12345678",
  customerNo: "1234567",
  livemode: true,
  state: "in_transit",
  version: 3,
  driverId: "drv-1",
  contact: "Ada Lopez",
  phone: "3125550100",
  email: "ada@example.com",
  billingReference: "PO-7",
  serviceType: "2hour",
  vehicleType: "car",
  pieces: 2,
  weightLb: 15,
  signatureRequired: false,
  liftgateRequired: false,
  pickupInstructions: "Dock 4",
  deliverInstructions: "Front desk",
  readyAt: NOW,
  requestedDeliveryAt: NOW,
  estimatedDeliveryAt: NOW + 3_600_000,
  guaranteedDeliveryAt: NOW + 7_200_000,
  charge: { transport: 20, weight: 0, stops: 0, fuel: 2.4, extras: 0, discount: 0, total: 22.4 },
  jsonstrn: "",
  createdAt: NOW,
  updatedAt: NOW,
  stops,
  legs: [],
  pieceDetails: [],
  ...overrides
})

const event = (type: EventType, sequence: number, data: Record<string, unknown> = {}): DomainEvent => ({
  id: `evt_${sequence}`,
  type,
  customerNo: "1234567",
  trackNo: "12345678",
  sequence,
  livemode: true,
  occurredAt: NOW + sequence * 60_000,
  data
})

const places = new Map<string, ZipLocation>([
  [
    "60606",
    { zip: "60606", city: "Chicago", state: "IL", latitude: 41.88, longitude: -87.64, timeZone: "America/Chicago" }
  ]
])

const piece = {
  seq: 0,
  pieceNo: "P-1",
  weight: "5",
  length: "10",
  width: "8",
  height: "4",
  pc: "1",
  sourceId: "SKU-9",
  description: "Fragile glass"
}

describe("Track views", () => {
  const s = shipment([stop(0, 1, { status: "completed" }), stop(1, 1, { zip: "60613", city: "Lakeview" })], {
    pieceDetails: [piece]
  })
  const events = [
    event("shipment.booked", 1, { estimated_charge: 22.4 }),
    event("shipment.assigned", 2, { driver_id: "drv-1" }),
    event("document.available", 3, { type: "bol" })
  ]

  it("coarse: status, ZIP-level stops, event types and times, nothing else", () => {
    expect(Track.coarseView(s, events, places)).toEqual({
      track_no: "12345678",
      detail: "coarse",
      status: "in_transit",
      service_type: "2hour",
      vehicle_type: "car",
      estimated_delivery: "2026-11-17T11:00:00",
      guaranteed_delivery: "2026-11-17T12:00:00",
      destination_tz: "CST",
      stops: [
        {
          seq: 0,
          role: "pickup",
          status: "completed",
          zip: "60606",
          city: "Chicago",
          state: "IL",
          latitude: 41.88,
          longitude: -87.64
        },
        // A ZIP the place table does not know shows no city, never the customer's text.
        {
          seq: 1,
          role: "delivery",
          status: "pending",
          zip: "60613",
          city: "",
          state: "",
          latitude: 41.88,
          longitude: -87.64
        }
      ],
      events: [
        { type: "shipment.booked", occurred_at: "2026-11-17T16:01:00.000Z" },
        { type: "shipment.assigned", occurred_at: "2026-11-17T16:02:00.000Z" }
      ]
    })
  })

  it("precise: stop places, stored positions, every event with its data, documents", () => {
    const v = Track.preciseView(s, events, [])
    expect(v.detail).toBe("precise")
    expect(v.stops[0]).toEqual({
      seq: 0,
      role: "pickup",
      stop_id: null,
      status: "completed",
      name: "Name 0",
      address: "0 Main St",
      city: "Chicago",
      state: "IL",
      zip: "60606",
      contact_name: "Contact",
      phone_no: "3125550100",
      stop_note: "Leave at the back",
      latitude: 41.882312,
      longitude: -87.637845,
      eta: "2026-11-17T10:00:00",
      tz: "CST"
    })
    expect(v.piece_details).toEqual([
      {
        piece_no: "P-1",
        piece_weight: "5",
        length: "10",
        width: "8",
        height: "4",
        pc: "1",
        id: "SKU-9",
        description: "Fragile glass"
      }
    ])
    expect([
      v.contact,
      v.phone,
      v.email,
      v.signature_required,
      v.liftgate_required,
      v.pickup_instructions,
      v.deliver_instructions
    ]).toEqual(["Ada Lopez", "3125550100", "ada@example.com", false, false, "Dock 4", "Front desk"])
    expect(v.events.map((e) => [e.type, e.sequence, e.data])).toEqual([
      ["shipment.booked", 1, { estimated_charge: 22.4 }],
      ["shipment.assigned", 2, { driver_id: "drv-1" }],
      ["document.available", 3, { type: "bol" }]
    ])
    expect([v.livemode, v.pieces, v.weight, v.billing_reference, v.documents]).toEqual([true, 2, 15, "PO-7", []])
  })

  it("coarsen rounds to two decimals", () => {
    expect([Track.coarsen(41.882312), Track.coarsen(-87.637845), Track.coarsen(0.005)]).toEqual([41.88, -87.64, 0.01])
  })
})

/** A marker no legitimate field holds, so finding it in the JSON means a leak. */
const secret = fc.string({ minLength: 1, maxLength: 20 }).map((s) => `\u2063${s}\u2063`)
const coordinate = (max: number) => fc.double({ min: -max, max, noNaN: true, noDefaultInfinity: true })

const stopArb = fc.record({
  name: secret,
  address: secret,
  city: secret,
  state: secret,
  contactName: secret,
  phone: secret,
  note: secret,
  latitude: coordinate(89),
  longitude: coordinate(179),
  zip: fc.constantFrom("60606", "60613", "10001")
})

const twoDecimals = (x: number) => Math.abs(x * 100 - Math.round(x * 100)) < 1e-6

describe("Track properties", () => {
  it.prop(
    "the coarse view never reveals a name, street address, contact, note, piece detail, event data or exact position",
    {
      stops: fc.array(stopArb, { minLength: 2, maxLength: 6 }),
      contact: secret,
      reference: secret,
      eventData: fc.array(secret, { maxLength: 4 }),
      pieceText: fc.array(secret, { maxLength: 3 })
    },
    ({ contact, eventData, pieceText, reference, stops }) => {
      const records = stops.map((x, i) => stop(i, stops.length - 1, x))
      const s = shipment(records, {
        contact,
        phone: contact,
        billingReference: reference,
        pickupInstructions: contact,
        deliverInstructions: reference,
        email: reference,
        pieceDetails: pieceText.map((t, seq) => ({
          seq,
          pieceNo: t,
          weight: t,
          length: t,
          width: t,
          height: t,
          pc: t,
          sourceId: t,
          description: t
        }))
      })
      const events = eventData.map((d, i) => event("shipment.stop_arrived", i + 1, { note: d, [d]: d }))
      const view = Track.coarseView(s, events, places)
      const json = JSON.stringify(view)
      expect(json).not.toContain("\u2063")
      for (const [i, st] of view.stops.entries()) {
        expect(Object.keys(st).sort()).toEqual([
          "city",
          "latitude",
          "longitude",
          "role",
          "seq",
          "state",
          "status",
          "zip"
        ])
        expect(twoDecimals(st.latitude) && twoDecimals(st.longitude)).toBe(true)
        expect(Math.abs(st.latitude - records[i]!.latitude)).toBeLessThanOrEqual(0.005 + 1e-9)
      }
      for (const e of view.events) expect(Object.keys(e).sort()).toEqual(["occurred_at", "type"])
    },
    { fastCheck: { numRuns: 200 } }
  )
})

describe("every field the booking API accepts is shown back", () => {
  // One distinct marker per accepted field, so a field missing from a view is named.
  const marked = (field: string) => `<${field}>`
  const stopFields = ["name", "address", "city", "state", "contactName", "phone", "note"] as const
  const pieceFields = ["pieceNo", "weight", "length", "width", "height", "pc", "sourceId", "description"] as const
  const shipmentFields = [
    "contact",
    "phone",
    "email",
    "billingReference",
    "pickupInstructions",
    "deliverInstructions"
  ] as const
  const stops = [0, 1, 2].map((seq) =>
    stop(seq, 2, Object.fromEntries(stopFields.map((f) => [f, marked(`stop${seq}.${f}`)])) as Partial<StopRecord>)
  )
  const record = shipment(stops, {
    ...Object.fromEntries(shipmentFields.map((f) => [f, marked(f)])),
    signatureRequired: true,
    liftgateRequired: true,
    jsonstrn: marked("jsonstrn"),
    pieceDetails: [0, 1].map((seq) => ({
      seq,
      ...(Object.fromEntries(pieceFields.map((f) => [f, marked(`piece${seq}.${f}`)])) as Record<
        (typeof pieceFields)[number],
        string
      >)
    }))
  })
  const expected = [
    ...shipmentFields.map(marked),
    ...[0, 1, 2].flatMap((seq) => stopFields.map((f) => marked(`stop${seq}.${f}`))),
    ...[0, 1].flatMap((seq) => pieceFields.map((f) => marked(`piece${seq}.${f}`)))
  ]

  it("in the owner's precise tracking view, and none of it in the coarse view", () => {
    const precise = JSON.stringify(Track.preciseView(record, [], []))
    const coarse = JSON.stringify(Track.coarseView(record, [], places))
    for (const m of expected) {
      const escaped = JSON.stringify(m).slice(1, -1)
      expect(precise, m).toContain(escaped)
      expect(coarse, m).not.toContain(escaped)
    }
  })
})
