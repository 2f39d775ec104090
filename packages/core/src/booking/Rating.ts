/**
 * @module Rating
 *
 * The charge for a shipment, from the vehicle tariff, the service multiplier, the route and the
 * account's negotiated rate card. Pure and deterministic so a quote and the booked charge
 * always agree.
 *
 * Every component is computed in integer cents (each rounded half up on its own) and the total
 * is their exact sum, so the breakdown a customer sees always adds up to the total to the cent;
 * values are returned in US dollars as `ChargeBreakdown` specifies.
 */
import type { RateCard } from "../access/index.js"
import type { Fees, ServiceOption, VehicleOption, VehicleRates } from "../shared/index.js"
import type { ChargeBreakdown } from "../shipments/index.js"

/** Everything a charge depends on. Inputs are expected to be finite and non-negative. */
export interface RateInput {
  readonly vehicle: VehicleOption
  readonly service: ServiceOption
  /** Road miles of the whole route (see `Route.totalMiles`). */
  readonly miles: number
  /** The shipment's total weight. */
  readonly weightLb: number
  /** Stops including pickup and final delivery (>= 2); each one beyond two is an extra stop. */
  readonly stops: number
  readonly liftgate: boolean
  readonly signature: boolean
  readonly fees: Fees
  /** The account's negotiated rates, or `null` for list price. */
  readonly rateCard: RateCard | null
}

/**
 * Rounds half up to an integer. Going through 12 significant digits first drops binary noise,
 * so an amount that is a half cent in decimal (`1.005 * 100 = 100.49999999999999`) still
 * rounds up as a person would expect.
 */
const roundHalfUp = (x: number): number => {
  // Below 1e9 twelve significant digits keep three decimals, so the detour can only change the
  // result when the fraction is within 0.001 of one half; elsewhere Math.round alone agrees.
  if (x !== 0 && Math.abs(x) < 1e9 && Math.abs(x - Math.floor(x) - 0.5) > 0.001) return Math.round(x)
  return Math.round(Number(x.toPrecision(12)))
}

/** Dollars to whole cents, half up. */
const toCents = (dollars: number): number => roundHalfUp(dollars * 100)

const rateKeys: ReadonlyArray<keyof VehicleRates> = [
  "base",
  "includedMiles",
  "perMile",
  "includedWeightLb",
  "perLb",
  "perExtraStop",
  "minimum"
]

/**
 * The tariff that applies to this vehicle for this account: the vehicle's list rates with each
 * field the rate card overrides for that vehicle code replaced. Overrides are partial so a
 * card can, say, lower only `perMile`; a field that is not a finite number is ignored rather
 * than poisoning the charge with NaN.
 */
export const effectiveRates = (vehicle: VehicleOption, rateCard: RateCard | null): VehicleRates => {
  const vehicles = rateCard?.vehicles
  const override = vehicles !== undefined && Object.hasOwn(vehicles, vehicle.code) ? vehicles[vehicle.code] : undefined
  if (override === undefined) return vehicle.rates
  const rates: Record<keyof VehicleRates, number> = { ...vehicle.rates }
  for (const key of rateKeys) {
    const value = override[key]
    if (typeof value === "number" && Number.isFinite(value)) rates[key] = value
  }
  return rates
}

/**
 * The charge for one shipment.
 *
 * - transport = (base + perMile x miles beyond includedMiles) x service multiplier
 * - weight = perLb x pounds beyond includedWeightLb x multiplier
 * - stops = perExtraStop x stops beyond 2 x multiplier
 * - fuel = fuelSurchargePercent of (transport + weight + stops)
 * - extras = the liftgate and signature fees when requested
 * - below the tariff's minimum, transport is raised so the subtotal is exactly the minimum
 * - discount = the card's `discountPercent` (clamped to 0..100) of the subtotal, reduced as
 *   needed so the total never goes below the card's `floor` (default: the tariff minimum).
 *   The floor only limits the discount: it never raises a price the card's tariff produces
 *   (a card's overridden tariff keeps its own `minimum`, which is the floor for overrides).
 */
export const rate = (input: RateInput): ChargeBreakdown => {
  const r = effectiveRates(input.vehicle, input.rateCard)
  const multiplier = input.service.multiplier

  let transport = toCents((r.base + r.perMile * Math.max(0, input.miles - r.includedMiles)) * multiplier)
  const weight = toCents(r.perLb * Math.max(0, input.weightLb - r.includedWeightLb) * multiplier)
  const stops = toCents(r.perExtraStop * Math.max(0, input.stops - 2) * multiplier)
  const fuel = roundHalfUp(((transport + weight + stops) * input.fees.fuelSurchargePercent) / 100)
  const extras =
    (input.liftgate ? toCents(input.fees.liftgate) : 0) + (input.signature ? toCents(input.fees.signature) : 0)

  const card = input.rateCard
  const tariffMinimum = Math.max(0, toCents(r.minimum))
  const cardFloor = card?.floor
  const floor =
    typeof cardFloor === "number" && Number.isFinite(cardFloor) ? Math.max(0, toCents(cardFloor)) : tariffMinimum
  const minimum = tariffMinimum
  const sum = transport + weight + stops + fuel + extras
  if (sum < minimum) transport += minimum - sum
  const subtotal = transport + weight + stops + fuel + extras

  const cardPercent = card?.discountPercent
  const percent =
    typeof cardPercent === "number" && Number.isFinite(cardPercent) ? Math.min(100, Math.max(0, cardPercent)) : 0
  const discount = Math.min(roundHalfUp((subtotal * percent) / 100), Math.max(0, subtotal - floor))

  return {
    transport: transport / 100,
    weight: weight / 100,
    stops: stops / 100,
    fuel: fuel / 100,
    extras: extras / 100,
    discount: discount / 100,
    total: (subtotal - discount) / 100
  }
}

/** The list price: {@link rate} with no rate card, named so call sites read as intended. */
export const listRate = (input: Omit<RateInput, "rateCard">): ChargeBreakdown => rate({ ...input, rateCard: null })
