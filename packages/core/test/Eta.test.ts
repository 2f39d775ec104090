import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { defaults, type ServiceOption, type VehicleOption } from "../src/shared/Config.js"
import { estimate, type EtaInput, type EtaResult } from "../src/booking/Eta.js"
import { abbreviation, formatInZone, formatLocal, fromLocal, isBusinessDay, toLocal } from "../src/geo/LocalTime.js"

const chicago = "America/Chicago"
const denver = "America/Denver"
const indianapolis = "America/Indiana/Indianapolis"

const service = (code: string): ServiceOption => {
  const s = defaults.services.find((x) => x.code === code)
  if (s === undefined) throw new Error(`no service ${code}`)
  return s
}
const vehicle = (code: string): VehicleOption => {
  const v = defaults.vehicles.find((x) => x.code === code)
  if (v === undefined) throw new Error(`no vehicle ${code}`)
  return v
}
/** "2026-11-20T10:00" read as wall time in `zone`. */
const at = (wall: string, zone: string = chicago): number => {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(wall)
  if (m === null) throw new Error(`bad fixture ${wall}`)
  return fromLocal(
    { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour: Number(m[4]), minute: Number(m[5]), second: 0 },
    zone
  )
}

const input = (over: Partial<EtaInput> & { readonly readyAt: number }): EtaInput => ({
  service: service("rush"),
  vehicle: vehicle("car"),
  stopTimeZones: [chicago, chicago],
  legMiles: [10],
  requestedDeliveryAt: over.readyAt,
  routing: defaults.routing,
  hours: defaults.businessHours,
  ...over
})

/** The result as local strings: pickup in the first zone, the rest in each stop's / the destination zone. */
const show = (i: EtaInput, r: EtaResult) => {
  const dest = i.stopTimeZones[i.stopTimeZones.length - 1] ?? chicago
  return {
    pickup: formatInZone(r.pickupAt, i.stopTimeZones[0] ?? chicago),
    stops: r.stopEtas.map((t, k) => formatInZone(t, i.stopTimeZones[k] ?? dest)),
    estimated: formatInZone(r.estimatedDeliveryAt, dest),
    guaranteed: formatInZone(r.guaranteedDeliveryAt, dest),
    tz: abbreviation(r.estimatedDeliveryAt, dest)
  }
}
const run = (over: Partial<EtaInput> & { readonly readyAt: number }) => {
  const i = input(over)
  return show(i, estimate(i))
}

describe("estimate: window services", () => {
  it("rush within hours: lead, service time, drive, 90-minute window", () => {
    // Friday 10:00 CST; pickup 10:15; leaves 10:20; 10 mi at 20 mph = 30 min.
    expect(run({ readyAt: at("2026-11-20T10:00") })).toEqual({
      pickup: "2026-11-20T10:15:00",
      stops: ["2026-11-20T10:15:00", "2026-11-20T10:50:00"],
      estimated: "2026-11-20T10:50:00",
      guaranteed: "2026-11-20T11:30:00",
      tz: "CST"
    })
  })

  it("4hour adds 15 minutes per started 5 miles beyond 30", () => {
    // 42 mi: 12 beyond grace -> 3 steps -> 240 + 45 min; drive 126 min from 11:05.
    expect(run({ readyAt: at("2026-11-20T10:00"), service: service("4hour"), legMiles: [42] })).toMatchObject({
      pickup: "2026-11-20T11:00:00",
      estimated: "2026-11-20T13:11:00",
      guaranteed: "2026-11-20T14:45:00"
    })
  })

  it("the guarantee is raised to the estimate rounded up to the quarter hour", () => {
    // rush 42 mi: window 10:00 + 90 + 45 = 12:15, but the estimate is 10:20 + 126 min = 12:26.
    expect(run({ readyAt: at("2026-11-20T10:00"), legMiles: [42] })).toMatchObject({
      estimated: "2026-11-20T12:26:00",
      guaranteed: "2026-11-20T12:30:00"
    })
  })

  it("a pickup after hours waits for Monday's opening", () => {
    expect(run({ readyAt: at("2026-11-20T17:50") })).toMatchObject({
      pickup: "2026-11-23T08:00:00",
      estimated: "2026-11-23T08:35:00",
      guaranteed: "2026-11-23T08:45:00"
    })
  })

  it("an arrival after hours rolls to the next opening at that stop", () => {
    // Pickup 17:15, leaves 17:20, 20 mi = 60 min -> 18:20 Friday -> Monday 08:00.
    expect(run({ readyAt: at("2026-11-20T17:00"), legMiles: [20] })).toMatchObject({
      pickup: "2026-11-20T17:15:00",
      estimated: "2026-11-23T08:00:00",
      guaranteed: "2026-11-23T08:00:00"
    })
  })

  it("multi-stop across zones: times are in each stop's zone", () => {
    // Pickup 09:15 CST, stop 2 at 09:50 CST, leaves 09:55, 100 mi = 5 h -> 14:55 CST = 15:55 EST.
    // Window: 09:00 + 90 + 15 x ceil(80 / 5) = 14:30 CST = 15:30 EST < 16:00 (estimate rounded up).
    expect(
      run({ readyAt: at("2026-11-20T09:00"), stopTimeZones: [chicago, chicago, indianapolis], legMiles: [10, 100] })
    ).toEqual({
      pickup: "2026-11-20T09:15:00",
      stops: ["2026-11-20T09:15:00", "2026-11-20T09:50:00", "2026-11-20T15:55:00"],
      estimated: "2026-11-20T15:55:00",
      guaranteed: "2026-11-20T16:00:00",
      tz: "EST"
    })
  })

  it("rolls across the spring-forward weekend and reports CDT", () => {
    expect(run({ readyAt: at("2026-03-07T11:00") })).toMatchObject({
      pickup: "2026-03-09T08:00:00",
      estimated: "2026-03-09T08:35:00",
      tz: "CDT"
    })
  })
})

