/**
 * @module Booking
 *
 * Create shipments (interface 2.2, 2.3, 4.1, 7.1). The request is decoded leniently (unknown
 * fields ignored, strings or numbers accepted where the interface allows both), each shipment
 * is validated and planned by the pure {@link plan} (sanitizing, catalog, route, dates, ETA,
 * rating), then every valid shipment is stored atomically with its `shipment.booked` event.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as MetricLabel from "effect/MetricLabel"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { Principal, RateCard, AccountStore } from "../access/index.js"
import * as Catalog from "./Catalog.js"
import type { BusinessHours, ServiceOption, VehicleOption, WaybillConfigShape, KeyRing } from "../shared/index.js"
import { Metrics, Tracing } from "../shared/index.js"
import {
  JsonInput,
  WaybillConfig,
  decimalNumber,
  decimalNumberFrom,
  Entropy,
  type EntropyShape,
  BadRequest,
  type DuplicateKey,
  StorageError,
  ValidationFailed,
  Ulid
} from "../shared/index.js"
import type { IpBlocklist as IpBlocks } from "../access/index.js"
import { parseDateInput } from "./DateInput.js"
import { estimate } from "./Eta.js"
import { type DomainEvent, ShipmentStore, type ShipmentStoreShape } from "../shipments/index.js"
import {
  Geo,
  type GeoShape,
  type ZipLocation,
  abbreviation,
  formatInZone,
  legsBetween,
  totalMiles
} from "../geo/index.js"
import { rate } from "./Rating.js"
import * as Sanitize from "./Sanitize.js"
import type { ShipmentRecord, StopRecord } from "../shipments/index.js"

// ---------------------------------------------------------------------------------------------
// Wire schemas, named exactly as the interface names them.

const Scalar = Schema.Union(Schema.String, Schema.Number)
const OptScalar = Schema.optional(Schema.NullOr(Scalar))

/** Element of `multistop_route` (interface 2.2, stop object). */
export const StopInput = Schema.Struct({
  stop_id: OptScalar,
  name: OptScalar,
  address: OptScalar,
  city: OptScalar,
  state: OptScalar,
  zip: OptScalar,
  contact_name: OptScalar,
  phone_no: OptScalar,
  stop_note: OptScalar,
  update_address_book: OptScalar,
  location_idx_key: OptScalar
})
export type StopInput = typeof StopInput.Type

/** Element of `piece_details` (interface 2.2, piece object). */
export const PieceInput = Schema.Struct({
  piece_no: OptScalar,
  piece_weight: OptScalar,
  length: OptScalar,
  width: OptScalar,
  height: OptScalar,
  pc: OptScalar,
  id: OptScalar,
  description: OptScalar
})
export type PieceInput = typeof PieceInput.Type

/** One shipment of `data.shipments` (interface 2.2). Required-ness is checked by {@link plan}, so each problem gets its own message. */
export const ShipmentInput = Schema.Struct({
  Contact: OptScalar,
  Phone: OptScalar,
  PickupName: OptScalar,
  PickupAddress: OptScalar,
  PickupCity: OptScalar,
  PickupState: OptScalar,
  PickupZip: OptScalar,
  DeliverName: OptScalar,
  DeliverAddress: OptScalar,
  DeliverCity: OptScalar,
  DeliverState: OptScalar,
  DeliverZip: OptScalar,
  Pieces: OptScalar,
  Weight: OptScalar,
  ServiceType: OptScalar,
  VehicleType: OptScalar,
  Pickupdate: OptScalar,
  Deliverdate: OptScalar,
  Email: OptScalar,
  BillingReference: OptScalar,
  SignatureReq: OptScalar,
  LiftgateReq: OptScalar,
  PickupSpecinst: OptScalar,
  DeliverSpecinst: OptScalar,
  multistop_route: Schema.optional(Schema.NullOr(Schema.Array(StopInput))),
  piece_details: Schema.optional(Schema.NullOr(Schema.Array(PieceInput)))
})
export type ShipmentInput = typeof ShipmentInput.Type

