import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Booking from "../src/booking/Booking.js"
import { defaults } from "../src/shared/Config.js"
import type { ZipLocation } from "../src/geo/Geo.js"
import { formatInZone, fromLocal, toLocal } from "../src/geo/LocalTime.js"

const Z = (
  zip: string,
  city: string,
  state: string,
  latitude: number,
  longitude: number,
  timeZone: string
): [string, ZipLocation] => [zip, { zip, city, state, latitude, longitude, timeZone }]
const zips = new Map<string, ZipLocation>([
  Z("60606", "Chicago", "IL", 41.8823, -87.6378, "America/Chicago"),
  Z("60613", "Chicago", "IL", 41.9543, -87.6575, "America/Chicago"),
  Z("60201", "Evanston", "IL", 42.0464, -87.6946, "America/Chicago"),
  Z("46320", "Hammond", "IN", 41.612, -87.512, "America/Chicago"),
  Z("10001", "New York", "NY", 40.7484, -73.9967, "America/New_York"),
  Z("85001", "Phoenix", "AZ", 33.4484, -112.074, "America/Phoenix")
])

// Tuesday 2026-11-17 10:00 in Chicago.
const NOW = Date.UTC(2026, 10, 17, 16, 0, 0)
const ctx: Booking.PlanContext = { config: defaults, nowMs: NOW, zips, rateCard: null }

const base = {
  Contact: "Ada Lopez",
  Phone: "(312) 555-0100",
  PickupName: "Acme",
  PickupAddress: "233 S Wacker Dr",
  PickupCity: "Chicago",
  PickupState: "IL",
  PickupZip: "60606",
  DeliverName: "Bolt",
  DeliverAddress: "1060 W Addison St",
  DeliverCity: "Chicago",
  DeliverState: "IL",
  DeliverZip: "60613",
  Pieces: "2",
  Weight: "15 lbs",
  ServiceType: "2 Hour",
  VehicleType: "CAR",
  Pickupdate: "now",
  Deliverdate: "today"
}

const decode = (u: unknown) => Schema.decodeUnknownSync(Booking.ShipmentInput)(u)
const planOf = (u: unknown, c = ctx) => Booking.plan(decode(u), c)
const ok = (u: unknown, c = ctx) => {
  const r = planOf(u, c)
  if (Either.isLeft(r)) throw new Error(r.left.join("; "))
  return r.right
}
const problems = (u: unknown, c = ctx) => {
  const r = planOf(u, c)
  return Either.isLeft(r) ? r.left : []
}

const stop = (stop_id: number | string, zip: string, address = `${stop_id} Main St`) => ({
  stop_id,
  name: `Stop ${stop_id}`,
  address,
  zip
})

