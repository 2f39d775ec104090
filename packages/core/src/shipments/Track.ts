/**
 * @module Track
 *
 * `GET /api/v1/utilities/track/?idx=&key=` (interface 4.6, 5). Anyone who knows a tracking
 * number sees where the shipment stands, but only at ZIP level: status, stop ZIPs with their
 * centres rounded to two decimals (about a kilometre), event types and times. The owner's key,
 * or the key of an account linked to the owner, sees the precise view: stop names and
 * addresses, stored coordinates, every event with its data, and the documents the documents
 * lookup would list (without download links).
 *
 * A key sees the precise view only of shipments in its own world (a test key: test bookings;
 * a live key: live ones), like cancel; for the other world it gets the coarse view, as if it
 * had no key. Unknown and malformed tracking numbers get one uniform answer
 * ({@link TrackingNotFound}) and count as misses; looking at a shipment without its account's
 * key counts as a touch of that account (see `Abuse`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Abuse, Credentials } from "../access/index.js"
import type { Principal, ClientIp } from "../access/index.js"
import { parseId } from "./Cancel.js"
import { type ContentType, type DocumentRecord, type OrderRecord, visible } from "./Document.js"
import { DocumentStore } from "./DocumentStore.js"
import type { DomainEvent } from "./Event.js"
import { EventOutbox } from "./EventOutbox.js"
import { Geo, type ZipLocation, abbreviation, formatInZone } from "../geo/index.js"
import {
  pieceJson,
  stopJson,
  type ShipmentRecord,
  type ShipmentState,
  type StopRole,
  type StopStatus
} from "./Shipment.js"
import { ShipmentStore } from "./ShipmentStore.js"

/** The tracking number is malformed or unknown: one answer for both, so numbers cannot be probed. */
export class TrackingNotFound extends Schema.TaggedError<TrackingNotFound>()("TrackingNotFound", {}) {}

/** A stop in the coarse view: where, to the ZIP, and how far along. */
export interface CoarseStop {
  readonly seq: number
  readonly role: StopRole
  readonly status: StopStatus
  readonly zip: string
  /** The ZIP's city and state (from `Geo`), never the customer's text. */
  readonly city: string
  readonly state: string
  /** The ZIP centre, rounded to 2 decimals. */
  readonly latitude: number
  readonly longitude: number
}

/** An event in the coarse view: what happened and when, without its data. */
export interface CoarseEvent {
  readonly type: string
  readonly occurred_at: string
}

/** What anyone with the tracking number sees. */
export interface CoarseView {
  readonly track_no: string
  readonly detail: "coarse"
  readonly status: ShipmentState
  readonly service_type: string
  readonly vehicle_type: string
  readonly estimated_delivery: string
  readonly guaranteed_delivery: string
  readonly destination_tz: string
  readonly stops: ReadonlyArray<CoarseStop>
  readonly events: ReadonlyArray<CoarseEvent>
}

/** A stop in the precise view. */
export interface PreciseStop {
  readonly seq: number
  readonly role: StopRole
  readonly stop_id: number | null
  readonly status: StopStatus
  readonly name: string
  readonly address: string
  readonly city: string
  readonly state: string
  readonly zip: string
  /** The stop's `contact_name`, `phone_no` and `stop_note` as booked (cleaned). */
  readonly contact_name: string
  readonly phone_no: string
  readonly stop_note: string
  readonly latitude: number
  readonly longitude: number
  /** Estimated arrival, local time of the stop without offset, and its zone abbreviation. */
  readonly eta: string
  readonly tz: string
}

/** An event in the precise view. */
export interface PreciseEvent {
  readonly id: string
  readonly type: string
  readonly sequence: number
  readonly occurred_at: string
  readonly data: Readonly<Record<string, unknown>>
}

