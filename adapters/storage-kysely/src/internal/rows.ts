/**
 * Record <-> row conversions. Reads go through `Number()` because drivers disagree on how they
 * return `bigint` and sometimes `integer` columns (PostgreSQL: strings; better-sqlite3 with
 * `safeIntegers`: bigint); every read is total over those shapes.
 */
import type { Insertable, Selectable } from "kysely"
import type { AccountsTable, ApiKeysTable, EventsTable, PiecesTable, ShipmentsTable, StopsTable } from "../Tables.js"
import type {
  AccountRecord,
  ApiKeyRecord,
  DomainEvent,
  LegRecord,
  PieceRecord,
  ShipmentRecord,
  StopRecord
} from "./core.js"

const bool = (b: boolean): number => (b ? 1 : 0)
const num = (v: number | string | bigint): number => Number(v)
const isTrue = (v: number | string | bigint): boolean => Number(v) !== 0

/** The `waybill_shipments` row of a shipment (its parts go to their own tables). */
export const shipmentRow = (s: ShipmentRecord): Insertable<ShipmentsTable> => ({
  track_no: s.trackNo,
  customer_no: s.customerNo,
  livemode: bool(s.livemode),
  state: s.state,
  version: s.version,
  driver_id: s.driverId,
  contact: s.contact,
  phone: s.phone,
  email: s.email,
  billing_reference: s.billingReference,
  service_type: s.serviceType,
  vehicle_type: s.vehicleType,
  pieces: s.pieces,
  weight_lb: s.weightLb,
  signature_required: bool(s.signatureRequired),
  liftgate_required: bool(s.liftgateRequired),
  pickup_instructions: s.pickupInstructions,
  deliver_instructions: s.deliverInstructions,
  ready_at: s.readyAt,
  requested_delivery_at: s.requestedDeliveryAt,
  estimated_delivery_at: s.estimatedDeliveryAt,
  guaranteed_delivery_at: s.guaranteedDeliveryAt,
  charge_transport: s.charge.transport,
  charge_weight: s.charge.weight,
  charge_stops: s.charge.stops,
  charge_fuel: s.charge.fuel,
  charge_extras: s.charge.extras,
  charge_discount: s.charge.discount,
  charge_total: s.charge.total,
  jsonstrn: s.jsonstrn,
  created_at: s.createdAt,
  updated_at: s.updatedAt
})

/**
 * The `waybill_stops` rows of a shipment, each with the leg that arrives at it. Fails (a
 * message, for `StorageError`) when a leg arrives at no stop of the shipment, or two legs at one.
 */
export const stopRows = (
  trackNo: string,
  stops: ReadonlyArray<StopRecord>,
  legs: ReadonlyArray<LegRecord>
): Array<Insertable<StopsTable>> | string => {
  const arriving = new Map<number, LegRecord>()
  for (const leg of legs) {
    if (arriving.has(leg.toStop)) return `two legs arrive at stop ${leg.toStop}`
    arriving.set(leg.toStop, leg)
  }
  for (const leg of legs) {
    if (!stops.some((s) => s.seq === leg.toStop)) return `leg ${leg.seq} arrives at no stop of the shipment`
  }
  return stops.map((s) => stopRow(trackNo, s, arriving.get(s.seq)))
}

/** A `waybill_stops` row, with the leg that arrives at the stop (if any). */
export const stopRow = (trackNo: string, s: StopRecord, leg: LegRecord | undefined): Insertable<StopsTable> => ({
  track_no: trackNo,
  seq: s.seq,
  role: s.role,
  external_id: s.externalId,
  name: s.name,
  address: s.address,
  city: s.city,
  state: s.state,
  zip: s.zip,
  contact_name: s.contactName,
  phone: s.phone,
  note: s.note,
  latitude: s.latitude,
  longitude: s.longitude,
  time_zone: s.timeZone,
  status: s.status,
  eta_at: s.etaAt,
  leg_seq: leg === undefined ? null : leg.seq,
  leg_from: leg === undefined ? null : leg.fromStop,
  leg_miles: leg === undefined ? null : leg.miles
})

/** A `waybill_pieces` row builder for one shipment. */
export const pieceRow =
  (trackNo: string) =>
  (p: PieceRecord): Insertable<PiecesTable> => ({
    track_no: trackNo,
    seq: p.seq,
    piece_no: p.pieceNo,
    weight: p.weight,
    length: p.length,
    width: p.width,
    height: p.height,
    pc: p.pc,
    source_id: p.sourceId,
    description: p.description
  })

/** A stop as the domain stores it; `role` and `status` were written from the same unions. */
export const toStop = (r: Selectable<StopsTable>): StopRecord => ({
  seq: num(r.seq),
  role: r.role as StopRecord["role"],
  externalId: r.external_id === null ? null : num(r.external_id),
  name: r.name,
  address: r.address,
  city: r.city,
  state: r.state,
  zip: r.zip,
  contactName: r.contact_name,
  phone: r.phone,
  note: r.note,
  latitude: num(r.latitude),
  longitude: num(r.longitude),
  timeZone: r.time_zone,
  status: r.status as StopRecord["status"],
  etaAt: num(r.eta_at)
})