/** The request body (interface 2.2). Shipments are decoded one by one so one bad shipment does not hide the others. */
export const CreateShipmentsRequest = Schema.Struct({
  data: Schema.Struct({
    token: Schema.optional(Schema.Unknown),
    key: Schema.optional(Schema.Unknown),
    jsonstrn: OptScalar,
    shipments: Schema.Array(Schema.Unknown)
  })
})

/** One element of `data.shipments` in the response (interface 2.3). */
export const ShipmentResult = Schema.Struct({
  order: Schema.Int,
  result: Schema.Literal("success", "error"),
  track_no: Schema.String,
  billing_reference: Schema.String,
  service_type: Schema.String,
  vehicle_type: Schema.String,
  estimated_delivery: Schema.String,
  guaranteed_delivery: Schema.String,
  destination_tz: Schema.String,
  estimated_charge: Schema.Number,
  errors: Schema.Array(Schema.String)
})
export type ShipmentResult = typeof ShipmentResult.Type

/** `data` of a create-shipments response (interface 2.3). */
export const CreateShipmentsData = Schema.Struct({
  jsonstrn: Schema.String,
  shipments_with_errors: Schema.Int,
  shipments: Schema.Array(ShipmentResult)
})
export type CreateShipmentsData = typeof CreateShipmentsData.Type

// ---------------------------------------------------------------------------------------------
// Planning: pure.

/** Everything {@link plan} needs besides the shipment: no I/O, so it is tested exhaustively. */
export interface PlanContext {
  readonly config: WaybillConfigShape
  readonly nowMs: number
  /** Locations of the ZIPs the request names, keyed by 5-digit ZIP. Missing = unknown ZIP. */
  readonly zips: ReadonlyMap<string, ZipLocation>
  readonly rateCard: RateCard | null
}

/**
 * A validated shipment, ready to be numbered and stored: the stored record less what storage
 * time decides (number, owner, state, timestamps), with the catalog entries themselves.
 */
export interface ShipmentPlan
  extends Omit<
    ShipmentRecord,
    | "trackNo"
    | "customerNo"
    | "livemode"
    | "state"
    | "version"
    | "driverId"
    | "serviceType"
    | "vehicleType"
    | "jsonstrn"
    | "createdAt"
    | "updatedAt"
    | "stops"
  > {
  readonly service: ServiceOption
  readonly vehicle: VehicleOption
  /** The stops as they are stored: pending, with their ETAs. */
  readonly stops: ReadonlyArray<StopRecord>
}

interface StopDraft {
  readonly externalId: number | null
  readonly name: string
  readonly address: string
  readonly city: string
  readonly state: string
  readonly zip: string
  readonly contactName: string
  readonly phone: string
  readonly note: string
  readonly location: ZipLocation
}

const present = (v: unknown): boolean => v !== undefined && v !== null && String(v).trim() !== ""

