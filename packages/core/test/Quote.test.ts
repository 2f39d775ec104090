import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import type { RateCard } from "../src/access/Account.js"
import * as Booking from "../src/booking/Booking.js"
import { defaults } from "../src/shared/Config.js"
import type { ZipLocation } from "../src/geo/Geo.js"
import { formatInZone } from "../src/geo/LocalTime.js"
import * as Quote from "../src/booking/Quote.js"

const Z = (zip: string, city: string, state: string, latitude: number, longitude: number, timeZone: string) =>
  [zip, { zip, city, state, latitude, longitude, timeZone }] as [string, ZipLocation]
const zips = new Map<string, ZipLocation>([
  Z("60606", "Chicago", "IL", 41.8823, -87.6378, "America/Chicago"),
  Z("60613", "Chicago", "IL", 41.9543, -87.6575, "America/Chicago"),
  Z("60201", "Evanston", "IL", 42.0464, -87.6946, "America/Chicago"),
  Z("46320", "Hammond", "IN", 41.612, -87.512, "America/Chicago"),
  Z("10001", "New York", "NY", 40.7484, -73.9967, "America/New_York"),
  Z("85001", "Phoenix", "AZ", 33.4484, -112.074, "America/Phoenix")
])
const zipCodes = [...zips.keys()]

// Tuesday 2026-11-17 10:00 in Chicago.
const NOW = Date.UTC(2026, 10, 17, 16, 0, 0)
const ctx = (rateCard: RateCard | null = null, nowMs = NOW, z = zips): Quote.QuoteContext => ({
  config: defaults,
  nowMs,
  zips: z,
  rateCard
})

const query =
  (params: Record<string, string | ReadonlyArray<string>>): Quote.Query =>
  (name) => {
    const v = params[name]
    return v === undefined ? [] : typeof v === "string" ? [v] : v
  }

const parse = (params: Record<string, string | ReadonlyArray<string>>, z: ReadonlyMap<string, ZipLocation> = zips) =>
  Quote.parseQuery(query(params), defaults, z)
const request = (
  params: Record<string, string | ReadonlyArray<string>>,
  z: ReadonlyMap<string, ZipLocation> = zips
) => {
  const r = parse(params, z)
  if (Either.isLeft(r)) throw new Error(r.left.join("; "))
  return r.right
}
const priced = (params: Record<string, string | ReadonlyArray<string>>, c = ctx()) => {
  const r = Quote.price(request(params), c)
  if (Either.isLeft(r)) throw new Error(r.left.join("; "))
  return r.right
}
const problems = (params: Record<string, string | ReadonlyArray<string>>, c = ctx()) => {
  const r = parse(params)
  if (Either.isLeft(r)) return r.left
  const p = Quote.price(r.right, c)
  return Either.isLeft(p) ? p.left : []
}