/** The legs of a shipment, from its stop rows (each row holds the leg arriving at it), in leg order. */
export const toLegs = (rows: ReadonlyArray<Selectable<StopsTable>>): Array<LegRecord> =>
  rows
    .filter((r) => r.leg_seq !== null)
    .map((r) => ({ seq: num(r.leg_seq!), fromStop: num(r.leg_from!), toStop: num(r.seq), miles: num(r.leg_miles!) }))
    .sort((a, b) => a.seq - b.seq)

/** A piece detail as the domain stores it. */
export const toPiece = (r: Selectable<PiecesTable>): PieceRecord => ({
  seq: num(r.seq),
  pieceNo: r.piece_no,
  weight: r.weight,
  length: r.length,
  width: r.width,
  height: r.height,
  pc: r.pc,
  sourceId: r.source_id,
  description: r.description
})

/** Reassembles a shipment from its row and its already-ordered parts. */
export const toShipment = (
  r: Selectable<ShipmentsTable>,
  stops: ReadonlyArray<StopRecord>,
  legs: ReadonlyArray<LegRecord>,
  pieceDetails: ReadonlyArray<PieceRecord>
): ShipmentRecord => ({
  trackNo: r.track_no,
  customerNo: r.customer_no,
  livemode: isTrue(r.livemode),
  state: r.state as ShipmentRecord["state"],
  version: num(r.version),
  driverId: r.driver_id,
  contact: r.contact,
  phone: r.phone,
  email: r.email,
  billingReference: r.billing_reference,
  serviceType: r.service_type,
  vehicleType: r.vehicle_type,
  pieces: num(r.pieces),
  weightLb: num(r.weight_lb),
  signatureRequired: isTrue(r.signature_required),
  liftgateRequired: isTrue(r.liftgate_required),
  pickupInstructions: r.pickup_instructions,
  deliverInstructions: r.deliver_instructions,
  readyAt: num(r.ready_at),
  requestedDeliveryAt: num(r.requested_delivery_at),
  estimatedDeliveryAt: num(r.estimated_delivery_at),
  guaranteedDeliveryAt: num(r.guaranteed_delivery_at),
  charge: {
    transport: num(r.charge_transport),
    weight: num(r.charge_weight),
    stops: num(r.charge_stops),
    fuel: num(r.charge_fuel),
    extras: num(r.charge_extras),
    discount: num(r.charge_discount),
    total: num(r.charge_total)
  },
  jsonstrn: r.jsonstrn,
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
  stops,
  legs,
  pieceDetails
})

/** The `waybill_accounts` row of an account; the rate card and allowlist become JSON text. */
export const accountRow = (a: AccountRecord): Insertable<AccountsTable> => ({
  customer_no: a.customerNo,
  name: a.name,
  cancel_mode: a.cancelMode,
  rate_card: a.rateCard === null ? null : JSON.stringify(a.rateCard),
  ip_allowlist: JSON.stringify(a.ipAllowlist),
  created_at: a.createdAt
})

/** An account from its row, JSON columns parsed back. */
export const toAccount = (r: Selectable<AccountsTable>): AccountRecord => ({
  customerNo: r.customer_no,
  name: r.name,
  cancelMode: r.cancel_mode as AccountRecord["cancelMode"],
  rateCard: r.rate_card === null ? null : (JSON.parse(r.rate_card) as AccountRecord["rateCard"]),
  ipAllowlist: JSON.parse(r.ip_allowlist) as ReadonlyArray<string>,
  createdAt: num(r.created_at)
})

/** The `waybill_api_keys` row of a key slot. */
export const keyRow = (k: ApiKeyRecord): Insertable<ApiKeysTable> => ({
  customer_no: k.customerNo,
  mode: k.mode,
  id: k.id,
  status: k.status,
  generation: k.generation,
  hash: k.hash,
  hint: k.hint,
  last4: k.last4,
  created_at: k.createdAt,
  updated_at: k.updatedAt
})

/** A key slot from its row. */
export const toKey = (r: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: r.id,
  customerNo: r.customer_no,
  mode: r.mode as ApiKeyRecord["mode"],
  status: r.status as ApiKeyRecord["status"],
  generation: num(r.generation),
  hash: r.hash,
  hint: r.hint,
  last4: r.last4 ?? null,
  createdAt: r.created_at === null || r.created_at === undefined ? null : num(r.created_at),
  updatedAt: num(r.updated_at)
})

/** The `waybill_events` row of an event whose sequence is already assigned. */
export const eventRow = (e: DomainEvent): Insertable<EventsTable> => ({
  id: e.id,
  track_no: e.trackNo,
  customer_no: e.customerNo,
  type: e.type,
  sequence: e.sequence,
  livemode: bool(e.livemode),
  occurred_at: e.occurredAt,
  data: JSON.stringify(e.data)
})

/** An event from its row, `data` parsed back from JSON. */
export const toEvent = (r: Selectable<EventsTable>): DomainEvent => ({
  id: r.id,
  type: r.type as DomainEvent["type"],
  customerNo: r.customer_no,
  trackNo: r.track_no,
  sequence: num(r.sequence),
  livemode: isTrue(r.livemode),
  occurredAt: num(r.occurred_at),
  data: JSON.parse(r.data) as DomainEvent["data"]
})
