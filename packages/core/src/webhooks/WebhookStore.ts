/**
 * @module WebhookStore
 *
 * Webhook endpoints and the durable delivery queue. Deliveries are rows, one per (event,
 * endpoint that selected its type), written by the `EventOutbox` in the same transaction as
 * the event, so a committed change always has its deliveries and a rolled-back one never has.
 * Retry times, attempt counts and leases live in the database: a restarted dispatcher picks up
 * where the last one stopped, and two dispatchers on one database never hold the same delivery
 * (a claim is a conditional update that only one of them wins; the holder renews its lease while
 * it sends).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Page, StorageError } from "../shared/index.js"
import type { EventType } from "../shipments/index.js"

/** A receiver configured by an account. */
export interface EndpointRecord {
  /** `we_` + ULID. */
  readonly id: string
  readonly customerNo: string
  readonly url: string
  readonly eventTypes: ReadonlyArray<EventType>
  /** The signing secret as stored (sealed with the KeyRing's `webhook` secret). */
  readonly secret: string
  /** The secret before the last rotation, still signing until `previousSecretUntil`. */
  readonly previousSecret: string | null
  readonly previousSecretUntil: number | null
  readonly enabled: boolean
  /** Why it was disabled: `operator`, `gone` (410), `failing` (5 days of failures). */
  readonly disabledReason: string | null
  /** Start of the current run of failures, null while healthy. */
  readonly failingSince: number | null
  readonly createdAt: number
  readonly updatedAt: number
}

export type DeliveryStatus = "pending" | "delivered" | "failed"

/** One event for one endpoint. */
export interface DeliveryRecord {
  readonly endpointId: string
  readonly eventId: string
  readonly trackNo: string
  readonly sequence: number
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly nextAttemptAt: number
  readonly leaseOwner: string | null
  readonly leaseUntil: number
  readonly lastStatus: number | null
  readonly createdAt: number
  readonly updatedAt: number
}

/** One line of the delivery log. */
export interface AttemptRecord {
  readonly endpointId: string
  readonly eventId: string
  readonly attempt: number
  readonly at: number
  /** HTTP status, null when no answer came (refused, timed out, connection failed). */
  readonly status: number | null
  readonly ok: boolean
  readonly durationMs: number
  /** The first bytes of the answer (or the error), for operators. */
  readonly response: string
}

/**
 * Where a line of the delivery log sits in its list: the log has no ids of its own, and one
 * event's attempts share the time only when a resend restarted the count.
 */
export type AttemptKey = readonly [at: number, eventId: string, attempt: number]

/** The stored event a delivery sends, with `data` as the JSON text written at append time. */
export interface StoredEvent {
  readonly id: string
  readonly type: EventType
  readonly customerNo: string
  readonly trackNo: string
  readonly sequence: number
  readonly livemode: boolean
  readonly occurredAt: number
  readonly dataJson: string
}

/** A claimed delivery with what sending it needs. */
export interface Claimed {
  readonly delivery: DeliveryRecord
  readonly endpoint: EndpointRecord
  readonly event: StoredEvent
}

/** What happened to a claimed delivery. */
export type Outcome =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Retry"; readonly nextAttemptAt: number }
  | { readonly _tag: "Exhausted" }