describe("estimate: sameday", () => {
  it("booked before the cutoff: today's deadline", () => {
    expect(run({ readyAt: at("2026-11-20T13:00"), service: service("sameday") })).toMatchObject({
      pickup: "2026-11-20T16:00:00",
      estimated: "2026-11-20T16:35:00",
      guaranteed: "2026-11-20T17:00:00"
    })
  })

  it("booked at or after the cutoff: the next business day's deadline", () => {
    expect(run({ readyAt: at("2026-11-20T14:00"), service: service("sameday") })).toMatchObject({
      pickup: "2026-11-20T17:00:00",
      estimated: "2026-11-20T17:35:00",
      guaranteed: "2026-11-23T17:00:00"
    })
    expect(run({ readyAt: at("2026-11-20T14:30"), service: service("sameday") })).toMatchObject({
      pickup: "2026-11-20T17:30:00",
      estimated: "2026-11-23T08:00:00",
      guaranteed: "2026-11-23T17:00:00"
    })
  })

  it("booked on a weekend: Monday's deadline", () => {
    expect(run({ readyAt: at("2026-11-21T10:00"), service: service("sameday") })).toMatchObject({
      pickup: "2026-11-23T08:00:00",
      guaranteed: "2026-11-23T17:00:00"
    })
  })

  it("the deadline is read in the destination zone", () => {
    // 11:00 CST, pickup 14:00 CST, arrival 15:05 CST = 14:05 MST; promise 17:00 MST.
    expect(
      run({
        readyAt: at("2026-11-20T11:00"),
        service: service("sameday"),
        stopTimeZones: [chicago, denver],
        legMiles: [20]
      })
    ).toMatchObject({
      pickup: "2026-11-20T14:00:00",
      estimated: "2026-11-20T14:05:00",
      guaranteed: "2026-11-20T17:00:00",
      tz: "MST"
    })
  })
})

describe("estimate: nextday and scheduled", () => {
  it("nextday picks up at the next business opening and promises noon", () => {
    expect(run({ readyAt: at("2026-11-20T15:00"), service: service("nextday") })).toEqual({
      pickup: "2026-11-23T08:00:00",
      stops: ["2026-11-23T08:00:00", "2026-11-23T08:35:00"],
      estimated: "2026-11-23T08:35:00",
      guaranteed: "2026-11-23T12:00:00",
      tz: "CST"
    })
    expect(run({ readyAt: at("2026-11-17T07:00"), service: service("nextday") })).toMatchObject({
      pickup: "2026-11-18T08:00:00",
      guaranteed: "2026-11-18T12:00:00"
    })
  })

  it("scheduled picks up without a lead and promises the requested time", () => {
    expect(
      run({
        readyAt: at("2026-11-20T10:00"),
        service: service("scheduled"),
        requestedDeliveryAt: at("2026-11-20T15:00")
      })
    ).toMatchObject({
      pickup: "2026-11-20T10:00:00",
      estimated: "2026-11-20T10:35:00",
      guaranteed: "2026-11-20T15:00:00"
    })
  })

  it("scheduled never promises before the estimate", () => {
    expect(
      run({
        readyAt: at("2026-11-20T10:00"),
        service: service("scheduled"),
        requestedDeliveryAt: at("2026-11-20T10:10")
      })
    ).toMatchObject({ estimated: "2026-11-20T10:35:00", guaranteed: "2026-11-20T10:45:00" })
  })
})