describe("Quote.parseQuery", () => {
  it("names every problem by its parameter", () => {
    expect(problems({})).toEqual(["origin is required", "destination is required", "weight is required"])
    expect(
      problems({
        origin: "6060",
        destination: "abcde",
        weight: "-3",
        pieces: "1.5",
        stops: "1",
        service: "teleport",
        vehicle: "rocket",
        liftgate: "maybe"
      })
    ).toEqual([
      "origin must be a 5-digit ZIP code",
      "destination must be a 5-digit ZIP code",
      "weight must be a positive number of pounds",
      "pieces must be a positive whole number",
      "stops must be a whole number from 2 to 50",
      'service "teleport" is not offered (one of: rush, 2hour, 4hour, sameday, nextday, scheduled)',
      'vehicle "rocket" is not offered (one of: bike, car, suv, cargovan, boxtruck)',
      "liftgate must be Y or N"
    ])
    expect(problems({ origin: ["60606", "60613"], destination: "60613", weight: "5" })).toEqual([
      "origin was given more than once"
    ])
  })

  it("reads weights with units, ZIP+4, aliases and defaults", () => {
    const r = request({
      origin: "60606-1234",
      destination: "60613",
      weight: "1,200 lbs",
      service: "2 Hour",
      vehicle: "Van"
    })
    expect([r.origin, r.weightLb, r.pieces, r.stops, r.liftgate, r.signature]).toEqual([
      "60606",
      1200,
      1,
      2,
      false,
      false
    ])
    expect(r.services.map((s) => s.code)).toEqual(["2hour"])
    expect(r.vehicles.map((v) => v.code)).toEqual(["cargovan"])
  })

  it("unknown ZIPs are named with the other problems; without locations only the format is checked", () => {
    expect(problems({ origin: "99999", destination: "60613", weight: "15 kg" })).toEqual([
      "origin 99999 is not a known ZIP code",
      "weight must be a positive number of pounds"
    ])
    expect(Quote.zipsOf(query({ origin: "60606-0001", destination: ["1", "2"] }))).toEqual(["60606"])
    const unchecked = Quote.parseQuery(query({ origin: "99999", destination: "60613", weight: "1" }), defaults)
    expect(Either.isRight(unchecked)).toBe(true)
  })

  it("unknown ZIPs and shipments no vehicle takes are problems of the request", () => {
    expect(problems({ origin: "99999", destination: "60613", weight: "5" })).toEqual([
      "origin 99999 is not a known ZIP code"
    ])
    expect(problems({ origin: "60606", destination: "60613", weight: "9000" })).toEqual([
      "weight 9000 lb exceeds every vehicle's limit (at most 8000 lb)"
    ])
    expect(problems({ origin: "60606", destination: "60613", weight: "30", vehicle: "bike" })).toEqual([
      "Weight 30 lb exceeds the bike limit of 25 lb"
    ])
  })
})

describe("Quote.price", () => {
  it("prices every service with every vehicle that takes the weight, services first", () => {
    const q = priced({ origin: "60606", destination: "60613", weight: "15" })
    expect(q.quotes).toHaveLength(defaults.services.length * defaults.vehicles.length)
    expect(q.quotes.slice(0, 2).map((r) => [r.service_type, r.vehicle_type])).toEqual([
      ["rush", "bike"],
      ["rush", "car"]
    ])
    const heavy = priced({ origin: "60606", destination: "60613", weight: "150" })
    expect(new Set(heavy.quotes.map((r) => r.vehicle_type))).toEqual(new Set(["suv", "cargovan", "boxtruck"]))
    expect(q.origin).toEqual({ zip: "60606", city: "Chicago", state: "IL" })
    expect([q.miles, q.weight, q.pieces, q.stops, q.rates]).toEqual([6.35, 15, 1, 2, "list"])
  })

  it("prices like the create-shipments reference (2hour car, 15 lb, 6.35 mi on these centroids)", () => {
    const q = priced({ origin: "60606", destination: "60613", weight: "15", service: "2hour", vehicle: "car" })
    expect(q.quotes).toHaveLength(1)
    // (18 + 1.75 x 1.35) x 1.4 = 28.51; fuel 12 % = 3.42.
    expect(q.quotes[0]!.charge).toEqual({
      transport: 28.51,
      weight: 0,
      stops: 0,
      fuel: 3.42,
      extras: 0,
      discount: 0,
      total: 31.93
    })
    expect(q.quotes[0]!.estimated_charge).toBe(31.93)
    expect(q.quotes[0]!.destination_tz).toBe("CST")
  })

  it("stops add the extra-stop charge without distance; liftgate and signature are extras", () => {
    const two = priced({ origin: "60606", destination: "60613", weight: "15", service: "2hour", vehicle: "car" })
    const four = priced({
      origin: "60606",
      destination: "60613",
      weight: "15",
      service: "2hour",
      vehicle: "car",
      stops: "4",
      liftgate: "Y",
      signature: "yes"
    })
    expect(four.miles).toBe(two.miles)
    expect(four.quotes[0]!.charge.stops).toBe(21) // 2 extra stops x 7.50 x 1.4
    expect(four.quotes[0]!.charge.extras).toBe(38.5)
  })

  it("a rate card gives negotiated rates, never below its floor", () => {
    const list = priced({ origin: "60606", destination: "60613", weight: "15", service: "2hour", vehicle: "car" })
    const card = priced(
      { origin: "60606", destination: "60613", weight: "15", service: "2hour", vehicle: "car" },
      ctx({ discountPercent: 10 })
    )
    expect(card.rates).toBe("negotiated")
    expect(card.quotes[0]!.charge.discount).toBe(3.19)
    expect(card.quotes[0]!.estimated_charge).toBeLessThan(list.quotes[0]!.estimated_charge)
    const floored = priced(
      { origin: "60606", destination: "60613", weight: "15", service: "2hour", vehicle: "car" },
      ctx({ discountPercent: 90, floor: 25 })
    )
    expect(floored.quotes[0]!.estimated_charge).toBe(25)
  })
})