describe("Booking.plan", () => {
  it("plans a single-stop shipment with canonical service and vehicle names", () => {
    const p = ok(base)
    expect(p.service.code).toBe("2hour")
    expect(p.vehicle.code).toBe("car")
    expect(p.phone).toBe("3125550100")
    expect(p.weightLb).toBe(15)
    expect(p.stops).toHaveLength(2)
    expect(p.legs).toHaveLength(1)
    expect(p.readyAt).toBe(NOW)
    expect(p.estimatedDeliveryAt).toBeGreaterThan(NOW)
    expect(p.guaranteedDeliveryAt).toBeGreaterThanOrEqual(p.estimatedDeliveryAt)
    expect(p.charge.total).toBeGreaterThan(0)
  })

  it("ignores unknown extra fields", () => {
    expect(ok({ ...base, Favourite_Colour: "teal", nested: { a: 1 } }).contact).toBe("Ada Lopez")
  })

  it("truncates silently at the configured lengths", () => {
    const p = ok({
      ...base,
      Contact: "x".repeat(80),
      BillingReference: "R".repeat(40),
      PickupSpecinst: "s".repeat(400)
    })
    expect(p.contact).toHaveLength(50)
    expect(p.billingReference).toHaveLength(23)
    expect(p.pickupInstructions).toHaveLength(250)
  })

  it("names every invalid field", () => {
    const found = problems({
      ...base,
      Phone: "12",
      Weight: "heavy",
      Pieces: 0,
      ServiceType: "teleport",
      VehicleType: "",
      PickupZip: "99999",
      Email: "nope"
    })
    const text = found.join("\n")
    for (const field of ["Phone", "Weight", "Pieces", "ServiceType", "VehicleType", "PickupZip", "Email"])
      expect(text).toContain(field)
  })

  it("refuses a BillingReference with a comma, which document lookups could never find", () => {
    expect(problems({ ...base, BillingReference: "PO-1,PO-2" })).toEqual([Booking.BILLING_REFERENCE_COMMA])
    expect(problems({ ...base, BillingReference: ",", Phone: "12" })).toEqual([
      "Phone must be a 10-digit phone number",
      Booking.BILLING_REFERENCE_COMMA
    ])
    // A comma past the 23 stored characters would be cut off, but the rule is about what was sent.
    expect(problems({ ...base, BillingReference: `${"x".repeat(30)},y` })).toEqual([Booking.BILLING_REFERENCE_COMMA])
    expect(ok({ ...base, BillingReference: "PO-1; PO-2 / #3" }).billingReference).toBe("PO-1; PO-2 / #3")
    expect(ok({ ...base, BillingReference: 12345 }).billingReference).toBe("12345")
  })

  it("requires the Pickup and Deliver fields of single-stop bookings", () => {
    const { PickupName: _a, DeliverZip: _b, ...rest } = base
    const found = problems(rest)
    expect(found).toContain("PickupName is required")
    expect(found.some((p) => p.startsWith("DeliverZip"))).toBe(true)
  })

  it("rejects a shipment over the vehicle's capacity, naming the limit", () => {
    const found = problems({ ...base, Weight: 150 })
    expect(found.join()).toMatch(/100 lb/)
  })

  it("rejects a Deliverdate before the Pickupdate and a Pickupdate in the past", () => {
    expect(problems({ ...base, Pickupdate: "2026-11-18T10:00", Deliverdate: "2026-11-18T09:00" })).toContain(
      "Deliverdate is before Pickupdate"
    )
    expect(problems({ ...base, Pickupdate: "2026-11-17T09:00" }).join()).toMatch(
      /Pickupdate is more than 15 minutes in the past/
    )
    expect(problems({ ...base, Pickupdate: "2026-11-17T09:50" })).toEqual([])
  })

  it("reads dates in the stop's own zone", () => {
    const p = ok({ ...base, Pickupdate: "2026-11-18 09:30", Deliverdate: "11/18/2026 17:00" })
    expect(formatInZone(p.readyAt, "America/Chicago")).toBe("2026-11-18T09:30:00")
    expect(formatInZone(p.requestedDeliveryAt, "America/Chicago")).toBe("2026-11-18T17:00:00")
  })

  it("builds a multi-stop route from stops sorted by stop_id, with legs between consecutive stops", () => {
    const p = ok({
      ...base,
      PickupZip: undefined,
      PickupAddress: undefined,
      DeliverZip: undefined,
      DeliverAddress: undefined,
      multistop_route: [stop(3, "60201"), stop(1, "60606"), stop("2", "60613")]
    })
    expect(p.stops.map((s) => s.externalId)).toEqual([1, 2, 3])
    expect(p.stops.map((s) => s.role)).toEqual(["pickup", "intermediate", "delivery"])
    expect(p.legs.map((l) => [l.fromStop, l.toStop])).toEqual([
      [0, 1],
      [1, 2]
    ])
    expect(p.stops[2]!.city).toBe("Evanston")
  })

  it("requires Pickup and Deliver fields to agree with the first and last stops", () => {
    const route = [stop(1, "60606", "233 S Wacker Dr"), stop(2, "60613"), stop(3, "60201", "9 Elm St")]
    expect(problems({ ...base, DeliverZip: "60201", DeliverAddress: "9 Elm St.", multistop_route: route })).toEqual([])
    const found = problems({ ...base, multistop_route: route })
    expect(found.join()).toMatch(/DeliverZip does not match the last stop/)
  })

  it("rejects duplicate stop_ids and stops without name, address or zip", () => {
    const found = problems({
      ...base,
      multistop_route: [stop(1, "60606"), stop(1, "60613"), { stop_id: 4, name: "", address: "x" }]
    })
    const text = found.join("\n")
    expect(text).toMatch(/stop_id 1 appears more than once/)
    expect(text).toMatch(/multistop_route\[2\]\.name is required/)
    expect(text).toMatch(/multistop_route\[2\]\.zip/)
  })

  it("keeps piece details as given, piece_no as a label", () => {
    const p = ok({
      ...base,
      piece_details: [{ piece_no: "A-7", piece_weight: "5", description: "box" }, { piece_no: 2 }]
    })
    expect(p.pieceDetails.map((x) => x.pieceNo)).toEqual(["A-7", "2"])
    expect(p.pieces).toBe(2)
  })

  it("property: legs = stops - 1 and stops keep stop_id order", () => {
    const pool = ["60606", "60613", "60201", "46320"]
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: -50, max: 500 }), { minLength: 3, maxLength: 8 }),
        fc.array(fc.constantFrom(...pool), { minLength: 8, maxLength: 8 }),
        (ids, zs) => {
          const route = ids.map((id, i) => stop(id, zs[i]!))
          const sorted = [...route].sort((a, b) => Number(a.stop_id) - Number(b.stop_id))
          const p = ok({
            ...base,
            PickupZip: sorted[0]!.zip,
            PickupAddress: sorted[0]!.address,
            DeliverZip: sorted.at(-1)!.zip,
            DeliverAddress: sorted.at(-1)!.address,
            multistop_route: route
          })
          expect(p.legs).toHaveLength(p.stops.length - 1)
          expect(p.stops.map((s) => s.externalId)).toEqual(sorted.map((s) => s.stop_id))
        }
      )
    )
  })

  it("property: response timestamps parse back to the same local time in the destination zone", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 * 24 * 60 }),
        fc.constantFrom("10001", "85001", "60613"),
        (minutes, deliverZip) => {
          const now = NOW + minutes * 60_000
          const p = ok(
            { ...base, DeliverZip: deliverZip, ServiceType: "nextday", VehicleType: "cargovan" },
            { ...ctx, nowMs: now }
          )
          const tz = zips.get(deliverZip)!.timeZone
          const text = formatInZone(p.estimatedDeliveryAt, tz)
          const [d, t] = text.split("T") as [string, string]
          const [year, month, day] = d.split("-").map(Number) as [number, number, number]
          const [hour, minute, second] = t.split(":").map(Number) as [number, number, number]
          expect(toLocal(fromLocal({ year, month, day, hour, minute, second }, tz), tz)).toEqual({
            year,
            month,
            day,
            hour,
            minute,
            second
          })
        }
      )
    )
  })

  it("property: plan never throws on arbitrary shipment objects", () => {
    const scalar = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.double(), fc.constant(null))
    const keys = Object.keys(base).concat(["multistop_route", "piece_details"])
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), scalar), (obj) => {
        const decoded = Schema.decodeUnknownEither(Booking.ShipmentInput)(obj)
        if (Either.isRight(decoded)) expect(() => Booking.plan(decoded.right, ctx)).not.toThrow()
      })
    )
  })
})