export interface WebhookStoreShape {
  readonly insertEndpoint: (endpoint: EndpointRecord) => Effect.Effect<void, StorageError>
  /** Replaces an endpoint (and which event types it receives); false when it does not exist. */
  readonly updateEndpoint: (endpoint: EndpointRecord) => Effect.Effect<boolean, StorageError>
  /**
   * Removes an endpoint with everything that hangs off it: its subscriptions, its deliveries
   * (pending ones are dropped, finished ones forgotten) and its delivery log. The events stay,
   * as other endpoints and `recover` read them. False when it does not exist.
   */
  readonly deleteEndpoint: (id: string) => Effect.Effect<boolean, StorageError>
  readonly findEndpoint: (id: string) => Effect.Effect<Option.Option<EndpointRecord>, StorageError>
  /** A page of the endpoints of one account (or of all), newest first by `(createdAt, id)`. */
  readonly listEndpoints: (
    filter: { readonly customerNo?: string | undefined },
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<EndpointRecord>, StorageError>
  /**
   * Leases up to `limit` due deliveries to `owner` until `now + leaseMs`: pending, due, not
   * leased (or the lease expired), of an enabled endpoint, and with no earlier pending
   * delivery of the same shipment to the same endpoint (per-shipment order).
   *
   * `skipEndpoints` are left out and at most `perEndpoint` deliveries of any one endpoint are
   * taken: the dispatcher passes the endpoints whose lane is full, so a slow endpoint's
   * backlog never fills a claim that other endpoints' deliveries are waiting for.
   */
  readonly claimDue: (options: {
    readonly owner: string
    readonly now: number
    readonly leaseMs: number
    readonly limit: number
    readonly skipEndpoints?: ReadonlyArray<string>
    readonly perEndpoint?: number
  }) => Effect.Effect<ReadonlyArray<Claimed>, StorageError>
  /**
   * Logs the attempt and, if `owner` still holds the lease, records the outcome and releases
   * it. False when the lease was lost (the attempt is logged anyway).
   */
  readonly complete: (options: {
    readonly owner: string
    readonly attempt: AttemptRecord
    readonly outcome: Outcome
  }) => Effect.Effect<boolean, StorageError>
  /**
   * Moves the lease of each given delivery that `owner` still holds (and that is still pending)
   * to `leaseUntil`: a dispatcher renews the leases of the sends it has in flight, so a slow
   * receiver never lets another dispatcher take an attempt over mid-send. A lease another
   * dispatcher took meanwhile stays theirs. How many were renewed.
   */
  readonly renewLeases: (options: {
    readonly owner: string
    readonly deliveries: ReadonlyArray<{ readonly endpointId: string; readonly eventId: string }>
    readonly leaseUntil: number
  }) => Effect.Effect<number, StorageError>
  /**
   * Gives up every lease `owner` holds on a pending delivery, so any dispatcher may claim those
   * deliveries at once instead of after the lease runs out (a host shutting down calls it after
   * its dispatcher stopped sending). How many were released.
   */
  readonly releaseLeases: (owner: string) => Effect.Effect<number, StorageError>
  /**
   * Tracks an endpoint's health: success clears `failingSince`; failure starts it, and disables
   * the endpoint (`failing`) once it is older than `disableAfterMs`. True when it disabled it.
   */
  readonly noteHealth: (options: {
    readonly endpointId: string
    readonly ok: boolean
    readonly now: number
    readonly disableAfterMs: number
  }) => Effect.Effect<boolean, StorageError>
  /** A page of an endpoint's deliveries, newest first by `(createdAt, eventId)`. */
  readonly listDeliveries: (
    endpointId: string,
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<DeliveryRecord>, StorageError>
  /** A page of an endpoint's delivery log, newest first by `(at, eventId, attempt)`. */
  readonly listAttempts: (
    endpointId: string,
    page: Page.Request<AttemptKey>
  ) => Effect.Effect<Page.Slice<AttemptRecord>, StorageError>
  /** Makes the delivery of `eventId` to `endpointId` pending and due at `now`, creating it if needed. */
  readonly enqueue: (endpointId: string, eventId: string, now: number) => Effect.Effect<void, StorageError>
  /** One stored event by id, whoever owns it (callers scope it by `customerNo`). */
  readonly findEvent: (eventId: string) => Effect.Effect<Option.Option<StoredEvent>, StorageError>
  /** Every delivery of an event made pending and due again; how many. */
  readonly requeueEvent: (eventId: string, now: number) => Effect.Effect<number, StorageError>
  /**
   * Queues again every event of the endpoint's account since `since`, of a type it selects,
   * that was not delivered to it (missing, failed or still pending); how many.
   */
  readonly recover: (endpointId: string, since: number, now: number) => Effect.Effect<number, StorageError>
  /**
   * Forgets finished deliveries (delivered or failed) last changed before `before`, and log
   * lines older than it; how many rows went. Events themselves stay (they carry `sequence`).
   */
  readonly prune: (before: number) => Effect.Effect<number, StorageError>
}

export class WebhookStore extends Context.Tag("@waybill/core/WebhookStore")<WebhookStore, WebhookStoreShape>() {}
