import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import { canCarry, capacityProblem, normalizeName, resolveService, resolveVehicle } from "../src/booking/Catalog.js"
import { defaults, type ServiceOption, type VehicleOption } from "../src/shared/Config.js"

const { services, vehicles } = defaults
const code = <A extends { readonly code: string }>(o: Option.Option<A>): string | undefined =>
  Option.getOrUndefined(Option.map(o, (a) => a.code))
const vehicle = (c: string): VehicleOption => vehicles.find((v) => v.code === c)!

/** A spelling of `name` with random case and random separators between characters. */
const respell = (name: string) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }),
      fc.array(fc.constantFrom("", "", " ", "-", "_", ".", "\t", "  "), {
        minLength: name.length + 1,
        maxLength: name.length + 1
      })
    )
    .map(
      ([upper, seps]) =>
        seps[0] + [...name].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch.toLowerCase()) + seps[i + 1]).join("")
    )

describe("normalizeName", () => {
  it("lowercases and drops whitespace, '-', '_' and '.'", () => {
    expect(normalizeName(" Cargo-Van ")).toBe("cargovan")
    expect(normalizeName("Two_Hour.\tService")).toBe("twohourservice")
    expect(normalizeName("")).toBe("")
  })
})

describe("resolveService", () => {
  it("matches codes and aliases in any spelling", () => {
    expect(code(resolveService(services, "RUSH"))).toBe("rush")
    expect(code(resolveService(services, "Hot-Shot"))).toBe("rush")
    expect(code(resolveService(services, "2 Hours"))).toBe("2hour")
    expect(code(resolveService(services, "2HR"))).toBe("2hour")
    expect(code(resolveService(services, "same_day"))).toBe("sameday")
    expect(code(resolveService(services, "Over Night"))).toBe("nextday")
    expect(code(resolveService(services, "appointment"))).toBe("scheduled")
  })

  it("rejects unknown and empty names", () => {
    expect(resolveService(services, "3hour")).toEqual(Option.none())
    expect(resolveService(services, "")).toEqual(Option.none())
    expect(resolveService(services, " - ")).toEqual(Option.none())
  })

  it("prefers a code over another option's alias, whatever the order", () => {
    const base = services[0]
    const a: ServiceOption = { ...base, code: "express", aliases: ["fast"] }
    const b: ServiceOption = { ...base, code: "priority", aliases: ["express"] }
    expect(code(resolveService([b, a], "Express"))).toBe("express")
  })

  it("is insensitive to case and separators for every code and alias (property)", () => {
    const names = services.flatMap((s) => [s.code, ...s.aliases].map((name) => ({ name, code: s.code })))
    fc.assert(
      fc.property(
        fc.constantFrom(...names).chain((n) => respell(n.name).map((spelled) => ({ ...n, spelled }))),
        ({ code: expected, spelled }) => code(resolveService(services, spelled)) === expected
      )
    )
  })

  it("default names are unambiguous once normalized", () => {
    for (const options of [services, vehicles] as const) {
      const keys = options.flatMap((o) => [...new Set([o.code, ...o.aliases].map(normalizeName))])
      expect(new Set(keys).size).toBe(keys.length)
    }
  })
})

describe("resolveVehicle", () => {
  it("matches codes and aliases in any spelling", () => {
    expect(code(resolveVehicle(vehicles, "Car"))).toBe("car")
    expect(code(resolveVehicle(vehicles, "Cargo Van"))).toBe("cargovan")
    expect(code(resolveVehicle(vehicles, "van"))).toBe("cargovan")
    expect(code(resolveVehicle(vehicles, "Small-Van"))).toBe("suv")
    expect(code(resolveVehicle(vehicles, "STRAIGHT TRUCK"))).toBe("boxtruck")
    expect(resolveVehicle(vehicles, "helicopter")).toEqual(Option.none())
  })

  it("is insensitive to case and separators for every code and alias (property)", () => {
    const names = vehicles.flatMap((v) => [v.code, ...v.aliases].map((name) => ({ name, code: v.code })))
    fc.assert(
      fc.property(
        fc.constantFrom(...names).chain((n) => respell(n.name).map((spelled) => ({ ...n, spelled }))),
        ({ code: expected, spelled }) => code(resolveVehicle(vehicles, spelled)) === expected
      )
    )
  })
})

describe("capacity", () => {
  const car = vehicle("car")

  it("accepts loads up to and including the limits", () => {
    expect(canCarry(car, 100, 10)).toBe(true)
    expect(capacityProblem(car, 99.5, 1)).toEqual(Option.none())
  })

  it("names the weight limit", () => {
    expect(capacityProblem(car, 150, 1)).toEqual(Option.some("Weight 150 lb exceeds the car limit of 100 lb"))
    expect(canCarry(car, 100.5, 1)).toBe(false)
  })

  it("names the pieces limit", () => {
    expect(capacityProblem(car, 10, 12)).toEqual(Option.some("Pieces 12 exceeds the car limit of 10 pieces"))
    expect(canCarry(car, 10, 11)).toBe(false)
  })

  it("names both limits when both are exceeded", () => {
    expect(capacityProblem(vehicle("bike"), 30, 4)).toEqual(
      Option.some("Weight 30 lb exceeds the bike limit of 25 lb; Pieces 4 exceeds the bike limit of 3 pieces")
    )
  })

  it("never carries NaN", () => {
    expect(canCarry(car, Number.NaN, 1)).toBe(false)
  })

  it("canCarry agrees with the limits (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...vehicles),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.integer({ min: 1, max: 500 }),
        (v, w, p) =>
          canCarry(v, w, p) === (w <= v.maxWeightLb && p <= v.maxPieces) &&
          canCarry(v, w, p) === Option.isNone(capacityProblem(v, w, p))
      )
    )
  })
})
