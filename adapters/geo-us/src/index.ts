/**
 * @module @waybill/geo-us
 *
 * US ZIP code -> city, state, centroid and IANA time zone, implementing `@waybill/core`'s `Geo`
 * port from offline data (`zipcodes` for the ZIP rows, `tz-lookup` for the zone), with the
 * corrections a courier needs: Arizona on `America/Phoenix` except the Navajo Nation, border
 * ZIPs kept in their own state's zone, and military or coordinate-less ZIPs treated as unknown.
 *
 * ```ts
 * import { GeoUs } from "@waybill/geo-us"
 * program.pipe(Effect.provide(GeoUs.layer))
 * GeoUs.lookupZip("60601-1234")?.timeZone // "America/Chicago"
 * ```
 */

/**
 * The adapter as a namespace: `GeoUs.layer` for Effect programs, `GeoUs.lookupZip` for plain
 * code, `GeoUs.service` to compose. One namespace so call sites read as the adapter they pick.
 */
export * as GeoUs from "./GeoUs.js"

/**
 * `GeoUs.lookupZip`, also at the top level for non-Effect callers that want a bare import.
 */
export { lookupZip } from "./GeoUs.js"