describe("estimate: rounding and defects", () => {
  it("every output is on a whole second", () => {
    const r = estimate(input({ readyAt: at("2026-11-20T10:00") + 123, legMiles: [7.77] }))
    for (const t of [r.pickupAt, ...r.stopEtas, r.estimatedDeliveryAt, r.guaranteedDeliveryAt]) {
      expect(t % 1000).toBe(0)
    }
    // 7.77 mi at 20 mph = 1398.6 s -> 1399 s after 10:20.
    expect(formatInZone(r.estimatedDeliveryAt, chicago)).toBe("2026-11-20T10:43:19")
  })

  it("throws on inputs the booking never builds", () => {
    const base = input({ readyAt: at("2026-11-20T10:00") })
    expect(() => estimate({ ...base, stopTimeZones: [chicago], legMiles: [] })).toThrow(RangeError)
    expect(() => estimate({ ...base, legMiles: [1, 2] })).toThrow(RangeError)
    expect(() => estimate({ ...base, legMiles: [-1] })).toThrow(RangeError)
    expect(() => estimate({ ...base, legMiles: [Number.NaN] })).toThrow(RangeError)
    expect(() => estimate({ ...base, vehicle: { ...vehicle("car"), speedMph: 0 } })).toThrow(RangeError)
    const { windowMinutes: _w, ...noWindow } = service("rush")
    expect(() => estimate({ ...base, service: noWindow })).toThrow(RangeError)
  })
})

describe("estimate: properties", () => {
  const ZONES = [
    chicago,
    "America/Phoenix",
    "Pacific/Honolulu",
    "America/Anchorage",
    "America/New_York",
    denver
  ] as const
  const inputArb = fc
    .record({
      readySeconds: fc.integer({ min: 1_767_225_600, max: 1_830_297_600 }), // 2026-01-01 .. 2028-01-01
      readyMs: fc.integer({ min: 0, max: 999 }),
      service: fc.constantFrom(...defaults.services),
      vehicle: fc.constantFrom(...defaults.vehicles),
      stops: fc.array(
        fc.record({ zone: fc.constantFrom(...ZONES), miles: fc.double({ min: 0, max: 300, noNaN: true }) }),
        {
          minLength: 1,
          maxLength: 6
        }
      ),
      pickupZone: fc.constantFrom(...ZONES),
      requestedAfterSeconds: fc.integer({ min: -86_400, max: 7 * 86_400 })
    })
    .map((r): EtaInput => {
      const readyAt = r.readySeconds * 1000 + r.readyMs
      return {
        readyAt,
        service: r.service,
        vehicle: r.vehicle,
        stopTimeZones: [r.pickupZone, ...r.stops.map((s) => s.zone)],
        legMiles: r.stops.map((s) => s.miles),
        requestedDeliveryAt: readyAt + r.requestedAfterSeconds * 1000,
        routing: defaults.routing,
        hours: defaults.businessHours
      }
    })

  it("stop ETAs are non-decreasing, in business hours, and estimated <= guaranteed", () => {
    fc.assert(
      fc.property(inputArb, (i) => {
        const r = estimate(i)
        expect(r.stopEtas).toHaveLength(i.stopTimeZones.length)
        expect(r.stopEtas[0]).toBe(r.pickupAt)
        expect(r.estimatedDeliveryAt).toBe(r.stopEtas[r.stopEtas.length - 1])
        expect(r.pickupAt).toBeGreaterThanOrEqual(Math.floor(i.readyAt / 1000) * 1000)
        r.stopEtas.forEach((t, k) => {
          if (k > 0) expect(t).toBeGreaterThanOrEqual(r.stopEtas[k - 1] ?? Number.NaN)
          const l = toLocal(t, i.stopTimeZones[k] ?? chicago)
          const hhmm = formatLocal(l).slice(11, 16)
          expect(isBusinessDay(l, i.hours) && hhmm >= i.hours.open && hhmm < i.hours.close).toBe(true)
        })
        expect(r.estimatedDeliveryAt).toBeLessThanOrEqual(r.guaranteedDeliveryAt)
        expect(r.guaranteedDeliveryAt).toBeGreaterThanOrEqual(Math.ceil(r.estimatedDeliveryAt / 900_000) * 900_000)
        for (const t of [r.pickupAt, ...r.stopEtas, r.guaranteedDeliveryAt]) expect(t % 1000).toBe(0)
      }),
      { numRuns: 300 }
    )
  })

  it("a longer leg never makes any arrival earlier", () => {
    fc.assert(
      fc.property(inputArb, fc.nat(), fc.double({ min: 0, max: 200, noNaN: true }), (i, which, extra) => {
        const k = which % i.legMiles.length
        const longer: EtaInput = { ...i, legMiles: i.legMiles.map((m, j) => (j === k ? m + extra : m)) }
        const a = estimate(i)
        const b = estimate(longer)
        expect(b.estimatedDeliveryAt).toBeGreaterThanOrEqual(a.estimatedDeliveryAt)
        a.stopEtas.forEach((t, j) => expect(b.stopEtas[j]).toBeGreaterThanOrEqual(t))
        expect(b.pickupAt).toBe(a.pickupAt)
      }),
      { numRuns: 300 }
    )
  })
})
