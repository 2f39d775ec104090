/**
 * @module Quote
 *
 * `GET /api/v1/utilities/quote/?origin=&destination=&weight=&key=` (interface 4.6, 5). Without
 * a key: list rates; with a key: that account's negotiated rates (its rate card). Each
 * (service, vehicle) pair whose vehicle can carry the shipment gets its charge with the
 * breakdown and its delivery estimate and promise.
 *
 * A quote is not a second rating engine: each row is `Booking.plan` of the shipment a customer
 * would book (the query's ZIPs as pickup and delivery, `Pickupdate: now`, `Deliverdate: today`,
 * placeholder names and addresses that no rule prices). So a quote and a booking of the same
 * shipment at the same instant give the same charge and times by construction, not by keeping
 * two formulas in step.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { RateCard, ClientIp, Principal } from "../access/index.js"
import * as Booking from "./Booking.js"
import * as Catalog from "./Catalog.js"
import {
  type ServiceOption,
  type VehicleOption,
  WaybillConfig,
  type WaybillConfigShape,
  ValidationFailed
} from "../shared/index.js"
import { Geo, type ZipLocation, abbreviation, formatInZone, totalMiles } from "../geo/index.js"
import * as Sanitize from "./Sanitize.js"
import type { ChargeBreakdown } from "../shipments/index.js"

/** A validated quote request: what to price, before the ZIPs are located. */
export interface QuoteRequest {
  readonly origin: string
  readonly destination: string
  readonly weightLb: number
  readonly pieces: number
  /** Stops including pickup and delivery (2 unless `stops` asked for more). */
  readonly stops: number
  /** The services to price: the one asked for, or every configured one. */
  readonly services: ReadonlyArray<ServiceOption>
  /** The vehicles to consider: the one asked for, or every configured one. */
  readonly vehicles: ReadonlyArray<VehicleOption>
  /** Whether `vehicle=` named one (then a capacity problem is the caller's error). */
  readonly vehicleAsked: boolean
  readonly liftgate: boolean
  readonly signature: boolean
}

/** One priced option. Field names follow the create-shipments result (interface 2.3). */
export interface QuoteRow {
  readonly service_type: string
  readonly vehicle_type: string
  readonly estimated_delivery: string
  readonly guaranteed_delivery: string
  readonly destination_tz: string
  readonly estimated_charge: number
  readonly charge: ChargeBreakdown
}

/** A located ZIP as the answer shows it. */
export interface Place {
  readonly zip: string
  readonly city: string
  readonly state: string
}

/** `data` of a quote answer. */
export interface QuoteData {
  readonly origin: Place
  readonly destination: Place
  /** Road miles of the route (see `Route`). */
  readonly miles: number
  readonly weight: number
  readonly pieces: number
  readonly stops: number
  /** `negotiated` when the key's account has a rate card, else `list`. */
  readonly rates: "list" | "negotiated"
  readonly quotes: ReadonlyArray<QuoteRow>
}

/** Reads a query parameter: every value it was given. */
export type Query = (name: string) => ReadonlyArray<string>

/**
 * The 5-digit ZIPs the query names as `origin` and `destination` (well-formed single values
 * only), for one Geo lookup before {@link parseQuery}.
 */
export const zipsOf = (query: Query): ReadonlyArray<string> =>
  ["origin", "destination"].flatMap((name) => {
    const values = query(name)
    return values.length === 1 ? Either.match(Sanitize.zip(values[0]), { onLeft: () => [], onRight: (z) => [z] }) : []
  })

/**
 * Validates the query (pure). Left: every problem, each naming its parameter
 * (`origin must be a 5-digit ZIP code; weight is required`), so a caller fixes all in one go.
 * With `zips` (the locations of {@link zipsOf}), a well-formed ZIP missing from it is reported
 * too (`destination 99999 is not a known ZIP code`).
 */