/** An active live key of account "1", for use cases that take an authorized principal. */
const principal = {
  account: { customerNo: "1", name: "a", cancelMode: "local" as const, rateCard: null, ipAllowlist: [], createdAt: 0 },
  key: {
    id: "k",
    customerNo: "1",
    mode: "live" as const,
    status: "active" as const,
    generation: 1,
    hash: "h",
    hint: "",
    last4: null,
    createdAt: null,
    updatedAt: 0
  }
}

describe("Booking.createShipments structural messages", () => {
  it("names the field once, with what it must be", async () => {
    const { Effect, Layer, Option, Redacted } = await import("effect")
    const { AccountStore } = await import("../src/access/AccountStore.js")
    const { WaybillConfig } = await import("../src/shared/Config.js")
    const { Geo } = await import("../src/geo/Geo.js")
    const layer = Layer.mergeAll(
      WaybillConfig.layer(),
      Layer.succeed(Geo, { lookup: (z: string) => Effect.succeed(Option.fromNullable(zips.get(z))) }),
      Layer.succeed(AccountStore, {} as never)
    )
    const run = (shipments: Array<unknown>) =>
      Effect.runPromise(
        Effect.either(Booking.createShipments({ body: { data: { shipments } }, principal })).pipe(
          Effect.provide(layer)
        ) as never
      ) as Promise<{ _tag: string; left?: { problems: ReadonlyArray<string> } }>
    const notObject = await run(["nope"])
    expect(notObject.left?.problems).toEqual(["the shipment must be an object"])
    const wrongTypes = await run([{ ...base, Contact: { a: 1 }, multistop_route: "x" }])
    expect(wrongTypes.left?.problems).toEqual([
      "Contact must be a string or a number",
      "multistop_route must be an array of objects"
    ])
    void Redacted
  })
})

