/**
 * @module Route
 *
 * Distances between stops without a routing engine: great-circle distance stretched by a
 * configured circuity factor (`Routing.circuity`) approximates road miles well enough to rate
 * and estimate a courier run, and keeps the core pure and deterministic.
 */

/** A position in decimal degrees (WGS 84). `StopRecord` and `ZipLocation` both fit. */
export interface GeoPoint {
  readonly latitude: number
  readonly longitude: number
}

/** One leg of a route: from stop `fromStop` to stop `toStop` (indexes into the stops), in road miles. */
export interface LegRecord {
  readonly seq: number
  readonly fromStop: number
  readonly toStop: number
  /** Estimated road miles. */
  readonly miles: number
}

/** Mean earth radius in statute miles. */
export const earthRadiusMiles = 3958.8

const radians = (degrees: number): number => (degrees * Math.PI) / 180

/**
 * Great-circle distance in miles by the haversine formula, which stays accurate for the short
 * hops of local delivery (where the spherical law of cosines loses precision).
 */
export const haversineMiles = (a: GeoPoint, b: GeoPoint): number => {
  const dLat = radians(b.latitude - a.latitude)
  const dLon = radians(b.longitude - a.longitude)
  const h =
    Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2
  // Rounding can push h a hair outside [0, 1] for antipodal points; asin would then be NaN.
  return 2 * earthRadiusMiles * Math.asin(Math.sqrt(Math.min(1, Math.max(0, h))))
}

/** Estimated road miles: the straight line times `circuity` (1.25 by default). */
export const roadMiles = (a: GeoPoint, b: GeoPoint, circuity: number): number => haversineMiles(a, b) * circuity

/** Miles rounded to hundredths, the precision stored on a leg. */
const hundredths = (miles: number): number => Math.round(miles * 100) / 100

/**
 * The legs joining consecutive stops of a route (pickup first, final delivery last): `n - 1`
 * legs for `n` points, leg `i` from stop `i` to stop `i + 1`, in road miles rounded to 0.01.
 * Fewer than two points give no legs.
 */
export const legsBetween = (points: ReadonlyArray<GeoPoint>, circuity: number): ReadonlyArray<LegRecord> =>
  points.slice(1).map((to, i) => ({
    seq: i,
    fromStop: i,
    toStop: i + 1,
    miles: hundredths(roadMiles(points[i]!, to, circuity))
  }))

/**
 * The route's length: the sum of its legs, summed in whole hundredths so the total carries no
 * floating-point residue (`0.1 + 0.2`) into rating.
 */
export const totalMiles = (legs: ReadonlyArray<Pick<LegRecord, "miles">>): number =>
  legs.reduce((sum, leg) => sum + Math.round(leg.miles * 100), 0) / 100