export const parseQuery = (
  query: Query,
  config: WaybillConfigShape,
  zips?: ReadonlyMap<string, ZipLocation>
): Either.Either<QuoteRequest, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  /** The parameter's one value; a repeated parameter is a problem of its own (null). */
  const one = (name: string): string | undefined | null => {
    const values = query(name)
    if (values.length > 1) {
      problems.push(`${name} was given more than once`)
      return null
    }
    return values[0]
  }
  /** Validates a parameter (skipped when repeated, already reported). */
  const take = <A>(
    name: string,
    raw: string | undefined | null,
    validate: (raw: unknown) => Either.Either<A, string>
  ) =>
    raw === null
      ? undefined
      : Either.match(validate(raw), {
          onLeft: (m) => {
            problems.push(`${name} ${m}`)
            return undefined
          },
          onRight: (a): A | undefined => a
        })
  const given = (v: string | undefined | null): v is string => typeof v === "string" && v.trim() !== ""

  const located = (raw: unknown) =>
    Either.flatMap(Sanitize.zip(raw), (zip) =>
      zips === undefined || zips.has(zip) ? Either.right(zip) : Either.left(`${zip} is not a known ZIP code`)
    )
  const origin = take("origin", one("origin"), located)
  const destination = take("destination", one("destination"), located)
  const weightLb = take("weight", one("weight"), Sanitize.weight)
  const piecesRaw = one("pieces")
  const pieces = piecesRaw === undefined || piecesRaw === "" ? 1 : take("pieces", piecesRaw, Sanitize.pieces)

  const stopsRaw = one("stops")
  let stops: number | undefined = stopsRaw === null ? undefined : 2
  if (given(stopsRaw)) {
    const n = /^\d{1,4}$/.test(stopsRaw.trim()) ? Number(stopsRaw.trim()) : Number.NaN
    if (!(n >= 2 && n <= config.booking.maxStops)) {
      problems.push(`stops must be a whole number from 2 to ${config.booking.maxStops}`)
      stops = undefined
    } else stops = n
  }

  const serviceRaw = one("service")
  let services: ReadonlyArray<ServiceOption> | undefined = serviceRaw === null ? undefined : config.services
  if (given(serviceRaw)) {
    const found = Catalog.resolveService(config.services, serviceRaw)
    services = Option.isSome(found) ? [found.value] : undefined
    if (Option.isNone(found)) {
      problems.push(
        `service "${Sanitize.text(serviceRaw, 40)}" is not offered (one of: ${config.services.map((s) => s.code).join(", ")})`
      )
    }
  }
  const vehicleRaw = one("vehicle")
  let vehicles: ReadonlyArray<VehicleOption> | undefined = vehicleRaw === null ? undefined : config.vehicles
  if (given(vehicleRaw)) {
    const found = Catalog.resolveVehicle(config.vehicles, vehicleRaw)
    vehicles = Option.isSome(found) ? [found.value] : undefined
    if (Option.isNone(found)) {
      problems.push(
        `vehicle "${Sanitize.text(vehicleRaw, 40)}" is not offered (one of: ${config.vehicles.map((v) => v.code).join(", ")})`
      )
    }
  }
  const liftgate = take("liftgate", one("liftgate"), Sanitize.flag)
  const signature = take("signature", one("signature"), Sanitize.flag)

  if (
    problems.length > 0 ||
    origin === undefined ||
    destination === undefined ||
    weightLb === undefined ||
    pieces === undefined ||
    stops === undefined ||
    services === undefined ||
    vehicles === undefined ||
    liftgate === undefined ||
    signature === undefined
  ) {
    return Either.left(problems.length > 0 ? problems : ["the quote request is invalid"])
  }
  return Either.right({
    origin,
    destination,
    weightLb,
    pieces,
    stops,
    services,
    vehicles,
    vehicleAsked: given(vehicleRaw),
    liftgate,
    signature
  })
}

/**
 * The create-shipments input a quote row prices: the request's ZIPs as pickup and delivery
 * (intermediate stops, when `stops` > 2, at the origin ZIP, so they add the extra-stop charge
 * and the stop time but no distance), `now` / `today`, and placeholders where booking wants
 * names, addresses and a phone, none of which affect a charge or an estimate.
 */
export const shipmentInputFor = (
  request: QuoteRequest,
  service: ServiceOption,
  vehicle: VehicleOption,
  places: { readonly origin: ZipLocation; readonly destination: ZipLocation }
): Booking.ShipmentInput => {
  const endpoints = {
    PickupName: "Quote origin",
    PickupAddress: "Quote origin",
    PickupCity: places.origin.city || "Quote",
    PickupState: places.origin.state || "Quote",
    PickupZip: request.origin,
    DeliverName: "Quote destination",
    DeliverAddress: "Quote destination",
    DeliverCity: places.destination.city || "Quote",
    DeliverState: places.destination.state || "Quote",
    DeliverZip: request.destination
  }
  const route =
    request.stops <= 2
      ? {}
      : {
          multistop_route: Array.from({ length: request.stops }, (_, i) => ({
            stop_id: i + 1,
            name:
              i === 0 ? endpoints.PickupName : i === request.stops - 1 ? endpoints.DeliverName : `Quote stop ${i + 1}`,
            address:
              i === 0 ? endpoints.PickupAddress : i === request.stops - 1 ? endpoints.DeliverAddress : "Quote stop",
            zip: i === request.stops - 1 ? request.destination : request.origin
          }))
        }
  return {
    Contact: "Quote",
    Phone: "0000000000",
    ...endpoints,
    ...route,
    Pieces: request.pieces,
    Weight: request.weightLb,
    ServiceType: service.code,
    VehicleType: vehicle.code,
    Pickupdate: "now",
    Deliverdate: "today",
    LiftgateReq: request.liftgate ? "Y" : "N",
    SignatureReq: request.signature ? "Y" : "N"
  }
}

