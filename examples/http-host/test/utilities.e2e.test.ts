/**
 * The quote and track utilities end to end through the real host: list against negotiated rates
 * (the discount set with the CLI), quote against booking, coarse against precise tracking, the
 * uniform not-found answer, and the no-leak property of tracking without the owner's key.
 */
import { execFile } from "node:child_process"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fc from "effect/FastCheck"
import { Accounts } from "@waybill/core"
import {
  bookOne,
  detailedPieces,
  detailedShipment,
  detailedStops,
  type Envelope,
  ops,
  postJson,
  shipment,
  startHost,
  type TestAccount,
  type TestHost
} from "./harness.js"

let t: TestHost
let a: TestAccount
let b: TestAccount
let parent: TestAccount

beforeAll(async () => {
  t = await startHost()
  a = await t.newAccount("A")
  b = await t.newAccount("B")
  parent = await t.newAccount("Parent of A")
  await t.run(Accounts.linkAccounts(parent.customerNo, a.customerNo))
})
afterAll(() => t.close())

const get = async (path: string, params: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${t.url}${path}?${new URLSearchParams(params)}`, { headers })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as Envelope }
}
const quote = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  get("/api/v1/utilities/quote/", params, headers)
const track = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  get("/api/v1/utilities/track/", params, headers)

const waybill = async (...args: Array<string>) => {
  const cli = resolve(import.meta.dirname, "../src/cli.ts")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", cli, ...args, "--db", join(t.dir, "waybill.db"), "--json"],
    { cwd: resolve(import.meta.dirname, "..") }
  )
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>
}

const chicago = { origin: "60606", destination: "60613" }
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/

type Row = { service_type: string; vehicle_type: string; estimated_charge: number; charge: Record<string, number> }
const byPair = (rows: ReadonlyArray<Row>) => new Map(rows.map((r) => [`${r.service_type}/${r.vehicle_type}`, r]))

describe("GET /api/v1/utilities/quote/", () => {
  it("without a key: list rates for every service and vehicle that can carry the weight", async () => {
    const r = await quote({ ...chicago, weight: "15" })
    expect(r.status).toBe(200)
    expect(r.headers.get("cache-control")).toBe("no-store")
    expect(r.headers.get("ratelimit-policy")).toBe('"ip";q=1000000;w=60')
    expect(r.headers.get("ratelimit")).toMatch(/^"ip";r=\d+;t=\d+$/)
    const d = r.body.data
    expect(d.rates).toBe("list")
    expect(d.origin).toEqual({ zip: "60606", city: "Chicago", state: "IL" })
    expect([d.weight, d.pieces, d.stops, d.miles]).toEqual([15, 1, 2, 5.95])
    expect(d.quotes).toHaveLength(6 * 5)
    for (const row of d.quotes) {
      expect(Object.keys(row.charge).sort()).toEqual([
        "discount",
        "extras",
        "fuel",
        "stops",
        "total",
        "transport",
        "weight"
      ])
      expect(row.estimated_charge).toBe(row.charge.total)
      expect(row.estimated_delivery).toMatch(LOCAL)
      expect(row.guaranteed_delivery).toMatch(LOCAL)
      expect(row.destination_tz).toMatch(/^C[SD]T$/)
    }
    // The create-shipments worked example: 2hour by car, 15 lb, 5.95 miles.
    expect(byPair(d.quotes).get("2hour/car")?.estimated_charge).toBe(30.83)

    const heavy = await quote({ ...chicago, weight: "150 lbs", pieces: "4", service: "rush" })
    expect(heavy.body.data.quotes.map((q: Row) => q.vehicle_type)).toEqual(["suv", "cargovan", "boxtruck"])
  })

  it("with a key: the account's negotiated rates (discount set with the CLI); without a card, list", async () => {
    const set = await waybill("account", "set", a.customerNo, "--discount", "10")
    expect(set).toMatchObject({ customer_no: a.customerNo, discount_percent: 10 })
    const list = await quote({ ...chicago, weight: "40" })
    const negotiated = await quote({ ...chicago, weight: "40", key: a.liveKey })
    expect(negotiated.status).toBe(200)
    expect(negotiated.headers.get("ratelimit-policy")).toBe('"key";q=1000000;w=60')
    expect(negotiated.body.data.rates).toBe("negotiated")
    const listed = byPair(list.body.data.quotes)
    for (const row of negotiated.body.data.quotes as Array<Row>) {
      const l = listed.get(`${row.service_type}/${row.vehicle_type}`)!
      // At most 10 % off the list charge, and never below the vehicle minimum (the default floor).
      expect(Math.round((l.estimated_charge - row.charge["discount"]!) * 100) / 100).toBe(row.estimated_charge)
      expect(row.charge["discount"]).toBeLessThanOrEqual(Math.round(l.estimated_charge * 10) / 100)
    }
    // 2hour by car, 40 lb: list 36.71 (30.83 + 15 lb over at 0.25 x 1.4 = 5.25, fuel 0.63), 10 % off.
    expect(byPair(list.body.data.quotes).get("2hour/car")?.estimated_charge).toBe(36.71)
    expect(byPair(negotiated.body.data.quotes).get("2hour/car")?.estimated_charge).toBe(33.04)
    const other = await quote({ ...chicago, weight: "40" }, { authorization: `Bearer ${b.liveKey}` })
    expect(other.body.data.rates).toBe("list")
    expect(other.body.data.quotes).toEqual(list.body.data.quotes)
  })

  it("a quote and a booking of the same shipment give the same charge", async () => {
    const q = await quote({ ...chicago, weight: "15", pieces: "2", service: "4hour", vehicle: "suv", key: a.liveKey })
    const booked = await postJson(
      `${t.url}/api/v1/order/json/`,
      { data: { shipments: [shipment({ ServiceType: "4hour", VehicleType: "suv" })] } },
      { authorization: `Bearer ${a.liveKey}` }
    )
    expect(booked.status).toBe(200)
    expect(booked.body.data.shipments[0].estimated_charge).toBe(q.body.data.quotes[0].estimated_charge)
    expect(booked.headers.get("ratelimit-policy")).toBe('"key";q=1000000;w=60')
  })

  it("bad ZIPs, weights and options: 400 naming every problem", async () => {
    const unknown = await quote({ origin: "99999", destination: "60613", weight: "5" })
    expect([unknown.status, unknown.body.error?.message]).toEqual([400, "origin 99999 is not a known ZIP code"])
    const bad = await quote({ origin: "6060", weight: "15 kg", stops: "1" })
    expect(bad.text).toBe(
      JSON.stringify({
        data: null,
        error: {
          message:
            "origin must be a 5-digit ZIP code; destination is required; weight must be a positive number of pounds; stops must be a whole number from 2 to 50",
          exception: null
        }
      })
    )
    const heavy = await quote({ ...chicago, weight: "9000" })
    expect(heavy.body.error?.message).toBe("weight 9000 lb exceeds every vehicle's limit (at most 8000 lb)")
    const bike = await quote({ ...chicago, weight: "30", vehicle: "bicycle" })
    expect(bike.body.error?.message).toBe("Weight 30 lb exceeds the bike limit of 25 lb")
  })

  it("an invalid key is 401 Access denied., never list rates", async () => {
    for (const [params, headers] of [
      [{ ...chicago, weight: "5", key: "wb_live_not-a-key" }, {}],
      [{ ...chicago, weight: "5" }, { authorization: "Basic YTpi" }],
      [{ ...chicago, weight: "5", key: a.liveKey }, { authorization: "Bearer wb_live_nope" }]
    ] as const) {
      const r = await quote(params, headers)
      expect([r.status, r.body.error?.message]).toEqual([401, "Access denied."])
    }
    const twice = await get("/api/v1/utilities/quote/", { ...chicago, weight: "5" })
    expect(twice.status).toBe(200)
  })
})

describe("GET /api/v1/utilities/track/", () => {
  const NOT_FOUND = JSON.stringify({ data: null, error: { message: "No records found.", exception: null } })

  const moved = async (key: string) => {
    const id = await bookOne(t.url, key)
    expect((await ops(t.url, `shipments/${id}/assign`, { driver_id: "drv-9" })).status).toBe(200)
    expect((await ops(t.url, `shipments/${id}/pickup`, {})).status).toBe(200)
    return id
  }

  it("without a key, or with another account's key: status, ZIP centres and event times only", async () => {
    const id = await moved(a.liveKey)
    const anonymous = await track({ idx: id })
    expect(anonymous.status).toBe(200)
    expect(anonymous.headers.get("cache-control")).toBe("no-store")
    const v = anonymous.body.data
    expect([v.track_no, v.detail, v.status, v.service_type, v.vehicle_type]).toEqual([
      id,
      "coarse",
      "picked_up",
      "2hour",
      "car"
    ])
    expect(v.estimated_delivery).toMatch(LOCAL)
    expect(v.stops).toEqual([
      expect.objectContaining({
        seq: 0,
        role: "pickup",
        status: "completed",
        zip: "60606",
        city: "Chicago",
        state: "IL"
      }),
      expect.objectContaining({
        seq: 1,
        role: "delivery",
        status: "pending",
        zip: "60613",
        city: "Chicago",
        state: "IL"
      })
    ])
    for (const s of v.stops) {
      expect(Object.keys(s).sort()).toEqual(["city", "latitude", "longitude", "role", "seq", "state", "status", "zip"])
      expect(Math.round(s.latitude * 100) / 100).toBe(s.latitude)
    }
    expect(v.events.map((e: { type: string }) => e.type)).toEqual([
      "shipment.booked",
      "shipment.assigned",
      "shipment.picked_up"
    ])
    for (const e of v.events) expect(Object.keys(e).sort()).toEqual(["occurred_at", "type"])
    for (const secret of ["233 S Wacker Dr", "Acme Parts", "Bolt Labs", "Ada Lopez", "drv-9", "3125550100"]) {
      expect(anonymous.text).not.toContain(secret)
    }
    // Another customer's key sees exactly what anyone sees.
    const foreign = await track({ idx: id, key: b.liveKey })
    expect(foreign.text).toBe(anonymous.text)
    expect(foreign.headers.get("ratelimit-policy")).toBe('"key";q=1000000;w=60')
  })

  it("with the owner's key or a linked account's key: addresses, exact positions, every event, documents", async () => {
    const id = await moved(a.liveKey)
    const coarse = await track({ idx: id })
    for (const key of [a.liveKey, parent.liveKey]) {
      const r = await track({ idx: id, key })
      const v = r.body.data
      expect(v.detail).toBe("precise")
      expect(v.stops[0]).toMatchObject({
        name: "Acme Parts",
        address: "233 S Wacker Dr",
        zip: "60606",
        status: "completed"
      })
      expect(v.stops[0].eta).toMatch(LOCAL)
      expect(Math.abs(v.stops[0].latitude - coarse.body.data.stops[0].latitude)).toBeLessThanOrEqual(0.005)
      expect(v.events.map((e: { sequence: number }) => e.sequence)).toEqual([1, 2, 3])
      expect(v.events[1].data).toMatchObject({ driver_id: "drv-9" })
      expect(v.documents).toEqual([])
      expect([v.livemode, v.pieces, v.weight]).toEqual([true, 2, 15])
    }
    // The owner's test key sees live shipments only coarsely (test and live are two worlds).
    expect((await track({ idx: id, key: a.testKey })).body.data.detail).toBe("coarse")
    // A child never sees its parent's shipments precisely.
    const parents = await bookOne(t.url, parent.liveKey)
    expect((await track({ idx: parents, key: a.liveKey })).body.data.detail).toBe("coarse")
  })

  it("the owner's precise view shows stop contacts, phones, notes and piece details; the coarse view none", async () => {
    const id = await bookOne(t.url, a.liveKey, detailedShipment())
    const precise = (await track({ idx: id, key: a.liveKey })).body.data
    expect(precise.detail).toBe("precise")
    expect(
      precise.stops.map((s: Record<string, unknown>) => ({
        contact_name: s["contact_name"],
        phone_no: s["phone_no"],
        stop_note: s["stop_note"]
      }))
    ).toEqual(detailedStops)
    expect(precise.piece_details).toEqual(detailedPieces)
    expect(precise).toMatchObject({
      contact: "Ada Lopez",
      phone: "3125550100",
      email: "ada@acme.example",
      signature_required: true,
      liftgate_required: true,
      pickup_instructions: "Dock 4, ring twice",
      deliver_instructions: "Front desk"
    })
    const coarse = await track({ idx: id })
    expect(coarse.body.data.detail).toBe("coarse")
    expect(coarse.body.data.piece_details).toBeUndefined()
    for (const text of [
      ...detailedStops.flatMap((s) => [s.contact_name, s.phone_no, s.stop_note]),
      "SKU-9",
      "Fragile glass",
      "Binders",
      "ada@acme.example",
      "Dock 4",
      "Front desk"
    ])
      expect(coarse.text).not.toContain(text)
  })

  it("unknown and malformed tracking numbers: one uniform not-found envelope", async () => {
    for (const params of [
      { idx: "99999999" },
      { idx: "12ab" },
      {},
      { idx: "123456789" },
      { idx: "99999999", key: a.liveKey }
    ]) {
      const r = await track(params)
      expect([r.status, r.text], JSON.stringify(params)).toEqual([200, NOT_FOUND])
    }
    const twice = await get("/api/v1/utilities/track/", { idx: "12345678" })
    expect(twice.text).toBe(NOT_FOUND)
    const invalidKey = await track({ idx: "99999999", key: "wb_test_garbage" })
    expect([invalidKey.status, invalidKey.body.error?.message]).toEqual([401, "Access denied."])
  })

  it("property: tracking without the owner's key never reveals a name, street address or exact coordinates", async () => {
    const word = fc.stringMatching(/^[A-Z][a-z]{4,9}$/)
    const place = fc.record({
      name: fc.tuple(word, word).map(([x, y]) => `${x} ${y} Co`),
      address: fc.tuple(fc.integer({ min: 1, max: 9999 }), word).map(([n, w]) => `${n} ${w} Blvd`),
      zip: fc.constantFrom("60606", "60613", "60201", "60614", "60640")
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(place, { minLength: 2, maxLength: 4 }),
        fc.constantFrom(undefined, "b", "test"),
        async (stops, who) => {
          const route =
            stops.length === 2
              ? {
                  PickupName: stops[0]!.name,
                  PickupAddress: stops[0]!.address,
                  PickupZip: stops[0]!.zip,
                  DeliverName: stops[1]!.name,
                  DeliverAddress: stops[1]!.address,
                  DeliverZip: stops[1]!.zip
                }
              : {
                  PickupName: undefined,
                  PickupAddress: undefined,
                  PickupZip: undefined,
                  DeliverName: undefined,
                  DeliverAddress: undefined,
                  DeliverZip: undefined,
                  multistop_route: stops.map((s, i) => ({ stop_id: i + 1, ...s }))
                }
          const id = await bookOne(t.url, a.liveKey, route)
          const key = who === "b" ? b.liveKey : who === "test" ? a.testKey : undefined
          const r = await track({ idx: id, ...(key === undefined ? {} : { key }) })
          expect(r.body.data.detail).toBe("coarse")
          for (const s of stops) {
            expect(r.text).not.toContain(s.name)
            expect(r.text).not.toContain(s.address)
          }
          for (const s of r.body.data.stops) {
            expect(Math.abs(s.latitude * 100 - Math.round(s.latitude * 100))).toBeLessThan(1e-6)
            expect(Math.abs(s.longitude * 100 - Math.round(s.longitude * 100))).toBeLessThan(1e-6)
          }
          const precise = await track({ idx: id, key: a.liveKey })
          const exact = precise.body.data.stops.map((s: { latitude: number }) => s.latitude)
          for (const lat of exact) if (Math.round(lat * 100) / 100 !== lat) expect(r.text).not.toContain(String(lat))
        }
      ),
      { numRuns: 12 }
    )
  })
})
