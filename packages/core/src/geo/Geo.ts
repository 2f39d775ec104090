/**
 * @module Geo
 *
 * ZIP code -> centroid, city, state and IANA time zone. Every stop's local times are computed
 * in the zone its ZIP gives.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

export interface ZipLocation {
  /** Five digits. */
  readonly zip: string
  readonly city: string
  readonly state: string
  readonly latitude: number
  readonly longitude: number
  /** IANA zone, e.g. `America/Chicago`. */
  readonly timeZone: string
}

export interface GeoShape {
  /** `zip` as given by a client: a 5-digit ZIP or ZIP+4 (`60601-1234`); anything else is none. */
  readonly lookup: (zip: string) => Effect.Effect<Option.Option<ZipLocation>>
}

export class Geo extends Context.Tag("@waybill/core/Geo")<Geo, GeoShape>() {}