describe("Booking.createShipments deep values", () => {
  it("refuses a body nested deeper than JsonInput.MAX_DEPTH with a BadRequest, wherever the nesting is", async () => {
    const { Effect, Layer, Option } = await import("effect")
    const { AccountStore } = await import("../src/access/AccountStore.js")
    const { WaybillConfig } = await import("../src/shared/Config.js")
    const { Geo } = await import("../src/geo/Geo.js")
    const { MAX_DEPTH } = await import("../src/shared/JsonInput.js")
    const layer = Layer.mergeAll(
      WaybillConfig.layer(),
      Layer.succeed(Geo, { lookup: (z: string) => Effect.succeed(Option.fromNullable(zips.get(z))) }),
      Layer.succeed(AccountStore, {} as never)
    )
    // Built bottom-up: an embedder can hand core such a value without any JSON text.
    const deep = (n: number): unknown => {
      let v: unknown = "x"
      for (let i = 0; i < n; i++) v = i % 3 === 0 ? { a: v } : [v]
      return v
    }
    const run = (body: unknown) =>
      Effect.runPromise(
        Effect.either(Booking.createShipments({ body, principal })).pipe(Effect.provide(layer)) as never
      ) as Promise<{ _tag: string; left?: { _tag: string; message?: string } }>
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: MAX_DEPTH, max: 1000 }), fc.integer({ min: 100_000, max: 150_000 })),
        fc.constantFrom("shipments", "multistop_route", "piece_details", "Contact", "token"),
        async (n, where) => {
          const body =
            where === "shipments"
              ? { data: { shipments: deep(n) } }
              : where === "token"
                ? { data: { token: deep(n), shipments: [base] } }
                : { data: { shipments: [{ ...base, [where]: deep(n) }] } }
          const r = await run(body)
          expect(r._tag).toBe("Left")
          expect(r.left?._tag).toBe("BadRequest")
          expect(r.left?.message).toBe(`The body nests arrays and objects more than ${MAX_DEPTH} levels deep.`)
        }
      ),
      { numRuns: 30 }
    )
  })
})

describe("Booking.book tracking-number collisions", () => {
  /** Books one plan over a store that refuses the first `taken` numbers it is offered. */
  const bookWith = async (taken: number) => {
    const { Effect, Layer } = await import("effect")
    const { ShipmentStore } = await import("../src/shipments/ShipmentStore.js")
    const { DuplicateKey } = await import("../src/shared/Errors.js")
    const { Entropy } = await import("../src/shared/Entropy.js")
    const offered: Array<string> = []
    let counter = 0
    const layer = Layer.mergeAll(
      Layer.succeed(ShipmentStore, {
        book: (s: { readonly trackNo: string }) =>
          Effect.suspend(() => {
            offered.push(s.trackNo)
            return offered.length <= taken ? Effect.fail(new DuplicateKey({ what: "track_no" })) : Effect.void
          })
      } as never),
      Layer.succeed(Entropy, {
        bytes: (n: number) => Effect.sync(() => Uint8Array.from({ length: n }, () => counter++ % 256))
      })
    )
    const result = await Effect.runPromise(
      Effect.either(Booking.book(ok(base), principal, "")).pipe(Effect.provide(layer)) as never
    )
    return { result: result as { _tag: string; right?: { record: { trackNo: string } }; left?: unknown }, offered }
  }

  it("draws a new number for each taken one", async () => {
    const { result, offered } = await bookWith(3)
    expect(result._tag).toBe("Right")
    expect(offered).toHaveLength(4)
    expect(new Set(offered).size).toBe(4)
    expect(result.right?.record.trackNo).toBe(offered[3])
  })

  it("gives up with a storage error after 10 retries", async () => {
    const { result, offered } = await bookWith(1000)
    expect(result._tag).toBe("Left")
    expect(offered).toHaveLength(11)
    expect(result.left).toMatchObject({ _tag: "StorageError", operation: "Booking.book: no free tracking number" })
  })
})