// ---------------------------------------------------------------------------------------------
// Properties

const capacity = fc
  .record({
    weight: fc.double({ min: 0.1, max: 8000, noNaN: true }).map((w) => Math.round(w * 10) / 10),
    pieces: fc.integer({ min: 1, max: 300 })
  })
  .filter(({ pieces, weight }) => defaults.vehicles.some((v) => v.maxWeightLb >= weight && v.maxPieces >= pieces))

const cardArb: fc.Arbitrary<RateCard | null> = fc.option(
  fc.record(
    {
      discountPercent: fc.integer({ min: 0, max: 60 }),
      floor: fc.integer({ min: 0, max: 80 }),
      vehicles: fc.constant({ car: { perMile: 1.2, base: 15 } })
    },
    { requiredKeys: [] }
  ),
  { nil: null }
)

// Any instant of 2026 (both DST periods, weekends, nights).
const instant = fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 11, 31) }).map((t) => t - (t % 1000))

/** The shipment a customer would book, with real names and addresses (the quote uses placeholders). */
const realBooking = (
  r: Quote.QuoteRequest,
  service: string,
  vehicle: string,
  origin: ZipLocation,
  destination: ZipLocation
): Booking.ShipmentInput => ({
  Contact: "Ada Lopez",
  Phone: "(312) 555-0100",
  PickupName: "Acme Parts",
  PickupAddress: "233 S Wacker Dr",
  PickupCity: origin.city,
  PickupState: origin.state,
  PickupZip: r.origin,
  DeliverName: "Bolt Labs",
  DeliverAddress: "1060 W Addison St",
  DeliverCity: destination.city,
  DeliverState: destination.state,
  DeliverZip: r.destination,
  ...(r.stops > 2
    ? {
        multistop_route: Array.from({ length: r.stops }, (_, i) => ({
          stop_id: 10 * (i + 1),
          name: `Customer ${i}`,
          address: i === 0 ? "233 S Wacker Dr" : i === r.stops - 1 ? "1060 W Addison St" : `${i} Dock Rd`,
          zip: i === r.stops - 1 ? r.destination : r.origin,
          contact_name: "Someone",
          phone_no: "312 555 0199"
        }))
      }
    : {}),
  Pieces: String(r.pieces),
  Weight: `${r.weightLb} lbs`,
  ServiceType: service,
  VehicleType: vehicle,
  Pickupdate: "now",
  Deliverdate: "today",
  LiftgateReq: r.liftgate ? "Y" : "N",
  SignatureReq: r.signature ? "Y" : "N",
  BillingReference: "PO-1",
  PickupSpecinst: "Ring twice"
})

