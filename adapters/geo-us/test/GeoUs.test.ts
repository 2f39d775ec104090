import { Geo, type ZipLocation } from "@waybill/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import zipcodes from "zipcodes"
import { GeoUs, lookupZip } from "../src/index.js"
import { normalizeZip } from "../src/internal/lookup.js"
import { NAVAJO_NATION_AZ_ZIPS, STATE_ZONES, ZIP_ZONES } from "../src/internal/zones.js"

const ZIP_SHAPE = /^\s*\d{5}(-\d{4})?\s*$/

const validZones = new Map<string, boolean>()
const isValidZone = (timeZone: string): boolean => {
  let ok = validZones.get(timeZone)
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone })
      ok = true
    } catch {
      ok = false
    }
    validZones.set(timeZone, ok)
  }
  return ok
}

const expectLocation = (zip: string, city: string, state: string, timeZone: string) => {
  const location = lookupZip(zip)
  expect(location).toMatchObject({ zip: zip.trim().slice(0, 5), city, state, timeZone })
  expect(Number.isFinite(location?.latitude)).toBe(true)
  expect(Number.isFinite(location?.longitude)).toBe(true)
}

describe("GeoUs.layer", () => {
  it.effect("resolves a ZIP through the Geo port", () =>
    Effect.gen(function* () {
      const geo = yield* Geo
      const chicago = yield* geo.lookup("60601")
      expect(Option.map(chicago, (l) => [l.city, l.state, l.timeZone])).toEqual(
        Option.some(["Chicago", "IL", "America/Chicago"])
      )
      expect(yield* geo.lookup("00000")).toEqual(Option.none())
      expect(yield* geo.lookup("not a zip")).toEqual(Option.none())
    }).pipe(Effect.provide(GeoUs.layer))
  )
})

describe("lookupZip: well-known ZIPs", () => {
  it.each([
    ["10001", "New York", "NY", "America/New_York"],
    ["60601", "Chicago", "IL", "America/Chicago"],
    ["94103", "San Francisco", "CA", "America/Los_Angeles"],
    ["85001", "Phoenix", "AZ", "America/Phoenix"],
    ["96813", "Honolulu", "HI", "Pacific/Honolulu"],
    ["99501", "Anchorage", "AK", "America/Anchorage"],
    ["00901", "San Juan", "PR", "America/Puerto_Rico"],
    ["80202", "Denver", "CO", "America/Denver"]
  ])("%s is %s, %s in %s", (zip, city, state, timeZone) => expectLocation(zip, city, state, timeZone))

  it("accepts ZIP+4 and surrounding whitespace, returning the 5-digit ZIP", () => {
    expectLocation("60601-1234", "Chicago", "IL", "America/Chicago")
    expectLocation("  10001 ", "New York", "NY", "America/New_York")
    expectLocation("\t94103-0001\n", "San Francisco", "CA", "America/Los_Angeles")
  })

  it("memoizes: the same frozen object for repeated and ZIP+4 lookups", () => {
    const first = lookupZip("80202")
    expect(first).toBeDefined()
    expect(lookupZip("80202")).toBe(first)
    expect(lookupZip("80202-4321")).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
  })
})

describe("lookupZip: none", () => {
  it.each(["00000", "99999", "abcde", "", "1234", "123456", "12345-", "12345-678", "12345 6789", "１２３４５", "T0A"])(
    "%j is none",
    (zip) => expect(lookupZip(zip)).toBeUndefined()
  )

  it("is none for military APO/FPO/DPO ZIPs, with or without coordinates", () => {
    expect(lookupZip("34001")).toBeUndefined() // AA, (0, 0) in the dataset
    expect(lookupZip("34002")).toBeUndefined() // AA, has a Panama centroid
    expect(lookupZip("09001")).toBeUndefined() // AE
    expect(lookupZip("96201")).toBeUndefined() // AP
  })

  it("is none for a row whose coordinates are impossible for its state", () => {
    // 10200 "New York" has longitude +73.95: the dataset lost the sign, the point is in Kyrgyzstan
    expect(lookupZip("10200")).toBeUndefined()
  })

  it("is none for non-strings from untyped callers, without throwing", () => {
    expect(lookupZip(60601 as unknown as string)).toBeUndefined()
    expect(lookupZip(undefined as unknown as string)).toBeUndefined()
  })
})

describe("lookupZip: Arizona", () => {
  it.each([
    ["85711", "Tucson"],
    ["85364", "Yuma"],
    ["85369", "Yuma"], // raw tz-lookup: Los_Angeles
    ["85349", "San Luis"], // raw: Hermosillo
    ["86021", "Colorado City"], // raw: Denver, not Navajo
    ["85534", "Duncan"], // raw: Denver
    ["86039", "Kykotsmovi Village"], // Hopi, raw: Denver
    ["86042", "Polacca"], // Hopi
    ["86040", "Page"]
  ])("%s %s is America/Phoenix", (zip, city) => expectLocation(zip, city, "AZ", "America/Phoenix"))

  it.each([
    ["86515", "Window Rock"],
    ["86045", "Tuba City"],
    ["86503", "Chinle"],
    ["86033", "Kayenta"]
  ])("Navajo Nation %s %s is America/Denver", (zip, city) => expectLocation(zip, city, "AZ", "America/Denver"))

  it("every Arizona ZIP is Phoenix unless it is a Navajo Nation ZIP", () => {
    const az = Object.values(zipcodes.codes).filter((row) => row?.state === "AZ")
    expect(az.length).toBeGreaterThan(500)
    for (const row of az) {
      const zip = String(row?.zip)
      expect([zip, lookupZip(zip)?.timeZone]).toEqual([
        zip,
        NAVAJO_NATION_AZ_ZIPS.has(zip) ? "America/Denver" : "America/Phoenix"
      ])
    }
  })

  it("every Navajo Nation ZIP listed is in the dataset", () => {
    for (const zip of NAVAJO_NATION_AZ_ZIPS) expect([zip, lookupZip(zip)?.state]).toEqual([zip, "AZ"])
  })
})

