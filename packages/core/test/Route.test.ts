import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { type GeoPoint, haversineMiles, legsBetween, roadMiles, totalMiles } from "../src/geo/Route.js"

const chicago: GeoPoint = { latitude: 41.8781, longitude: -87.6298 }
const newYork: GeoPoint = { latitude: 40.7128, longitude: -74.006 }
const milwaukee: GeoPoint = { latitude: 43.0389, longitude: -87.9065 }

const point = fc.record({
  latitude: fc.double({ min: -90, max: 90, noNaN: true }),
  longitude: fc.double({ min: -180, max: 180, noNaN: true })
})

describe("haversineMiles", () => {
  it("matches known distances", () => {
    expect(haversineMiles(chicago, newYork)).toBeCloseTo(711.04, 2)
    expect(haversineMiles(chicago, milwaukee)).toBeCloseTo(81.44, 2)
    // One degree of longitude on the equator is 2 * pi * R / 360.
    expect(haversineMiles({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 1 })).toBeCloseTo(
      (Math.PI * 3958.8) / 180,
      9
    )
  })

  it("is zero for the same point and finite for antipodes", () => {
    expect(haversineMiles(chicago, chicago)).toBe(0)
    expect(haversineMiles({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 180 })).toBeCloseTo(
      Math.PI * 3958.8,
      6
    )
  })

  it("is symmetric, non-negative and at most half the circumference (property)", () => {
    fc.assert(
      fc.property(point, point, (a, b) => {
        const d = haversineMiles(a, b)
        return d >= 0 && d <= Math.PI * 3958.8 + 1e-6 && Math.abs(d - haversineMiles(b, a)) < 1e-6
      })
    )
  })
})

describe("roadMiles", () => {
  it("stretches the straight line by the circuity", () => {
    expect(roadMiles(chicago, milwaukee, 1.25)).toBeCloseTo(haversineMiles(chicago, milwaukee) * 1.25, 9)
    expect(roadMiles(chicago, milwaukee, 1)).toBe(haversineMiles(chicago, milwaukee))
  })
})

describe("legsBetween", () => {
  it("joins consecutive stops with rounded road miles", () => {
    expect(legsBetween([chicago, milwaukee, newYork], 1.25)).toEqual([
      { seq: 0, fromStop: 0, toStop: 1, miles: 101.79 },
      { seq: 1, fromStop: 1, toStop: 2, miles: 915.06 }
    ])
  })

  it("gives no legs for fewer than two points", () => {
    expect(legsBetween([], 1.25)).toEqual([])
    expect(legsBetween([chicago], 1.25)).toEqual([])
  })

  it("has n - 1 legs, numbered in order, in hundredths (property)", () => {
    fc.assert(
      fc.property(
        fc.array(point, { maxLength: 12 }),
        fc.double({ min: 1, max: 2, noNaN: true }),
        (points, circuity) => {
          const legs = legsBetween(points, circuity)
          return (
            legs.length === Math.max(0, points.length - 1) &&
            legs.every(
              (leg, i) =>
                leg.seq === i &&
                leg.fromStop === i &&
                leg.toStop === i + 1 &&
                Math.abs(leg.miles - roadMiles(points[i]!, points[i + 1]!, circuity)) <= 0.005 + 1e-9 &&
                Math.abs(leg.miles * 100 - Math.round(leg.miles * 100)) < 1e-6
            )
          )
        }
      )
    )
  })
})

describe("totalMiles", () => {
  it("sums legs without floating-point residue", () => {
    const legs = [{ miles: 0.1 }, { miles: 0.2 }]
    expect(totalMiles(legs)).toBe(0.3)
    expect(totalMiles([])).toBe(0)
  })

  it("equals the sum of legs from legsBetween", () => {
    const legs = legsBetween([chicago, milwaukee, newYork], 1.25)
    expect(totalMiles(legs)).toBe(1016.85)
  })
})
