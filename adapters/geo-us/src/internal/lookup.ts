/**
 * The synchronous core of the adapter: ZIP normalisation, row validation, zone resolution and
 * the memo. Kept free of Effect so `lookupZip` can serve non-Effect callers with the same cache.
 *
 * @internal
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { ZipLocation } from "@waybill/core"
import tzlookup from "tz-lookup"
import { decodeTable, type ZipTable } from "./table.js"
import { STATE_ZONES, ZIP_ZONES } from "./zones.js"

const ZIP_PATTERN = /^(\d{5})(?:-\d{4})?$/

/** The ZIP table's file: beside the bundle in `dist/` (tsup copies it), in `src/data/` from the sources. */
const TABLE_FILES = ["./us-zips.tsv", "../data/us-zips.tsv"]

/**
 * The ZIP table (about 42,000 rows, `table.ts`) loads on the first lookup, not at import: a
 * process that never looks a ZIP up (most CLI commands) does not read it.
 */
let table: ZipTable | undefined
const zipTable = (): ZipTable => {
  if (table !== undefined) return table
  let text: string | undefined
  for (const candidate of TABLE_FILES) {
    try {
      text = readFileSync(fileURLToPath(new URL(candidate, import.meta.url)), "utf8")
      break
    } catch (e) {
      if ((e as { code?: unknown }).code !== "ENOENT") throw e
    }
  }
  if (text === undefined) throw new Error("geo-us: the ZIP table us-zips.tsv is missing from the package")
  table = decodeTable(text)
  return table
}

/**
 * A ZIP centroid whose raw zone is off for its state must have another ZIP of the same state
 * within this distance, or its coordinates are taken to be wrong (e.g. 10200 "New York" sits in
 * Kyrgyzstan: its longitude lost its sign). Generous enough for rural Alaska and the Arizona Strip.
 */
const MAX_NEIGHBOUR_KM = 150

/**
 * The 5-digit ZIP in `input` (surrounding whitespace ignored, `+4` suffix dropped), or undefined
 * when `input` is neither `12345` nor `12345-6789`. Only ASCII digits count.
 *
 * @internal
 */
export const normalizeZip = (input: string): string | undefined => ZIP_PATTERN.exec(input.trim())?.[1]

interface Point {
  readonly latitude: number
  readonly longitude: number
}

interface IndexedZip extends Point {
  readonly zip: string
  /** What tz-lookup says for the centroid, before any correction. */
  readonly rawZone: string | undefined
}

interface ValidRow extends Point {
  readonly zip: string
  readonly city: string
  readonly state: string
}

/** The table's row for `zip` (the table holds only usable US rows: see `table.ts`). */
const validRow = (zip: string): ValidRow | undefined => {
  const index = zipTable().indexOf(zip)
  return index < 0 ? undefined : zipTable().row(index)
}

const rawZoneAt = (point: Point): string | undefined => {
  try {
    return tzlookup(point.latitude, point.longitude)
  } catch {
    return undefined
  }
}

/** Great-circle distance in kilometres; precision far beyond what a 150 km bound needs. */
const distanceKm = (a: Point, b: Point): number => {
  const rad = Math.PI / 180
  const dLat = (b.latitude - a.latitude) * rad
  const dLon = (b.longitude - a.longitude) * rad
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)))
}

/**
 * Every valid ZIP of a state with its raw zone. Built on the first border ZIP of that state
 * (one pass over the dataset per state, at most), then reused.
 */
const stateIndex = new Map<string, ReadonlyArray<IndexedZip>>()

const zipsOfState = (state: string): ReadonlyArray<IndexedZip> => {
  const cached = stateIndex.get(state)
  if (cached !== undefined) return cached
  const zips: Array<IndexedZip> = []
  for (const index of zipTable().indicesOfState(state)) {
    const row = zipTable().row(index)
    zips.push({ zip: row.zip, latitude: row.latitude, longitude: row.longitude, rawZone: rawZoneAt(row) })
  }
  stateIndex.set(state, zips)
  return zips
}

const nearest = (
  from: ValidRow,
  candidates: ReadonlyArray<IndexedZip>,
  accept: (candidate: IndexedZip) => boolean
): { readonly zip: IndexedZip; readonly km: number } | undefined => {
  let best: { zip: IndexedZip; km: number } | undefined
  for (const candidate of candidates) {
    if (candidate.zip === from.zip || !accept(candidate)) continue
    const km = distanceKm(from, candidate)
    if (best === undefined || km < best.km) best = { zip: candidate, km }
  }
  return best
}

/**
 * The zone for a valid row, or undefined when the row's coordinates cannot be trusted.
 *
 * 1. A hand-fixed zone (`ZIP_ZONES`) wins.
 * 2. tz-lookup's answer stands if the state uses that zone.
 * 3. Otherwise the centroid is near a border or wrong. Wrong (no same-state ZIP within
 *    `MAX_NEIGHBOUR_KM`) gives none; near a border gives the state's only zone, or for split
 *    states the zone of the nearest same-state ZIP whose own raw zone was acceptable.
 */
const resolveZone = (row: ValidRow, allowed: ReadonlyArray<string>): string | undefined => {
  const fixed = ZIP_ZONES.get(row.zip)
  if (fixed !== undefined) return fixed
  const raw = rawZoneAt(row)
  if (raw !== undefined && allowed.includes(raw)) return raw
  const sameState = zipsOfState(row.state)
  const closest = nearest(row, sameState, () => true)
  if (closest === undefined || closest.km > MAX_NEIGHBOUR_KM) return undefined
  if (allowed.length === 1) return allowed[0]
  const clean = nearest(row, sameState, (z) => z.rawZone !== undefined && allowed.includes(z.rawZone))
  return clean?.zip.rawZone ?? allowed[0]
}

const resolve = (zip: string): ZipLocation | undefined => {
  const row = validRow(zip)
  if (row === undefined) return undefined
  const allowed = STATE_ZONES.get(row.state)
  if (allowed === undefined) return undefined
  const timeZone = resolveZone(row, allowed)
  if (timeZone === undefined) return undefined
  return Object.freeze({
    zip,
    city: row.city,
    state: row.state,
    latitude: row.latitude,
    longitude: row.longitude,
    timeZone
  })
}

/**
 * Results by 5-digit ZIP, misses included. Bounded by the 100,000 possible keys, so it needs no
 * eviction; entries are frozen because every caller shares them.
 */
const memo = new Map<string, ZipLocation | undefined>()

/**
 * See `GeoUs.lookupZip`.
 *
 * @internal
 */
export const lookupZip = (zip: string): ZipLocation | undefined => {
  if (typeof zip !== "string") return undefined
  const five = normalizeZip(zip)
  if (five === undefined) return undefined
  if (memo.has(five)) return memo.get(five)
  const location = resolve(five)
  memo.set(five, location)
  return location
}
