/*
 * Ambient types for the two untyped CommonJS data packages this adapter reads. Neither ships
 * declarations (nor is there an `@types/*` for them), so they are described here, narrowly:
 * only what `internal/lookup.ts` touches, and every row field as `unknown` so the adapter has
 * to validate what a third-party dataset hands it instead of trusting a hand-written shape.
 *
 * This file is a script (no top-level import/export), which is what makes these `declare
 * module` blocks ambient declarations rather than augmentations. Nothing here reaches the
 * published `.d.ts`: no public signature mentions these modules.
 */

declare module "zipcodes" {
  /** One dataset row, as found; the adapter checks each field before using it. */
  interface ZipcodesRow {
    readonly zip?: unknown
    readonly latitude?: unknown
    readonly longitude?: unknown
    readonly city?: unknown
    readonly state?: unknown
    readonly country?: unknown
  }

  interface Zipcodes {
    /** US rows keyed by 5-digit ZIP, merged with Canadian rows keyed by 3-letter FSA. */
    readonly codes: { readonly [key: string]: ZipcodesRow | undefined }
  }

  const zipcodes: Zipcodes
  export = zipcodes
}

declare module "tz-lookup" {
  /** IANA zone for a point; throws `RangeError` for NaN or out-of-range coordinates. */
  function tzlookup(latitude: number, longitude: number): string
  export = tzlookup
}