describe("lookupZip: border ZIPs stay in their state's zone", () => {
  it.each([
    ["60966", "IL", "America/Chicago"], // Sheldon; raw Indiana/Indianapolis
    ["30124", "GA", "America/New_York"], // Cave Spring; raw Chicago
    ["73933", "OK", "America/Chicago"], // Boise City; raw Denver
    ["78560", "TX", "America/Chicago"], // La Joya; raw Monterrey (no DST)
    ["88008", "NM", "America/Denver"], // Santa Teresa; raw Ojinaga
    ["92363", "CA", "America/Los_Angeles"], // Needles; raw Phoenix
    ["83853", "ID", "America/Los_Angeles"], // Porthill; raw Creston (no DST)
    ["99742", "AK", "America/Nome"], // Gambell; raw Asia/Anadyr
    ["96799", "AS", "Pacific/Pago_Pago"], // raw Pacific/Apia, a day ahead
    ["89883", "NV", "America/Denver"], // West Wendover keeps Mountain time
    ["79901", "TX", "America/Denver"], // El Paso
    ["32501", "FL", "America/Chicago"], // Pensacola
    ["36867", "AL", "America/New_York"], // Phenix City, Eastern de facto
    ["38577", "TN", "America/Chicago"], // Pall Mall, Fentress County; raw Kentucky/Monticello
    ["83873", "ID", "America/Los_Angeles"], // Wallace, panhandle; raw Denver
    ["40104", "KY", "America/New_York"] // Battletown, Meade County; raw Indiana/Marengo
  ])("%s (%s) is %s", (zip, state, timeZone) => {
    expect(lookupZip(zip)).toMatchObject({ state, timeZone })
  })
})

describe("lookupZip: North Dakota", () => {
  it.each([
    ["58801", "Williston", "America/Chicago"], // raw Denver
    ["58730", "Crosby", "America/Chicago"], // raw Regina
    ["58854", "Watford City", "America/Chicago"], // raw Denver
    ["58563", "New Salem", "America/North_Dakota/New_Salem"], // raw Denver
    ["58501", "Bismarck", "America/Chicago"],
    ["58601", "Dickinson", "America/Denver"],
    ["58623", "Bowman", "America/Denver"]
  ])("%s %s is %s", (zip, city, timeZone) => expectLocation(zip, city, "ND", timeZone))
})

describe("lookupZip: whole dataset", () => {
  it("every US row resolves to a valid zone its state uses, or to none for a stated reason", () => {
    const reasons = new Map<string, number>()
    const count = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    for (const row of Object.values(zipcodes.codes)) {
      if (row?.country !== "US") continue
      const zip = String(row.zip)
      const location: ZipLocation | undefined = lookupZip(zip)
      if (location === undefined) {
        if (["AA", "AE", "AP"].includes(String(row.state))) count("military")
        else if (row.latitude === 0 && row.longitude === 0) count("no coordinates")
        else count(`other: ${zip}`)
        continue
      }
      expect(location.zip).toBe(zip)
      expect(isValidZone(location.timeZone)).toBe(true)
      const allowed = STATE_ZONES.get(location.state) ?? []
      if (!allowed.includes(location.timeZone)) expect(ZIP_ZONES.get(zip)).toBe(location.timeZone)
    }
    expect(reasons.get("military")).toBe(649)
    expect([...reasons.keys()].filter((r) => r.startsWith("other"))).toEqual(["other: 10200"])
  })
})

describe("lookupZip: properties", () => {
  const zipLike = fc
    .tuple(
      fc.constantFrom("", " ", "\t", "\n "),
      fc.stringMatching(/^\d{5}$/),
      fc.option(fc.stringMatching(/^-\d{4}$/), { nil: "" }),
      fc.constantFrom("", " ", "\r\n")
    )
    .map(([pre, five, plus4, post]) => `${pre}${five}${plus4}${post}`)

  it("never throws, and is none unless the input has the ZIP shape", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), zipLike), (input) => {
        const location = lookupZip(input)
        if (!ZIP_SHAPE.test(input)) expect(location).toBeUndefined()
        else if (location !== undefined) expect(location.zip).toBe(input.trim().slice(0, 5))
      }),
      { numRuns: 2000 }
    )
  })

  it("every zone returned is one Intl accepts", () => {
    fc.assert(
      fc.property(zipLike, (input) => {
        const location = lookupZip(input)
        if (location !== undefined) expect(isValidZone(location.timeZone)).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })

  it("normalizeZip agrees with the ZIP shape", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), zipLike), (input) => {
        expect(normalizeZip(input) !== undefined).toBe(ZIP_SHAPE.test(input))
      })
    )
  })
})
