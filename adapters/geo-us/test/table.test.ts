import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import zipcodes from "zipcodes"
import { decodeTable, encodeTable, usableRows } from "../src/internal/table.js"

const shipped = readFileSync(new URL("../src/data/us-zips.tsv", import.meta.url), "utf8")

describe("the compact ZIP table", () => {
  it("is exactly what the zipcodes dataset gives (regenerate with `pnpm --filter @waybill/geo-us run table`)", () => {
    expect(shipped).toBe(encodeTable(usableRows(zipcodes.codes)))
  })

  it("holds every usable US row of the dataset, and no other", () => {
    const table = decodeTable(shipped)
    let usable = 0
    for (const [zip, row] of Object.entries(zipcodes.codes)) {
      const index = table.indexOf(zip)
      const isUsable =
        /^\d{5}$/.test(zip) &&
        row?.country === "US" &&
        typeof row.city === "string" &&
        row.city.trim() !== "" &&
        typeof row.latitude === "number" &&
        typeof row.longitude === "number" &&
        !(row.latitude === 0 && row.longitude === 0)
      if (!isUsable) {
        if (/^\d{5}$/.test(zip)) expect(index, zip).toBe(-1)
        continue
      }
      usable++
      expect(table.row(index)).toEqual({
        zip,
        state: row.state,
        latitude: row.latitude,
        longitude: row.longitude,
        city: (row.city as string).trim()
      })
    }
    expect(table.size).toBe(usable)
    expect(table.indexOf("00000")).toBe(-1)
    expect(table.indexOf("99999")).toBe(-1)
  })

  it("finds the rows of a state", () => {
    const table = decodeTable(shipped)
    const rhodeIsland = table.indicesOfState("RI").map((i) => table.row(i))
    expect(rhodeIsland.length).toBeGreaterThan(50)
    expect(rhodeIsland.every((r) => r.state === "RI" && r.zip.startsWith("02"))).toBe(true)
    expect(table.indicesOfState("XX")).toEqual([])
  })

  it("refuses a malformed or unsorted file", () => {
    expect(() => decodeTable("1234\tNY\t1\t2\tX\n")).toThrow(/malformed/)
    expect(() => decodeTable("10001\tNY\t1\t2\n")).toThrow(/malformed/)
    expect(() => decodeTable("10002\tNY\t1\t2\tA\n10001\tNY\t1\t2\tB\n")).toThrow(/sorted/)
  })
})
