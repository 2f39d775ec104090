/**
 * @module OperatorViews
 *
 * How operators see Waybill's records: the JSON of `/ops/v1` and of the CLI's `--json`. Wire
 * shapes are the HTTP layer's business; core hands over records (`Operations.show`,
 * `Operations.perform`) and these functions shape them.
 */
import {
  type Document,
  type Documents,
  type Event,
  Lifecycle,
  LocalTime,
  type Page,
  Shipment,
  type Webhook
} from "@waybill/core"

/**
 * A page of a list: `data` newest first, `has_more`, and `next_starting_after`, the cursor to
 * pass as `starting_after` for the next page (null on the last page).
 */
export const page = <A, B>(p: Page.Page<A>, view: (item: A) => B) => ({
  data: p.items.map(view),
  has_more: p.hasMore,
  next_starting_after: p.nextCursor
})

/** An IP block as operators see it. */
export const ipBlock = (b: {
  readonly ipKey: string
  readonly until: number
  readonly reason: string
  readonly strikes: number
  readonly createdAt: number
}) => ({
  ip: b.ipKey,
  until: new Date(b.until).toISOString(),
  reason: b.reason,
  strikes: b.strikes,
  created_at: new Date(b.createdAt).toISOString()
})

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
      ...Shipment.stopJson(stop),
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

/** An endpoint as operators see it: never the secret. */
export const endpoint = (e: Webhook.EndpointRecord) => ({
  id: e.id,
  customer_no: e.customerNo,
  url: e.url,
  events: e.eventTypes,
  enabled: e.enabled,
  disabled_reason: e.disabledReason,
  failing_since: e.failingSince === null ? null : new Date(e.failingSince).toISOString(),
  previous_secret_until: e.previousSecretUntil === null ? null : new Date(e.previousSecretUntil).toISOString(),
  created_at: new Date(e.createdAt).toISOString()
})

/** A delivery as operators see it. */
export const delivery = (d: Webhook.DeliveryRecord) => ({
  event_id: d.eventId,
  track_no: d.trackNo,
  sequence: d.sequence,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === "pending" ? new Date(d.nextAttemptAt).toISOString() : null,
  last_status: d.lastStatus
})

/** One line of the delivery log as operators see it. */
export const attempt = (a: Webhook.AttemptRecord) => ({
  event_id: a.eventId,
  attempt: a.attempt,
  at: new Date(a.at).toISOString(),
  status: a.status,
  ok: a.ok,
  duration_ms: a.durationMs,
  response: a.response
})

/** A document as operators see it, with whether customers see it now (`Documents.forOperator`). */
export const document = ({ document: d, shown }: Documents.OperatorDocument) => ({
  id: d.id,
  track_no: d.trackNo,
  kind: d.kind as Document.DocumentKind,
  type: d.type,
  order_version: d.orderVersion,
  batch: d.batch,
  page: d.page,
  source_id: d.sourceId,
  content_type: d.contentType,
  rotation: d.rotation,
  size: d.size,
  version: d.version,
  hidden: d.hidden,
  removed: d.removed,
  shown_to_customers: shown,
  captured_at: new Date(d.capturedAt).toISOString()
})

/**
 * An order and a page of its documents as operators see them: every version, newest first,
 * what customers see marked.
 */
export const orderDocuments = (listed: {
  readonly order: {
    readonly trackNo: string
    readonly customerNo: string
    readonly reference: string
    readonly invoice: string
    readonly currentVersion: number
  }
  readonly page: Page.Page<Documents.OperatorDocument>
}) => ({
  track_no: listed.order.trackNo,
  customer_no: listed.order.customerNo,
  reference: listed.order.reference,
  invoice: listed.order.invoice,
  order_version: listed.order.currentVersion,
  ...page(listed.page, document)
})
