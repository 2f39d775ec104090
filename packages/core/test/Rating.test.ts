import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import type { RateCard } from "../src/access/Account.js"
import { defaults, type ServiceOption, type VehicleOption, type VehicleRates } from "../src/shared/Config.js"
import { effectiveRates, listRate, rate, type RateInput } from "../src/booking/Rating.js"
import type { ChargeBreakdown } from "../src/shipments/Shipment.js"

const vehicle = (code: string): VehicleOption => defaults.vehicles.find((v) => v.code === code)!
const service = (code: string): ServiceOption => defaults.services.find((s) => s.code === code)!

const input = (over: Partial<RateInput> = {}): RateInput => ({
  vehicle: vehicle("car"),
  service: service("sameday"),
  miles: 12.5,
  weightLb: 40,
  stops: 2,
  liftgate: false,
  signature: false,
  fees: defaults.fees,
  rateCard: null,
  ...over
})

const cents = (x: number): number => Math.round(x * 100)
const parts = (c: ChargeBreakdown) => [c.transport, c.weight, c.stops, c.fuel, c.extras, -c.discount]
const isCents = (x: number): boolean => Math.abs(x * 100 - Math.round(x * 100)) < 1e-6

// ---- arbitraries ---------------------------------------------------------------------------

const money = fc.integer({ min: 0, max: 20_000 }).map((c) => c / 100)
const override: fc.Arbitrary<Partial<VehicleRates>> = fc.record(
  {
    base: money,
    includedMiles: fc.integer({ min: 0, max: 50 }),
    perMile: money,
    includedWeightLb: fc.integer({ min: 0, max: 1000 }),
    perLb: fc.integer({ min: 0, max: 300 }).map((c) => c / 100),
    perExtraStop: money,
    minimum: money
  },
  { requiredKeys: [] }
)
const card: fc.Arbitrary<RateCard | null> = fc.option(
  fc.record(
    {
      discountPercent: fc.double({ min: 0, max: 100, noNaN: true }),
      floor: money,
      vehicles: fc.dictionary(fc.constantFrom(...defaults.vehicles.map((v) => v.code)), override)
    },
    { requiredKeys: [] }
  ),
  { nil: null }
)
const rateInput: fc.Arbitrary<RateInput> = fc.record({
  vehicle: fc.constantFrom(...defaults.vehicles),
  service: fc.constantFrom(...defaults.services),
  miles: fc.double({ min: 0, max: 2000, noNaN: true }),
  weightLb: fc.double({ min: 0, max: 10_000, noNaN: true }),
  stops: fc.integer({ min: 2, max: 50 }),
  liftgate: fc.boolean(),
  signature: fc.boolean(),
  fees: fc.constant(defaults.fees),
  rateCard: card
})
const more = fc.double({ min: 0, max: 500, noNaN: true })

// ---- examples ------------------------------------------------------------------------------

describe("rate: list price examples", () => {
  it("car, same day, 12.5 mi, 40 lb", () => {
    // transport 18 + 1.75 x 7.5 = 31.125 -> 31.13; weight 0.25 x 15 = 3.75; fuel 12% of 34.88 = 4.1856 -> 4.19
    expect(rate(input())).toEqual({
      transport: 31.13,
      weight: 3.75,
      stops: 0,
      fuel: 4.19,
      extras: 0,
      discount: 0,
      total: 39.07
    })
  })

  it("rush applies the multiplier to transport, weight and stops; extras are flat", () => {
    // transport (18 + 1.75 x 5) x 1.75 = 46.8125; stops 7.5 x 1.75 = 13.125 -> 13.13; fuel 12% of 59.94 = 7.1928
    expect(
      rate(input({ service: service("rush"), miles: 10, weightLb: 10, stops: 3, liftgate: true, signature: true }))
    ).toEqual({ transport: 46.81, weight: 0, stops: 13.13, fuel: 7.19, extras: 38.5, discount: 0, total: 105.63 })
    const w = rate(input({ service: service("rush"), miles: 0, weightLb: 45 }))
    expect(w.weight).toBe(8.75) // 0.25 x 20 x 1.75
  })

  it("raises transport so the subtotal reaches the minimum", () => {
    // next day bike: 12 x 0.85 = 10.20, fuel 1.22, sum 11.42 < minimum 12
    expect(listRate(input({ vehicle: vehicle("bike"), service: service("nextday"), miles: 1, weightLb: 1 }))).toEqual({
      transport: 10.78,
      weight: 0,
      stops: 0,
      fuel: 1.22,
      extras: 0,
      discount: 0,
      total: 12
    })
  })

  it("rounds each component half up, even when binary floating point lands just below", () => {
    // 1.005 x 100 is 100.49999999999999 in binary; the half cent still rounds up.
    const card: RateCard = { vehicles: { car: { base: 1.005, includedMiles: 1000, minimum: 0 } } }
    expect(
      rate(input({ rateCard: card, weightLb: 0, fees: { ...defaults.fees, fuelSurchargePercent: 0 } })).transport
    ).toBe(1.01)
  })

  it("listRate drops a card passed along with the input", () => {
    expect(listRate(input({ rateCard: { discountPercent: 10 } }))).toEqual(rate(input()))
  })
})