/** What the owner (or a linked account) sees. */
export interface PreciseView {
  readonly track_no: string
  readonly detail: "precise"
  readonly status: ShipmentState
  readonly livemode: boolean
  readonly service_type: string
  readonly vehicle_type: string
  readonly pieces: number
  readonly weight: number
  readonly billing_reference: string
  /** What the booking said about the shipment, as stored: every field the API accepted shows somewhere. */
  readonly contact: string
  readonly phone: string
  readonly email: string
  readonly signature_required: boolean
  readonly liftgate_required: boolean
  readonly pickup_instructions: string
  readonly deliver_instructions: string
  readonly estimated_delivery: string
  readonly guaranteed_delivery: string
  readonly destination_tz: string
  readonly stops: ReadonlyArray<PreciseStop>
  /** The booking's `piece_details` rows, under their wire names. */
  readonly piece_details: ReadonlyArray<ReturnType<typeof pieceJson>>
  readonly events: ReadonlyArray<PreciseEvent>
  /** The documents the documents lookup would list for the order (same rule), without download links. */
  readonly documents: ReadonlyArray<TrackDocument>
}

/**
 * A document the owner can download, as the documents lookup names it (interface 2.4) but
 * without its `uri`: tracking takes its key in the query string, which gets logged, and a link
 * is a bearer credential, so links are issued only by the documents lookup.
 */
export interface TrackDocument {
  readonly type: string
  /** One-based page within its batch, as a string like the documents lookup's. */
  readonly page: string
  /** The source identifier; a signature's holds the recipient name. */
  readonly id: string
  readonly content_type: ContentType
}

/** The order's documents a customer sees (`Document.visible`), shaped for the precise view. */
export const trackDocuments = (
  order: Pick<OrderRecord, "currentVersion">,
  documents: ReadonlyArray<DocumentRecord>
): ReadonlyArray<TrackDocument> =>
  visible(order, documents).map((d) => ({
    type: d.type,
    page: String(d.page),
    id: d.sourceId,
    content_type: d.contentType
  }))

/** Two decimals: about 1.1 km of latitude, the precision of "the ZIP centre". */
export const coarsen = (degrees: number): number => Math.round(degrees * 100) / 100

const times = (s: ShipmentRecord) => {
  const tz = s.stops[s.stops.length - 1]!.timeZone
  return {
    estimated_delivery: formatInZone(s.estimatedDeliveryAt, tz),
    guaranteed_delivery: formatInZone(s.guaranteedDeliveryAt, tz),
    destination_tz: abbreviation(s.estimatedDeliveryAt, tz)
  }
}

/**
 * The coarse view (pure). Built field by field from the shipment's state, ZIPs, rounded
 * coordinates and event types, so no name, address, contact, note or event data can leak into
 * it whatever the record holds. `places` gives each ZIP's city and state; a ZIP missing there
 * shows empty strings.
 */
export const coarseView = (
  s: ShipmentRecord,
  events: ReadonlyArray<DomainEvent>,
  places: ReadonlyMap<string, ZipLocation>
): CoarseView => ({
  track_no: s.trackNo,
  detail: "coarse",
  status: s.state,
  service_type: s.serviceType,
  vehicle_type: s.vehicleType,
  ...times(s),
  stops: s.stops.map((stop) => {
    const place = places.get(stop.zip)
    return {
      seq: stop.seq,
      role: stop.role,
      status: stop.status,
      zip: stop.zip,
      city: place?.city ?? "",
      state: place?.state ?? "",
      latitude: coarsen(stop.latitude),
      longitude: coarsen(stop.longitude)
    }
  }),
  events: events
    .filter((e) => e.type.startsWith("shipment."))
    .map((e) => ({ type: e.type, occurred_at: new Date(e.occurredAt).toISOString() }))
})

/**
 * The precise view (pure): everything the coarse one has, plus places, positions, contacts,
 * notes, piece details and event data: what the owner booked, shown back to the owner.
 */
