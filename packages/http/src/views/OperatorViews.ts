/**
 * @module OperatorViews
 *
 * How operators see Waybill's records: the JSON of `/ops/v1` and of the CLI's `--json`. Wire
 * shapes are the HTTP layer's business; core hands over records (`Operations.show`,
 * `Operations.perform`) and these functions shape them.
 */
import { type Event, Lifecycle, LocalTime, Shipment } from "@waybill/core"

/** A shipment with its events, shaped for operators (snake_case JSON, local times with zone). */
export const shipment = (s: Shipment.ShipmentRecord, events: ReadonlyArray<Event.DomainEvent>) => {
  const local = (ms: number, tz: string) => ({
    local: LocalTime.formatInZone(ms, tz),
    tz: LocalTime.abbreviation(ms, tz),
    utc: new Date(ms).toISOString()
  })
  const destTz = s.stops[s.stops.length - 1]!.timeZone
  return {
    track_no: s.trackNo,
    customer_no: s.customerNo,
    livemode: s.livemode,
    state: s.state,
    version: s.version,
    driver_id: s.driverId,
    service_type: s.serviceType,
    vehicle_type: s.vehicleType,
    pieces: s.pieces,
    weight: s.weightLb,
    billing_reference: s.billingReference,
    jsonstrn: s.jsonstrn,
    contact: s.contact,
    phone: s.phone,
    email: s.email,
    signature_required: s.signatureRequired,
    liftgate_required: s.liftgateRequired,
    pickup_instructions: s.pickupInstructions,
    deliver_instructions: s.deliverInstructions,
    ready: local(s.readyAt, s.stops[0]!.timeZone),
    requested_delivery: local(s.requestedDeliveryAt, destTz),
    estimated_delivery: local(s.estimatedDeliveryAt, destTz),
    guaranteed_delivery: local(s.guaranteedDeliveryAt, destTz),
    charge: s.charge,
    allowed_commands: Lifecycle.allowedCommands(s),
    stops: s.stops.map((stop) => ({
      seq: stop.seq,
      role: stop.role,
      stop_id: stop.externalId,
      name: stop.name,
      address: stop.address,
      city: stop.city,
      state: stop.state,
      zip: stop.zip,
      contact_name: stop.contactName,
      phone_no: stop.phone,
      stop_note: stop.note,
      status: stop.status,
      eta: local(stop.etaAt, stop.timeZone)
    })),
    legs: s.legs.map((l) => ({ from: l.fromStop, to: l.toStop, miles: l.miles })),
    piece_details: s.pieceDetails.map(Shipment.pieceJson),
    events: events.map((e) => ({
      id: e.id,
      type: e.type,
      sequence: e.sequence,
      occurred_at: new Date(e.occurredAt).toISOString(),
      data: e.data
    }))
  }
}
