/**
 * @module Catalog
 *
 * Maps the free-text `ServiceType` and `VehicleType` a client sends onto the configured
 * catalog, and checks a shipment against a vehicle's capacity. Clients spell the same thing
 * many ways ("2 Hour", "2-hour", "2HR"), so names are compared after {@link normalizeName};
 * the catalog itself stays data in `WaybillConfig`, never a hard-coded enum.
 */
import * as Option from "effect/Option"
import type { ServiceOption, VehicleOption } from "../shared/index.js"

/**
 * The comparison key of a catalog name: lowercased with whitespace, `-`, `_` and `.` removed,
 * so `"Cargo-Van"`, `"cargo van"` and `"CARGO_VAN"` are the same name. Used on both sides of
 * every lookup, so an alias written with spaces in the config still matches a client's
 * spelling without them.
 */
export const normalizeName = (s: string): string => s.toLowerCase().replace(/[\s\-_.]+/g, "")

/**
 * Finds the catalog entry a client's name refers to. A match on an entry's `code` wins over a
 * match on another entry's alias, so an alias added to one option can never shadow another
 * option's canonical code; among aliases, the first entry in configuration order wins. A name
 * that normalizes to nothing matches nothing.
 */
const resolve = <A extends { readonly code: string; readonly aliases: ReadonlyArray<string> }>(
  options: ReadonlyArray<A>,
  input: string
): Option.Option<A> => {
  const key = normalizeName(input)
  if (key === "") return Option.none()
  const byCode = options.find((o) => normalizeName(o.code) === key)
  if (byCode !== undefined) return Option.some(byCode)
  return Option.fromNullable(options.find((o) => o.aliases.some((a) => normalizeName(a) === key)))
}

/**
 * The service a client's `ServiceType` names, by code or alias, case-, space-, `-`, `_` and
 * `.`-insensitively. `none` means the name is not offered; the caller reports it.
 */
export const resolveService = (services: ReadonlyArray<ServiceOption>, input: string): Option.Option<ServiceOption> =>
  resolve(services, input)

/**
 * The vehicle a client's `VehicleType` names, by code or alias, with the same matching rules
 * as {@link resolveService}.
 */
export const resolveVehicle = (vehicles: ReadonlyArray<VehicleOption>, input: string): Option.Option<VehicleOption> =>
  resolve(vehicles, input)

/**
 * Why a shipment does not fit the vehicle, naming the limit so a client can pick a bigger one
 * (`Weight 150 lb exceeds the car limit of 100 lb`). When both limits are exceeded both are
 * named, joined by `"; "`, so the client fixes everything in one round trip. Limits are
 * inclusive: exactly `maxWeightLb` fits. A non-number (NaN) never fits.
 */
export const capacityProblem = (vehicle: VehicleOption, weightLb: number, pieces: number): Option.Option<string> => {
  const problems: Array<string> = []
  if (!(weightLb <= vehicle.maxWeightLb)) {
    problems.push(`Weight ${weightLb} lb exceeds the ${vehicle.code} limit of ${vehicle.maxWeightLb} lb`)
  }
  if (!(pieces <= vehicle.maxPieces)) {
    problems.push(`Pieces ${pieces} exceeds the ${vehicle.code} limit of ${vehicle.maxPieces} pieces`)
  }
  return problems.length === 0 ? Option.none() : Option.some(problems.join("; "))
}

/**
 * Whether the vehicle takes this weight and piece count; the boolean twin of
 * {@link capacityProblem}, for choosing among vehicles rather than reporting.
 */
export const canCarry = (vehicle: VehicleOption, weightLb: number, pieces: number): boolean =>
  Option.isNone(capacityProblem(vehicle, weightLb, pieces))