describe("Quote properties", () => {
  it.prop(
    "a quote and a booking of the same shipment at the same instant give the same charge and times",
    {
      load: capacity,
      origin: fc.constantFrom(...zipCodes),
      destination: fc.constantFrom(...zipCodes),
      stops: fc.integer({ min: 2, max: 5 }),
      liftgate: fc.boolean(),
      signature: fc.boolean(),
      card: cardArb,
      now: instant
    },
    ({ card, destination, liftgate, load, now, origin, signature, stops }) => {
      const r = request({
        origin,
        destination,
        weight: String(load.weight),
        pieces: String(load.pieces),
        stops: String(stops),
        liftgate: liftgate ? "Y" : "N",
        signature: signature ? "Y" : "N"
      })
      const c = ctx(card, now)
      const q = Quote.price(r, c)
      if (Either.isLeft(q)) throw new Error(q.left.join("; "))
      expect(q.right.quotes.length).toBeGreaterThan(0)
      for (const row of q.right.quotes) {
        const booked = Booking.plan(
          realBooking(r, row.service_type, row.vehicle_type, zips.get(origin)!, zips.get(destination)!),
          c
        )
        if (Either.isLeft(booked)) throw new Error(booked.left.join("; "))
        const p = booked.right
        const tz = p.stops[p.stops.length - 1]!.timeZone
        expect(row.charge).toEqual(p.charge)
        expect(row.estimated_delivery).toBe(formatInZone(p.estimatedDeliveryAt, tz))
        expect(row.guaranteed_delivery).toBe(formatInZone(p.guaranteedDeliveryAt, tz))
      }
    },
    { fastCheck: { numRuns: 60 } }
  )

  /** ZIPs on one meridian, `miles` apart from the origin (1 degree of latitude is about 69 miles). */
  const line = (distances: ReadonlyArray<number>) =>
    new Map<string, ZipLocation>(
      [0, ...distances].map((d, i) => {
        const zip = String(10000 + i)
        return [
          zip,
          { zip, city: "Line", state: "IL", latitude: 41 + d / 69, longitude: -87.6, timeZone: "America/Chicago" }
        ]
      })
    )

  it.prop(
    "quotes are never negative, and never fall as the weight or the distance grows",
    {
      w: fc.tuple(capacity, fc.double({ min: 0, max: 500, noNaN: true })),
      d: fc.tuple(fc.double({ min: 0, max: 200, noNaN: true }), fc.double({ min: 0, max: 200, noNaN: true })),
      stops: fc.integer({ min: 2, max: 4 }),
      card: cardArb,
      now: instant
    },
    ({ card, d, now, stops, w }) => {
      const [load, extra] = w
      const z = line([d[0], d[0] + d[1]])
      const c = ctx(card, now, z)
      const at = (destination: string, weight: number) => {
        const r = Quote.price(
          request(
            {
              origin: "10000",
              destination,
              weight: String(weight),
              pieces: String(load.pieces),
              stops: String(stops)
            },
            z
          ),
          c
        )
        if (Either.isLeft(r)) throw new Error(r.left.join("; "))
        return new Map(r.right.quotes.map((row) => [`${row.service_type}/${row.vehicle_type}`, row.charge]))
      }
      // Capped at the largest vehicle's limit, which takes any generated piece count.
      const heavier = Math.min(8000, Math.round((load.weight + extra) * 10) / 10)
      const base = at("10001", load.weight)
      const farther = at("10002", load.weight)
      const weightier = at("10001", heavier)
      for (const [pair, charge] of base) {
        for (const part of Object.values(charge)) expect(part).toBeGreaterThanOrEqual(0)
        expect(farther.get(pair)!.total, `${pair} farther`).toBeGreaterThanOrEqual(charge.total)
        const w2 = weightier.get(pair)
        // A heavier shipment may not fit the vehicle any more; where it does, it costs no less.
        if (w2 !== undefined) expect(w2.total, `${pair} heavier`).toBeGreaterThanOrEqual(charge.total)
      }
    },
    { fastCheck: { numRuns: 80 } }
  )
})