const sameAddress = (a: string, b: string) =>
  a
    .toLowerCase()
    .replace(/[\s.,#]+/g, " ")
    .trim() ===
  b
    .toLowerCase()
    .replace(/[\s.,#]+/g, " ")
    .trim()

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** Why a `BillingReference` with a comma is refused (the document lookup's separator). */
export const BILLING_REFERENCE_COMMA =
  "BillingReference must not contain a comma (document lookups read a comma as a separator between references)"

/** The 5-digit ZIPs a shipment names (valid-looking ones only), for one batched Geo lookup. */
export const zipsOf = (input: ShipmentInput): ReadonlyArray<string> => {
  const raw = [input.PickupZip, input.DeliverZip, ...(input.multistop_route ?? []).map((s) => s.zip)]
  return raw.flatMap((z) =>
    Either.getOrElse(
      Either.map(Sanitize.zip(z), (v) => [v]),
      () => []
    )
  )
}

/** Whether the shipment is routed by `multistop_route` (3 or more stops) rather than Pickup and Deliver fields. */
export const isMultiStop = (input: ShipmentInput): boolean => (input.multistop_route?.length ?? 0) >= 3

/**
 * Validates and plans one shipment. Left: every problem found, each naming its field, so a
 * client can fix a request in one round trip.
 */
export const plan = (input: ShipmentInput, ctx: PlanContext): Either.Either<ShipmentPlan, ReadonlyArray<string>> => {
  const { config } = ctx
  const t = config.truncation
  const problems: Array<string> = []
  const take = <A>(field: string, r: Either.Either<A, string>): A | undefined =>
    Either.match(r, {
      onLeft: (m) => {
        problems.push(`${field} ${m}`)
        return undefined
      },
      onRight: (a) => a
    })

  const contact = take("Contact", Sanitize.requiredText(input.Contact, t.contact))
  const phone = take("Phone", Sanitize.phone(input.Phone))
  const email = Sanitize.text(input.Email, 254)
  if (email !== "" && !EMAIL.test(email)) problems.push("Email is not a valid e-mail address")
  // Document lookups always read a comma as a separator (interface 2.4), so a reference holding
  // one could be stored but never found again: refused here rather than silently unfindable.
  if (typeof input.BillingReference === "string" && input.BillingReference.includes(",")) {
    problems.push(BILLING_REFERENCE_COMMA)
  }
  const pieces = take("Pieces", Sanitize.pieces(input.Pieces))
  const weightLb = take("Weight", Sanitize.weight(input.Weight))
  const signatureRequired = take("SignatureReq", Sanitize.flag(input.SignatureReq))
  const liftgateRequired = take("LiftgateReq", Sanitize.flag(input.LiftgateReq))

  const service = present(input.ServiceType)
    ? Option.getOrUndefined(Catalog.resolveService(config.services, String(input.ServiceType)))
    : undefined
  if (!present(input.ServiceType)) problems.push("ServiceType is required")
  else if (service === undefined) {
    problems.push(
      `ServiceType "${Sanitize.text(input.ServiceType, 40)}" is not offered (one of: ${config.services.map((s) => s.code).join(", ")})`
    )
  }
  const vehicle = present(input.VehicleType)
    ? Option.getOrUndefined(Catalog.resolveVehicle(config.vehicles, String(input.VehicleType)))
    : undefined
  if (!present(input.VehicleType)) problems.push("VehicleType is required")
  else if (vehicle === undefined) {
    problems.push(
      `VehicleType "${Sanitize.text(input.VehicleType, 40)}" is not offered (one of: ${config.vehicles.map((v) => v.code).join(", ")})`
    )
  }
  if (vehicle !== undefined && weightLb !== undefined && pieces !== undefined) {
    Option.map(Catalog.capacityProblem(vehicle, weightLb, pieces), (m) => problems.push(m))
  }

  const located = (field: string, zipInput: unknown): ZipLocation | undefined => {
    const zip = take(field, Sanitize.zip(zipInput))
    if (zip === undefined) return undefined
    const location = ctx.zips.get(zip)
    if (location === undefined) problems.push(`${field} ${zip} is not a known ZIP code`)
    return location
  }

  // Stops: Pickup/Deliver fields, or multistop_route with 3 or more stops.
  let stops: Array<StopDraft> | undefined
  const route = input.multistop_route ?? []
  if (route.length > config.booking.maxStops) {
    problems.push(`multistop_route has ${route.length} stops; at most ${config.booking.maxStops} are allowed`)
  } else if (isMultiStop(input)) {
    const drafts: Array<StopDraft> = []
    const seen = new Set<number>()
    route.forEach((s, i) => {
      const at = `multistop_route[${i}]`
      const idText = s.stop_id === undefined || s.stop_id === null ? "" : String(s.stop_id).trim()
      const stopId = /^-?\d{1,9}$/.test(idText) ? Number(idText) : undefined
      if (stopId === undefined) problems.push(`${at}.stop_id must be an integer`)
      else if (seen.has(stopId)) problems.push(`${at}.stop_id ${stopId} appears more than once`)
      else seen.add(stopId)
      const name = take(`${at}.name`, Sanitize.requiredText(s.name, t.name))
      const address = take(`${at}.address`, Sanitize.requiredText(s.address, t.address))
      const location = located(`${at}.zip`, s.zip)
      if (stopId !== undefined && name !== undefined && address !== undefined && location !== undefined) {
        const stopPhone = Sanitize.text(s.phone_no, t.phone)
        drafts.push({
          externalId: stopId,
          name,
          address,
          city: Sanitize.text(s.city, t.city) || location.city,
          state: Sanitize.text(s.state, 30) || location.state,
          zip: location.zip,
          contactName: Sanitize.text(s.contact_name, t.contact),
          phone: stopPhone,
          note: Sanitize.text(s.stop_note, t.instructions),
          location
        })
      }
    })
    if (drafts.length === route.length) {
      drafts.sort((a, b) => a.externalId! - b.externalId!)
      const first = drafts[0]!
      const last = drafts[drafts.length - 1]!
      const mustMatch = (
        field: string,
        value: unknown,
        expected: string,
        which: string,
        cmp: (a: string, b: string) => boolean
      ) => {
        if (present(value) && !cmp(Sanitize.text(value, 200), expected))
          problems.push(`${field} does not match the ${which} stop of multistop_route`)
      }
      const zipEq = (a: string, b: string) => Either.getOrElse(Sanitize.zip(a), () => a) === b
      mustMatch("PickupZip", input.PickupZip, first.zip, "first", zipEq)
      mustMatch("PickupAddress", input.PickupAddress, first.address, "first", sameAddress)
      mustMatch("DeliverZip", input.DeliverZip, last.zip, "last", zipEq)
      mustMatch("DeliverAddress", input.DeliverAddress, last.address, "last", sameAddress)
      stops = drafts
    }
  } else {
    const endpoint = (prefix: "Pickup" | "Deliver"): StopDraft | undefined => {
      const name = take(`${prefix}Name`, Sanitize.requiredText(input[`${prefix}Name`], t.name))
      const address = take(`${prefix}Address`, Sanitize.requiredText(input[`${prefix}Address`], t.address))
      const city = take(`${prefix}City`, Sanitize.requiredText(input[`${prefix}City`], t.city))
      const state = take(`${prefix}State`, Sanitize.requiredText(input[`${prefix}State`], 30))
      const location = located(`${prefix}Zip`, input[`${prefix}Zip`])
      if (
        name === undefined ||
        address === undefined ||
        city === undefined ||
        state === undefined ||
        location === undefined
      )
        return undefined
      return {
        externalId: null,
        name,
        address,
        city,
        state,
        zip: location.zip,
        contactName: prefix === "Pickup" ? (contact ?? "") : "",
        phone: prefix === "Pickup" ? (phone ?? "") : "",
        note: Sanitize.text(input[`${prefix}Specinst`], t.instructions),
        location
      }
    }
    const pickup = endpoint("Pickup")
    const deliver = endpoint("Deliver")
    if (pickup !== undefined && deliver !== undefined) stops = [pickup, deliver]
  }

  // Dates are read in the zone of the stop they belong to.
  const hours: BusinessHours = config.businessHours
  let readyAt: number | undefined
  let requestedDeliveryAt: number | undefined
  if (stops !== undefined) {
    const pickupTz = stops[0]!.location.timeZone
    const deliverTz = stops[stops.length - 1]!.location.timeZone
    const pickupAt = present(input.Pickupdate)
      ? take(
          "Pickupdate",
          parseDateInput(input.Pickupdate, { nowMs: ctx.nowMs, timeZone: pickupTz, role: "pickup", hours })
        )
      : (problems.push("Pickupdate is required"), undefined)
    const deliverAt = present(input.Deliverdate)
      ? take(
          "Deliverdate",
          parseDateInput(input.Deliverdate, { nowMs: ctx.nowMs, timeZone: deliverTz, role: "deliver", hours })
        )
      : (problems.push("Deliverdate is required"), undefined)
    if (pickupAt !== undefined && pickupAt < ctx.nowMs - config.booking.pastPickupToleranceMinutes * 60_000) {
      problems.push(`Pickupdate is more than ${config.booking.pastPickupToleranceMinutes} minutes in the past`)
    }
    if (pickupAt !== undefined && deliverAt !== undefined && deliverAt < pickupAt)
      problems.push("Deliverdate is before Pickupdate")
    readyAt = pickupAt === undefined ? undefined : Math.max(pickupAt, ctx.nowMs)
    requestedDeliveryAt = deliverAt
  } else {
    if (!present(input.Pickupdate)) problems.push("Pickupdate is required")
    if (!present(input.Deliverdate)) problems.push("Deliverdate is required")
  }

  const pieceInputs = input.piece_details ?? []
  if (pieceInputs.length > config.booking.maxPieceDetails) {
    problems.push(`piece_details has ${pieceInputs.length} rows; at most ${config.booking.maxPieceDetails} are allowed`)
  }

  if (
    problems.length > 0 ||
    stops === undefined ||
    contact === undefined ||
    phone === undefined ||
    pieces === undefined ||
    weightLb === undefined ||
    service === undefined ||
    vehicle === undefined ||
    readyAt === undefined ||
    requestedDeliveryAt === undefined ||
    signatureRequired === undefined ||
    liftgateRequired === undefined
  ) {
    return Either.left(problems.length > 0 ? problems : ["shipment is invalid"])
  }

  const legs = legsBetween(
    stops.map((s) => s.location),
    config.routing.circuity
  )
  const eta = estimate({
    readyAt,
    service,
    vehicle,
    stopTimeZones: stops.map((s) => s.location.timeZone),
    legMiles: legs.map((l) => l.miles),
    requestedDeliveryAt,
    routing: config.routing,
    hours
  })
  const charge = rate({
    vehicle,
    service,
    miles: totalMiles(legs),
    weightLb,
    stops: stops.length,
    liftgate: liftgateRequired,
    signature: signatureRequired,
    fees: config.fees,
    rateCard: ctx.rateCard
  })
  const cell = (v: unknown) => Sanitize.text(v, 50)
  return Either.right({
    contact,
    phone,
    email,
    billingReference: Sanitize.text(input.BillingReference, t.billingReference),
    service,
    vehicle,
    pieces,
    weightLb,
    signatureRequired,
    liftgateRequired,
    pickupInstructions: Sanitize.text(input.PickupSpecinst, t.instructions),
    deliverInstructions: Sanitize.text(input.DeliverSpecinst, t.instructions),
    readyAt,
    requestedDeliveryAt,
    estimatedDeliveryAt: eta.estimatedDeliveryAt,
    guaranteedDeliveryAt: eta.guaranteedDeliveryAt,
    charge,
    stops: stops.map((s, i) => ({
      seq: i,
      role: i === 0 ? "pickup" : i === stops!.length - 1 ? "delivery" : "intermediate",
      externalId: s.externalId,
      name: s.name,
      address: s.address,
      city: s.city,
      state: s.state,
      zip: s.zip,
      contactName: s.contactName,
      phone: s.phone,
      note: s.note,
      latitude: s.location.latitude,
      longitude: s.location.longitude,
      timeZone: s.location.timeZone,
      status: "pending",
      etaAt: eta.stopEtas[i] ?? eta.estimatedDeliveryAt
    })),
    legs,
    pieceDetails: pieceInputs.map((p, seq) => ({
      seq,
      pieceNo: cell(p.piece_no),
      weight: cell(p.piece_weight),
      length: cell(p.length),
      width: cell(p.width),
      height: cell(p.height),
      pc: cell(p.pc),
      sourceId: cell(p.id),
      description: Sanitize.text(p.description, t.instructions)
    }))
  })
}

// ---------------------------------------------------------------------------------------------
// The use case.

/** 8 digits, first one non-zero, from the CSPRNG: unguessable and not sequential. */
export const trackingNumber: Effect.Effect<string, never, Entropy> = decimalNumber(8)

/** The response element for a stored shipment. */
export const successResult = (order: number, s: ShipmentRecord): ShipmentResult => {
  const tz = s.stops[s.stops.length - 1]!.timeZone
  return {
    order,
    result: "success",
    track_no: s.trackNo,
    billing_reference: s.billingReference,
    service_type: s.serviceType,
    vehicle_type: s.vehicleType,
    estimated_delivery: formatInZone(s.estimatedDeliveryAt, tz),
    guaranteed_delivery: formatInZone(s.guaranteedDeliveryAt, tz),
    destination_tz: abbreviation(s.estimatedDeliveryAt, tz),
    estimated_charge: s.charge.total,
    errors: []
  }
}

const errorResult = (
  order: number,
  input: ShipmentInput | undefined,
  errors: ReadonlyArray<string>
): ShipmentResult => ({
  order,
  result: "error",
  track_no: "",
  billing_reference: Sanitize.text(input?.BillingReference, 23),
  service_type: Sanitize.text(input?.ServiceType, 40),
  vehicle_type: Sanitize.text(input?.VehicleType, 40),
  estimated_delivery: "",
  guaranteed_delivery: "",
  destination_tz: "",
  estimated_charge: 0,
  errors
})

/** Field-named messages for a shipment whose shape is wrong (one message per field). */
const structuralProblems = (error: ParseResult.ParseError): ReadonlyArray<string> => {
  const messages = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const path = issue.path
      .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join("")
    if (path === "") return "the shipment must be an object"
    if (issue._tag === "Missing") return `${path} is required`
    const last = issue.path[issue.path.length - 1]
    if (last === "multistop_route" || last === "piece_details") return `${path} must be an array of objects`
    if (typeof last === "number") return `${path} must be an object`
    return `${path} must be a string or a number`
  })
  return [...new Set(messages)]
}

/** The stored record of a planned shipment, numbered and owned. */
const recordOf = (
  p: ShipmentPlan,
  principal: Principal,
  trackNo: string,
  jsonstrn: string,
  now: number
): ShipmentRecord => ({
  trackNo,
  customerNo: principal.account.customerNo,
  livemode: principal.key.mode === "live",
  state: "booked",
  version: 1,
  driverId: null,
  contact: p.contact,
  phone: p.phone,
  email: p.email,
  billingReference: p.billingReference,
  serviceType: p.service.code,
  vehicleType: p.vehicle.code,
  pieces: p.pieces,
  weightLb: p.weightLb,
  signatureRequired: p.signatureRequired,
  liftgateRequired: p.liftgateRequired,
  pickupInstructions: p.pickupInstructions,
  deliverInstructions: p.deliverInstructions,
  readyAt: p.readyAt,
  requestedDeliveryAt: p.requestedDeliveryAt,
  estimatedDeliveryAt: p.estimatedDeliveryAt,
  guaranteedDeliveryAt: p.guaranteedDeliveryAt,
  charge: p.charge,
  jsonstrn,
  createdAt: now,
  updatedAt: now,
  stops: p.stops,
  legs: p.legs,
  pieceDetails: p.pieceDetails
})

/** The `shipment.booked` event of a stored record, with its response element's dates. */
const bookedEvent = (id: string, record: ShipmentRecord, summary: ShipmentResult): DomainEvent => ({
  id,
  sequence: 1,
  type: "shipment.booked",
  customerNo: record.customerNo,
  trackNo: record.trackNo,
  livemode: record.livemode,
  occurredAt: record.createdAt,
  data: {
    track_no: record.trackNo,
    state: "booked",
    service_type: record.serviceType,
    vehicle_type: record.vehicleType,
    estimated_delivery: summary.estimated_delivery,
    guaranteed_delivery: summary.guaranteed_delivery,
    destination_tz: summary.destination_tz,
    estimated_charge: record.charge.total,
    stops: record.stops.length,
    pieces: record.pieces,
    weight: record.weightLb
  }
})

/** Random bytes one booking draws: 4 for the tracking number, 10 for its event's ULID. */
const BOOKING_RANDOM_BYTES = 14

/** What one booking of a planned shipment works with. */
interface Booking {
  readonly store: ShipmentStoreShape
  readonly entropy: EntropyShape
  readonly plan: ShipmentPlan
  readonly principal: Principal
  readonly jsonstrn: string
  /** The shipment's place in the request (its answer's `order`). */
  readonly order: number
  readonly now: number
}

/** One attempt: a fresh tracking number and event id from one draw, then the store's `book`. */
const attemptWith = (
  b: Booking
): Effect.Effect<{ readonly record: ShipmentRecord; readonly summary: ShipmentResult }, DuplicateKey | StorageError> =>
  Effect.flatMap(b.entropy.bytes(BOOKING_RANDOM_BYTES), (random) => {
    const number = decimalNumberFrom(8, random)
    // A draw outside the uniform range (about one in seventy) is drawn again.
    if (number === undefined) return attemptWith(b)
    const record = recordOf(b.plan, b.principal, number, b.jsonstrn, b.now)
    const summary = successResult(b.order, record)
    const event = bookedEvent(Ulid.eventIdOf(b.now, random.subarray(4)), record, summary)
    return Effect.as(b.store.book(record, event), { record, summary })
  })

/**
 * Stores one planned shipment and its `shipment.booked` event as one unit of work, drawing
 * another tracking number for each taken one (up to 10 more times); returns the record and its
 * response element. Untraced: this and {@link createShipments} are the benchmarked hot path,
 * where a span costs more than a query.
 */
export const book = (plan: ShipmentPlan, principal: Principal, jsonstrn: string, order = 1) =>
  Effect.flatMap(Effect.context<ShipmentStore | Entropy>(), (context) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      bookWith({
        store: Context.get(context, ShipmentStore),
        entropy: Context.get(context, Entropy),
        plan,
        principal,
        jsonstrn,
        order,
        now
      })
    )
  )

const bookWith = (b: Booking) => {
  const attempt = attemptWith(b)
  // Only a collision enters the retry schedule: building it on every booking cost as many
  // runtime steps as the booking.
  return Effect.catchTag(attempt, "DuplicateKey", () =>
    attempt.pipe(
      Effect.retry({ times: 9, while: (e) => e._tag === "DuplicateKey" }),
      Effect.catchTag("DuplicateKey", (cause) =>
        Effect.fail(new StorageError({ operation: "Booking.book: no free tracking number", cause }))
      )
    )
  )
}

export interface CreateShipmentsInput {
  /** The authenticated and admitted caller (see `Admission.admit`). */
  readonly principal: Principal
  /** The parsed body: `{"data": {"shipments": [...]}}`. */
  readonly body: unknown
}

/** The decoders, made once (synchronous: no effect steps for a pure decode). */
const decodeRequest = Schema.decodeUnknownEither(CreateShipmentsRequest)
const decodeShipment = Schema.decodeUnknownEither(ShipmentInput, { errors: "all" })

/** What the create-shipments use case reads from its context, in one step. */
type BookingServices = WaybillConfig | Geo | Entropy | ShipmentStore

/**
 * The create-shipments use case, for a caller already admitted (`Admission.admit`: the key
 * precedence, header, then `data.token`, then `data.key`, is the HTTP layer's). One shipment that fails validation is a
 * `ValidationFailed`; with several, each failing shipment carries its own `errors` and the valid
 * ones are booked.
 *
 * Pure work (decoding, planning, the answer) runs as plain functions between a few effect
 * steps: the services, the ZIPs, the clock, and one storage unit per booked shipment.
 */
export const createShipments = (input: CreateShipmentsInput) =>
  Tracing.traced("Booking.createShipments")(
    Effect.flatMap(Effect.context<BookingServices>(), (context) => createShipmentsWith(context, input))
  )

const createShipmentsWith = (
  context: Context.Context<BookingServices>,
  input: CreateShipmentsInput
): Effect.Effect<CreateShipmentsData, BadRequest | ValidationFailed | StorageError> => {
  const config = Context.get(context, WaybillConfig)
  // The HTTP layer refuses deep JSON text before parsing it; this covers bodies handed to core
  // directly. Decoding and formatting below recurse into the value, so a deep one must stop here.
  if (JsonInput.exceedsDepth(input.body)) {
    return Effect.fail(new BadRequest({ message: JsonInput.tooDeepMessage("The body") }))
  }
  const parsed = decodeRequest(input.body)
  if (Either.isLeft(parsed)) {
    return Effect.fail(
      new BadRequest({
        message: 'The body must be an object {"data": {"shipments": [...]}} with one or more shipments.'
      })
    )
  }
  const raw = parsed.right.data.shipments
  if (raw.length === 0)
    return Effect.fail(new BadRequest({ message: "data.shipments must hold at least one shipment." }))
  if (raw.length > config.booking.maxShipmentsPerRequest) {
    return Effect.fail(
      new BadRequest({
        message: `data.shipments holds ${raw.length} shipments; at most ${config.booking.maxShipmentsPerRequest} are allowed per request.`
      })
    )
  }
  const jsonstrn = Sanitize.text(parsed.right.data.jsonstrn, 255)
  const decoded = raw.map((s) => decodeShipment(s))
  const wanted = [...new Set(decoded.flatMap((d) => (Either.isRight(d) ? zipsOf(d.right) : [])))]
  return Effect.flatMap(locate(Context.get(context, Geo), wanted), (zips) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (nowMs): Effect.Effect<CreateShipmentsData, ValidationFailed | StorageError> => {
        const principal = input.principal
        const ctx: PlanContext = { config, nowMs, zips, rateCard: principal.account.rateCard }
        const plans = decoded.map((d) =>
          Either.isLeft(d) ? Either.left(structuralProblems(d.left)) : plan(d.right, ctx)
        )
        if (plans.length === 1 && Either.isLeft(plans[0]!)) {
          return Effect.fail(new ValidationFailed({ problems: plans[0].left }))
        }
        const store = Context.get(context, ShipmentStore)
        const entropy = Context.get(context, Entropy)
        const booked = Metrics.bookingsBy[principal.key.mode]
        const results: Array<ShipmentResult> = []
        const next = (i: number): Effect.Effect<CreateShipmentsData, StorageError> => {
          if (i === plans.length) {
            return Effect.succeed({
              jsonstrn,
              shipments_with_errors: results.filter((r) => r.result === "error").length,
              shipments: results
            })
          }
          const planned = plans[i]!
          if (Either.isLeft(planned)) {
            const d = decoded[i]!
            results.push(errorResult(i + 1, Either.isRight(d) ? d.right : undefined, planned.left))
            return next(i + 1)
          }
          return Effect.flatMap(
            bookWith({ store, entropy, plan: planned.right, principal, jsonstrn, order: i + 1, now: nowMs }),
            ({ summary }) => {
              booked.unsafeUpdate(1, NO_LABELS)
              results.push(summary)
              return next(i + 1)
            }
          )
        }
        return next(0)
      }
    )
  )
}

const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []

/** The locations of the ZIPs a request names (unknown ones left out), one lookup each. */
const locate = (geo: GeoShape, wanted: ReadonlyArray<string>): Effect.Effect<Map<string, ZipLocation>> => {
  const zips = new Map<string, ZipLocation>()
  const from = (i: number): Effect.Effect<Map<string, ZipLocation>> =>
    i === wanted.length
      ? Effect.succeed(zips)
      : Effect.flatMap(geo.lookup(wanted[i]!), (location) => {
          if (Option.isSome(location)) zips.set(wanted[i]!, location.value)
          return from(i + 1)
        })
  return from(0)
}

/** Services createShipments needs; the host provides them as layers. */
export type BookingRequirements =
  | IpBlocks.IpBlocklist
  | WaybillConfig
  | AccountStore
  | KeyRing
  | Geo
  | Entropy
  | ShipmentStore