/** Everything {@link price} needs besides the request: the same context booking plans with. */
export type QuoteContext = Booking.PlanContext

/**
 * Prices every (service, vehicle) pair whose vehicle takes the weight and pieces (pure), in
 * configuration order, services first. Left: the request's ZIPs are unknown to `ctx.zips`, no
 * vehicle can carry the shipment, or (a defect guard) booking would refuse a generated shipment.
 */
export const price = (request: QuoteRequest, ctx: QuoteContext): Either.Either<QuoteData, ReadonlyArray<string>> => {
  const origin = ctx.zips.get(request.origin)
  const destination = ctx.zips.get(request.destination)
  const problems: Array<string> = []
  if (origin === undefined) problems.push(`origin ${request.origin} is not a known ZIP code`)
  if (destination === undefined) problems.push(`destination ${request.destination} is not a known ZIP code`)
  const carriers = request.vehicles.filter((v) => Catalog.canCarry(v, request.weightLb, request.pieces))
  if (carriers.length === 0) {
    if (request.vehicleAsked) {
      const only = request.vehicles[0]!
      problems.push(
        Option.getOrElse(Catalog.capacityProblem(only, request.weightLb, request.pieces), () => "no vehicle fits")
      )
    } else {
      const maxWeight = Math.max(...request.vehicles.map((v) => v.maxWeightLb))
      const maxPieces = Math.max(...request.vehicles.map((v) => v.maxPieces))
      if (request.weightLb > maxWeight)
        problems.push(`weight ${request.weightLb} lb exceeds every vehicle's limit (at most ${maxWeight} lb)`)
      if (request.pieces > maxPieces)
        problems.push(`pieces ${request.pieces} exceeds every vehicle's limit (at most ${maxPieces} pieces)`)
      if (request.weightLb <= maxWeight && request.pieces <= maxPieces)
        problems.push(`no single vehicle takes ${request.weightLb} lb in ${request.pieces} pieces`)
    }
  }
  if (problems.length > 0 || origin === undefined || destination === undefined) return Either.left(problems)

  const quotes: Array<QuoteRow> = []
  let miles = 0
  for (const service of request.services) {
    for (const vehicle of carriers) {
      const planned = Booking.plan(shipmentInputFor(request, service, vehicle, { origin, destination }), ctx)
      if (Either.isLeft(planned)) return Either.left(planned.left)
      const p = planned.right
      const tz = p.stops[p.stops.length - 1]!.timeZone
      miles = totalMiles(p.legs)
      quotes.push({
        service_type: p.service.code,
        vehicle_type: p.vehicle.code,
        estimated_delivery: formatInZone(p.estimatedDeliveryAt, tz),
        guaranteed_delivery: formatInZone(p.guaranteedDeliveryAt, tz),
        destination_tz: abbreviation(p.estimatedDeliveryAt, tz),
        estimated_charge: p.charge.total,
        charge: p.charge
      })
    }
  }
  const place = (z: ZipLocation): Place => ({ zip: z.zip, city: z.city, state: z.state })
  return Either.right({
    origin: place(origin),
    destination: place(destination),
    miles,
    weight: request.weightLb,
    pieces: request.pieces,
    stops: request.stops,
    rates: ctx.rateCard === null ? "list" : "negotiated",
    quotes
  })
}

/** What the HTTP layer hands over. */
export interface QuoteInput {
  /** The resolved client address (none when unknown); blocked addresses are refused first. */
  readonly client: Option.Option<ClientIp.Address>
  /** The caller's principal when a key was given (see `Admission.admit`), else none: list rates. */
  readonly principal: Option.Option<Principal>
  readonly query: Query
}

/**
 * The quote use case. Order: a blocked address; the key if one is given (invalid is a 401,
 * never list rates) with its allowlist and limit, else the address's limit; then the query.
 */
export const quote = Effect.fn("Quote.quote")(function* (input: QuoteInput) {
  const principal = input.principal
  const config = yield* WaybillConfig
  const geo = yield* Geo
  const zips = new Map<string, ZipLocation>()
  for (const zip of new Set(zipsOf(input.query))) {
    const location = yield* geo.lookup(zip)
    if (Option.isSome(location)) zips.set(zip, location.value)
  }
  const request = parseQuery(input.query, config, zips)
  if (Either.isLeft(request)) return yield* new ValidationFailed({ problems: request.left })
  const rateCard: RateCard | null = Option.match(principal, { onNone: () => null, onSome: (p) => p.account.rateCard })
  const nowMs = yield* Clock.currentTimeMillis
  const priced = price(request.right, { config, nowMs, zips, rateCard })
  if (Either.isLeft(priced)) return yield* new ValidationFailed({ problems: priced.left })
  return priced.right
})
