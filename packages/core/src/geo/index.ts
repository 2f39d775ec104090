/**
 * @module geo
 *
 * The only door into `geo/`: other capability folders and the package entry import from here.
 */
export * as LocalTime from "./LocalTime.js"
export * as Route from "./Route.js"
export { Geo, type GeoShape, type ZipLocation } from "./Geo.js"
export {
  type LocalDateTime,
  abbreviation,
  atClock,
  formatInZone,
  fromLocal,
  nextBusinessDay,
  parseClock,
  rollToBusinessHours,
  toLocal
} from "./LocalTime.js"
export { legsBetween, totalMiles } from "./Route.js"
export { type LegRecord } from "./Route.js"
