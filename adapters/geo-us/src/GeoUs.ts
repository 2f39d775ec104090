/**
 * The `Geo` port backed by bundled, offline data: no network, no API key, no rate limit, so a
 * booking can resolve every stop's ZIP inline.
 */
import { Geo, type GeoShape, type ZipLocation } from "@waybill/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Internal from "./internal/lookup.js"

/**
 * Location and IANA zone of a US ZIP, for callers outside Effect (scripts, seeders, request
 * validation). Accepts `12345` or `12345-6789` with surrounding whitespace; anything else,
 * an unknown ZIP, a military APO/FPO/DPO ZIP, or a dataset row without usable coordinates is
 * `undefined`. Never throws.
 *
 * Results are memoized per 5-digit ZIP for the life of the process and shared by every caller
 * (and by `layer`), so the returned object is frozen; a ZIP+4 returns the very object its
 * 5-digit ZIP does, with `zip` set to the 5 digits.
 */
export const lookupZip = (zip: string): ZipLocation | undefined => Internal.lookupZip(zip)

/**
 * The `Geo` service itself, for composing into another layer or wrapping (e.g. with a cache
 * of overrides) without going through `Layer`.
 */
export const service: GeoShape = {
  lookup: (zip) => Effect.sync(() => Option.fromNullable(Internal.lookupZip(zip)))
}

/**
 * Provides `Geo` from the bundled `zipcodes` and `tz-lookup` data. It needs nothing and
 * cannot fail: the data loads with the module, and lookups are pure apart from the memo.
 */
export const layer: Layer.Layer<Geo> = Layer.succeed(Geo, service)