describe("rate: negotiated examples", () => {
  it("overrides the tariff field by field for the card's vehicle only", () => {
    const card: RateCard = { vehicles: { car: { perMile: 1 } } }
    expect(effectiveRates(vehicle("car"), card)).toEqual({ ...vehicle("car").rates, perMile: 1 })
    expect(effectiveRates(vehicle("suv"), card)).toBe(vehicle("suv").rates)
    // transport 18 + 7.5 = 25.50, weight 3.75, fuel 12% of 29.25 = 3.51
    expect(rate(input({ rateCard: card }))).toEqual({
      transport: 25.5,
      weight: 3.75,
      stops: 0,
      fuel: 3.51,
      extras: 0,
      discount: 0,
      total: 32.76
    })
  })

  it("ignores inherited keys and non-finite overrides", () => {
    const weird = { vehicles: { car: { perMile: Number.NaN } } } as RateCard
    expect(effectiveRates(vehicle("car"), weird)).toEqual(vehicle("car").rates)
    expect(effectiveRates({ ...vehicle("car"), code: "toString" }, { vehicles: {} })).toEqual(vehicle("car").rates)
  })

  it("takes the discount off the subtotal", () => {
    // 10% of 39.07 = 3.907 -> 3.91
    expect(rate(input({ rateCard: { discountPercent: 10 } }))).toEqual({
      transport: 31.13,
      weight: 3.75,
      stops: 0,
      fuel: 4.19,
      extras: 0,
      discount: 3.91,
      total: 35.16
    })
  })

  it("reduces the discount so the total stays at the floor", () => {
    const r = rate(input({ rateCard: { discountPercent: 50, floor: 25 } }))
    expect(r.discount).toBe(14.07)
    expect(r.total).toBe(25)
  })

  it("defaults the floor to the effective minimum", () => {
    expect(rate(input({ rateCard: { discountPercent: 90 } })).total).toBe(18)
    expect(rate(input({ rateCard: { discountPercent: 90, vehicles: { car: { minimum: 30 } } } })).total).toBe(30)
  })

  it("never makes the discount negative when the subtotal is below the floor", () => {
    const r = rate(input({ rateCard: { discountPercent: 10, floor: 100 } }))
    expect(r.discount).toBe(0)
    expect(r.total).toBe(39.07)
  })

  it("clamps out-of-range and non-finite discount percents", () => {
    expect(rate(input({ rateCard: { discountPercent: -10 } })).discount).toBe(0)
    expect(rate(input({ rateCard: { discountPercent: Number.NaN } })).discount).toBe(0)
    expect(rate(input({ rateCard: { discountPercent: 150, floor: 0 } })).total).toBe(0)
  })
})

// ---- properties ----------------------------------------------------------------------------

describe("rate: properties", () => {
  it("total is non-negative and exactly the sum of its parts in cents", () => {
    fc.assert(
      fc.property(rateInput, (i) => {
        const r = rate(i)
        return r.total >= 0 && cents(r.total) === parts(r).reduce((s, p) => s + cents(p), 0)
      })
    )
  })

  it("every component is an integer number of cents and none is negative", () => {
    fc.assert(
      fc.property(rateInput, (i) => {
        const r = rate(i)
        return Object.values(r).every((x) => isCents(x) && x >= 0)
      })
    )
  })

  it("the subtotal never falls below the effective minimum", () => {
    fc.assert(
      fc.property(rateInput, (i) => {
        const r = rate(i)
        return cents(r.total + r.discount) >= cents(effectiveRates(i.vehicle, i.rateCard).minimum)
      })
    )
  })

  it("total is non-decreasing in miles", () => {
    fc.assert(fc.property(rateInput, more, (i, d) => rate(i).total <= rate({ ...i, miles: i.miles + d }).total))
  })

  it("total is non-decreasing in weight", () => {
    fc.assert(fc.property(rateInput, more, (i, d) => rate(i).total <= rate({ ...i, weightLb: i.weightLb + d }).total))
  })

  it("total is non-decreasing in stops", () => {
    fc.assert(
      fc.property(
        rateInput,
        fc.integer({ min: 0, max: 20 }),
        (i, d) => rate(i).total <= rate({ ...i, stops: i.stops + d }).total
      )
    )
  })

  it("a discount-only card is at most list price and at least the floor (or list, if lower)", () => {
    fc.assert(
      fc.property(
        rateInput,
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.option(money, { nil: undefined }),
        (i, discountPercent, floor) => {
          const list = listRate(i)
          const rateCard: RateCard = floor === undefined ? { discountPercent } : { discountPercent, floor }
          const negotiated = rate({ ...i, rateCard })
          const effectiveFloor = floor ?? i.vehicle.rates.minimum
          return (
            negotiated.total <= list.total &&
            cents(negotiated.total) >= Math.min(cents(list.total), cents(effectiveFloor)) &&
            negotiated.discount >= 0
          )
        }
      )
    )
  })

  it("an empty card, or one for other vehicles, is list price; listRate ignores any card", () => {
    fc.assert(
      fc.property(rateInput, fc.constantFrom(...defaults.vehicles.map((v) => v.code)), override, (i, other, o) => {
        const list = listRate(i)
        const elsewhere = other === i.vehicle.code ? {} : { vehicles: { [other]: o } }
        expect(rate({ ...i, rateCard: {} })).toEqual(list)
        expect(rate({ ...i, rateCard: elsewhere })).toEqual(list)
        expect(list.discount).toBe(0)
        expect(list).toEqual(rate({ ...i, rateCard: null }))
      })
    )
  })
})