export const preciseView = (
  s: ShipmentRecord,
  events: ReadonlyArray<DomainEvent>,
  documents: ReadonlyArray<TrackDocument>
): PreciseView => ({
  track_no: s.trackNo,
  detail: "precise",
  status: s.state,
  livemode: s.livemode,
  service_type: s.serviceType,
  vehicle_type: s.vehicleType,
  pieces: s.pieces,
  weight: s.weightLb,
  billing_reference: s.billingReference,
  contact: s.contact,
  phone: s.phone,
  email: s.email,
  signature_required: s.signatureRequired,
  liftgate_required: s.liftgateRequired,
  pickup_instructions: s.pickupInstructions,
  deliver_instructions: s.deliverInstructions,
  ...times(s),
  stops: s.stops.map((stop) => ({
    seq: stop.seq,
    role: stop.role,
    ...stopJson(stop),
    status: stop.status,
    latitude: stop.latitude,
    longitude: stop.longitude,
    eta: formatInZone(stop.etaAt, stop.timeZone),
    tz: abbreviation(stop.etaAt, stop.timeZone)
  })),
  piece_details: s.pieceDetails.map(pieceJson),
  events: events.map((e) => ({
    id: e.id,
    type: e.type,
    sequence: e.sequence,
    occurred_at: new Date(e.occurredAt).toISOString(),
    data: e.data
  })),
  documents
})

/** What the HTTP layer hands over. */
export interface TrackInput {
  /** The resolved client address (none when unknown); blocked addresses are refused first. */
  readonly client: Option.Option<ClientIp.Address>
  /** The caller's principal when a key was given (see `Admission.admit`), else none. */
  readonly principal: Option.Option<Principal>
  /** Every `idx` query value: the tracking number. */
  readonly idx: ReadonlyArray<string>
}

/** Whether the principal's account may read the shipment's account (its own, or a linked child). */
const mayRead = (principal: Principal, s: ShipmentRecord) =>
  s.customerNo === principal.account.customerNo
    ? Effect.succeed(true)
    : Effect.map(Credentials.readableAccounts(principal), (accounts) => accounts.includes(s.customerNo))

const notFound = (client: Option.Option<ClientIp.Address>) =>
  Effect.zipRight(Abuse.recordMiss(client), Effect.fail(new TrackingNotFound()))

/**
 * The track use case, for a caller already admitted (`Admission.admit` with an optional key:
 * anonymous callers are limited by address, an invalid key never becomes anonymous).
 */
export const track = Effect.fn("Track.track")(function* (input: TrackInput) {
  const principal = input.principal
  const id = parseId(input.idx)
  if (Option.isNone(id)) return yield* notFound(input.client)
  const found = yield* Effect.flatMap(ShipmentStore, (store) => store.findByTrackNo(id.value))
  if (Option.isNone(found)) return yield* notFound(input.client)
  const shipment = found.value

  const readable = Option.isSome(principal) ? yield* mayRead(principal.value, shipment) : false
  if (!readable) yield* Abuse.recordTouch(input.client, shipment.customerNo)
  const sameWorld = Option.isSome(principal) && shipment.livemode === (principal.value.key.mode === "live")
  const events = yield* Effect.flatMap(EventOutbox, (outbox) => outbox.listByShipment(shipment.trackNo))

  if (readable && sameWorld) {
    const store = yield* DocumentStore
    const order = yield* store.findOrder(shipment.trackNo)
    const documents = Option.isSome(order)
      ? trackDocuments(order.value, yield* store.listCurrent([shipment.trackNo]))
      : []
    return preciseView(shipment, events, documents) as CoarseView | PreciseView
  }
  const geo = yield* Geo
  const places = new Map<string, ZipLocation>()
  for (const zip of new Set(shipment.stops.map((s) => s.zip))) {
    const place = yield* geo.lookup(zip)
    if (Option.isSome(place)) places.set(zip, place.value)
  }
  return coarseView(shipment, events, places) as CoarseView | PreciseView
})
