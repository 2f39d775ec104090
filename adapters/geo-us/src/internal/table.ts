/**
 * The compact ZIP table: what the adapter needs of the `zipcodes` dataset (5-digit ZIP, state,
 * centroid, city of each usable US row), as a text file shipped with the package and read on the
 * first lookup into a few typed arrays and one string of the distinct city names: about 1.2 MiB
 * for the life of the process, where a string per row would hold 3.7 (V8 keeps a long enough
 * piece of a string as a view of the whole, so the rows would keep the file's text alive).
 *
 * Requiring `zipcodes` itself means V8 parsing and compiling a 5 MB object literal: about 80 MiB
 * more peak RSS for the life of a server, for a table that needs about 2 MiB. The file is made
 * from `zipcodes` by `pnpm --filter @waybill/geo-us run table` (scripts/table.ts), and a test
 * checks that it still is exactly what that gives.
 *
 * Format: one row per line, sorted by ZIP, tab-separated `zip state latitude longitude city`.
 *
 * @internal
 */

/** One usable row. */
export interface TableRow {
  readonly zip: string
  readonly state: string
  readonly latitude: number
  readonly longitude: number
  readonly city: string
}

const isCoordinate = (value: unknown, bound: number): value is number =>
  typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= bound

/**
 * The rows of a `zipcodes`-shaped dataset the adapter can use: US rows keyed by a 5-digit ZIP,
 * with a city and a state, and real coordinates. The dataset uses (0, 0) for "unknown" (306
 * rows, mostly APO/FPO), which tz-lookup would happily resolve to `Etc/GMT`, so that point is
 * dropped along with non-finite or out-of-range values. Sorted by ZIP.
 */
export const usableRows = (codes: { readonly [key: string]: unknown }): ReadonlyArray<TableRow> => {
  const rows: Array<TableRow> = []
  for (const zip of Object.keys(codes)) {
    if (!/^\d{5}$/.test(zip)) continue
    const row = codes[zip] as { [field: string]: unknown } | undefined
    if (row === undefined || row === null || row["country"] !== "US") continue
    const { city, latitude, longitude, state } = row
    if (typeof city !== "string" || city.trim() === "") continue
    if (typeof state !== "string" || !/^[A-Z]{2}$/.test(state)) continue
    if (!isCoordinate(latitude, 90) || !isCoordinate(longitude, 180)) continue
    if (latitude === 0 && longitude === 0) continue
    // Tabs and line breaks would break the format; no real city name has one.
    if (/[\t\r\n]/.test(city)) continue
    rows.push({ zip, state, latitude, longitude, city: city.trim() })
  }
  return rows.sort((a, b) => (a.zip < b.zip ? -1 : a.zip > b.zip ? 1 : 0))
}

/** The file's text for these rows (see the module's format). */
export const encodeTable = (rows: ReadonlyArray<TableRow>): string =>
  rows.map((r) => `${r.zip}\t${r.state}\t${r.latitude}\t${r.longitude}\t${r.city}\n`).join("")

/**
 * The table in memory: columns in typed arrays, the city as an index into the distinct names
 * (about 19,000 for 42,000 rows) laid end to end in one string, rows found by binary search on the
 * ZIP.
 */
export interface ZipTable {
  readonly size: number
  /** The row index of a 5-digit ZIP, or -1. */
  readonly indexOf: (zip: string) => number
  readonly row: (index: number) => TableRow
  /** The indices of every row of a state. */
  readonly indicesOfState: (state: string) => ReadonlyArray<number>
}

/** Reads the file's text; throws on a malformed line (the file ships with the package). */
export const decodeTable = (text: string): ZipTable => {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  const size = lines.length
  const zips = new Int32Array(size)
  const latitudes = new Float64Array(size)
  const longitudes = new Float64Array(size)
  const stateOf = new Uint8Array(size)
  const cityOf = new Uint32Array(size)
  const states: Array<string> = []
  const cityIds = new Map<string, number>()
  for (let i = 0; i < size; i++) {
    const [zip, state, latitude, longitude, city] = lines[i]!.split("\t")
    if (zip === undefined || !/^\d{5}$/.test(zip) || state === undefined || city === undefined)
      throw new Error(`geo-us: malformed ZIP table line ${i + 1}`)
    zips[i] = Number(zip)
    if (i > 0 && zips[i]! <= zips[i - 1]!) throw new Error(`geo-us: ZIP table not sorted at line ${i + 1}`)
    latitudes[i] = Number(latitude)
    longitudes[i] = Number(longitude)
    let s = states.indexOf(state)
    if (s < 0) s = states.push(state) - 1
    stateOf[i] = s
    let c = cityIds.get(city)
    if (c === undefined) cityIds.set(city, (c = cityIds.size))
    cityOf[i] = c
  }
  // One new string for every name (the file's text and its lines can then be collected), and
  // where each name starts in it.
  const names = [...cityIds.keys()].join("")
  const nameStarts = new Uint32Array(cityIds.size + 1)
  let offset = 0
  for (const [name, c] of cityIds) {
    nameStarts[c] = offset
    offset += name.length
  }
  nameStarts[cityIds.size] = offset
  const indexOf = (zip: string): number => {
    const n = Number(zip)
    let lo = 0
    let hi = size - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const at = zips[mid]!
      if (at === n) return mid
      if (at < n) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }
  return {
    size,
    indexOf,
    row: (i) => ({
      zip: String(zips[i]).padStart(5, "0"),
      state: states[stateOf[i]!]!,
      latitude: latitudes[i]!,
      longitude: longitudes[i]!,
      city: names.slice(nameStarts[cityOf[i]!]!, nameStarts[cityOf[i]! + 1]!)
    }),
    indicesOfState: (state) => {
      const s = states.indexOf(state)
      const out: Array<number> = []
      if (s < 0) return out
      for (let i = 0; i < size; i++) if (stateOf[i] === s) out.push(i)
      return out
    }
  }
}
