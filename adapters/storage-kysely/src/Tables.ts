/**
 * @module Tables
 *
 * The row shapes of every `waybill_` table, as Kysely sees them. Hosts that want to read Waybill
 * tables directly (reports, admin screens) can type a `Kysely<WaybillDatabase>` with this; the
 * adapter itself accepts `Kysely<any>` so the host's own database type never has to include ours.
 *
 * Portability rules behind the column types: epoch-millisecond timestamps are `bigint` columns,
 * which PostgreSQL drivers return as strings (hence the `string | bigint` in the select types and
 * the `Number()` on read); booleans are `integer` 0/1 because better-sqlite3 cannot bind JS
 * booleans; JSON is `text`, so no dialect's JSON type or operators are relied on.
 */
import type { ColumnType } from "kysely"

/** An epoch-ms `bigint` column: a number going in, whatever the driver returns coming out. */
export type Millis = ColumnType<number | string | bigint, number, number>

/** An `integer` column read back through `Number()` (some drivers widen to bigint or string). */
export type Int = ColumnType<number | string | bigint, number, number>

/** A `double precision` column (money, miles, coordinates). */
export type Real = ColumnType<number | string, number, number>

/** One row of `waybill_accounts`. */
export interface AccountsTable {
  readonly customer_no: string
  readonly name: string
  readonly cancel_mode: string
  /** JSON of the `RateCard`, or null. */
  readonly rate_card: string | null
  /** JSON array of CIDRs. */
  readonly ip_allowlist: string
  readonly created_at: Millis
}

/** One key slot of `waybill_api_keys`; primary key (customer_no, mode). */
export interface ApiKeysTable {
  readonly customer_no: string
  readonly mode: string
  readonly id: string
  readonly status: string
  readonly generation: Int
  /** "" for a blank slot; unique among non-empty values. */
  readonly hash: string
  readonly hint: string
  /** The key's last 4 characters; null for blank slots and keys made before migration 0015. */
  readonly last4: string | null
  /** When the current key was made; null for blank slots and keys made before migration 0015. */
  readonly created_at: Millis | null
  readonly updated_at: Millis
}

/** `parent` may read `child`'s orders; primary key (parent_customer_no, child_customer_no). */
export interface AccountLinksTable {
  readonly parent_customer_no: string
  readonly child_customer_no: string
}

/** One row of `waybill_shipments`; the charge breakdown is spread over `charge_*` columns. */
export interface ShipmentsTable {
  readonly track_no: string
  readonly customer_no: string
  readonly livemode: Int
  readonly state: string
  readonly version: Int
  readonly driver_id: string | null
  readonly contact: string
  readonly phone: string
  readonly email: string
  readonly billing_reference: string
  readonly service_type: string
  readonly vehicle_type: string
  readonly pieces: Int
  readonly weight_lb: Real
  readonly signature_required: Int
  readonly liftgate_required: Int
  readonly pickup_instructions: string
  readonly deliver_instructions: string
  readonly ready_at: Millis
  readonly requested_delivery_at: Millis
  readonly estimated_delivery_at: Millis
  readonly guaranteed_delivery_at: Millis
  readonly charge_transport: Real
  readonly charge_weight: Real
  readonly charge_stops: Real
  readonly charge_fuel: Real
  readonly charge_extras: Real
  readonly charge_discount: Real
  readonly charge_total: Real
  readonly jsonstrn: string
  readonly created_at: Millis
  readonly updated_at: Millis
}

/**
 * One stop of a shipment's route; primary key (track_no, seq). The leg that arrives at the stop
 * lives on its row (`leg_*`, null on a stop no leg arrives at, the pickup): a booking writes one
 * table fewer, and legs are only ever read with their stops.
 */
export interface StopsTable {
  readonly track_no: string
  readonly seq: Int
  readonly role: string
  readonly external_id: Int | null
  readonly name: string
  readonly address: string
  readonly city: string
  readonly state: string
  readonly zip: string
  readonly contact_name: string
  readonly phone: string
  readonly note: string
  readonly latitude: Real
  readonly longitude: Real
  readonly time_zone: string
  readonly status: string
  readonly eta_at: Millis
  /** The arriving leg's own `seq`. */
  readonly leg_seq: Int | null
  /** The stop the arriving leg starts from. */
  readonly leg_from: Int | null
  readonly leg_miles: Real | null
}

/** One piece detail as given by the customer; primary key (track_no, seq). */
export interface PiecesTable {
  readonly track_no: string
  readonly seq: Int
  readonly piece_no: string
  readonly weight: string
  readonly length: string
  readonly width: string
  readonly height: string
  readonly pc: string
  readonly source_id: string
  readonly description: string
}

/** The event outbox; unique (track_no, sequence), indexed by occurred_at for the dispatcher. */
export interface EventsTable {
  readonly id: string
  readonly track_no: string
  readonly customer_no: string
  readonly type: string
  readonly sequence: Int
  readonly livemode: Int
  readonly occurred_at: Millis
  /** JSON object. */
  readonly data: string
}

/** Every table Waybill owns, keyed by name. */
/** One blocked client address (IPv4, or an IPv6 /64) of `waybill_ip_blocks`. */
export interface IpBlocksTable {
  readonly ip_key: string
  readonly until: Millis
  readonly reason: string
  readonly created_at: Millis
  readonly strikes: Int
}

/** An order's document state (created lazily: no row means version 1, no invoice number). */
export interface OrdersTable {
  readonly track_no: string
  readonly current_version: Int
  /** "" when none is stored. */
  readonly invoice_no: string
}

/** One document of an order (attachment page or signature); primary key id. */
export interface DocumentsTable {
  readonly id: string
  readonly track_no: string
  /** `attachment` or `signature`. */
  readonly kind: string
  readonly order_version: Int
  readonly batch: Int
  readonly page: Int
  readonly type: string
  readonly source_id: string
  readonly content_type: string
  readonly rotation: Int
  readonly blob_key: string
  readonly size: Int
  readonly version: Int
  readonly hidden: Int
  readonly removed: Int
  readonly captured_at: Millis
  readonly created_at: Millis
  readonly updated_at: Millis
}

/**
 * One download grant (`DocumentStore.insertGrant`): what the tickets of one documents lookup
 * grant. `id` is 28 hex digits, the expiry second first, so expired grants are a key range.
 */
export interface TicketGrantsTable {
  readonly id: string
  readonly customer_no: string
  readonly key_id: string
  /** `live` or `test`. */
  readonly key_mode: string
  readonly key_generation: Int
  readonly expires_at: Millis
  /** JSON array: each granted document's id and version in turn (`["doc_...", 2, ...]`). */
  readonly documents: string
}

/**
 * One rate-limit or abuse counter (`RateLimiter`): hits of `key` in the fixed window starting
 * at `window_start`; `expires_at` is the window's end, after which the row is only pruned.
 */
export interface RateCountersTable {
  readonly key: string
  readonly window_start: Millis
  readonly count: Int
  readonly expires_at: Millis
}

/** One account-provisioning registration (`ProvisioningStore`); `state` and `profile` are JSON. */
export interface RegistrationsTable {
  readonly idx: string
  readonly email: string
  readonly email_domain: string
  readonly password_hash: string
  readonly otp_secret_id: string
  readonly stage: string
  readonly state: string
  readonly link_hash: string | null
  readonly validation_key_hash: string | null
  readonly customer_no: string | null
  readonly mail_status: string
  readonly profile: string
  readonly created_at: Millis
  readonly updated_at: Millis
  readonly version: Int
}

/** An operator-recorded payment enablement (`Provisioning.PaymentEnablementStore`); no row: not enabled. */
export interface PaymentEnablementsTable {
  readonly customer_no: string
  readonly provider: string
  readonly enabled_at: Millis
}

/**
 * One `Idempotency-Key` of an account and key mode (`IdempotencyStore`); primary key
 * (customer_no, mode, idem_key). `status`, `headers` and `body` stay null until the first
 * request's answer is stored.
 */
export interface IdempotencyKeysTable {
  readonly customer_no: string
  readonly mode: string
  readonly idem_key: string
  readonly fingerprint: string
  readonly token: string
  readonly created_at: Millis
  readonly locked_until: Millis
  readonly expires_at: Millis
  readonly status: Int | null
  /** JSON object of the answer's header fields. */
  readonly headers: string | null
  readonly body: string | null
}

/** A webhook receiver of an account (`waybill_webhook_endpoints`). */
export interface WebhookEndpointsTable {
  readonly id: string
  readonly customer_no: string
  readonly url: string
  /** Selected event types, comma-separated. */
  readonly event_types: string
  /** Sealed signing secret. */
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_until: Millis | null
  readonly enabled: Int
  readonly disabled_reason: string | null
  readonly failing_since: Millis | null
  readonly created_at: Millis
  readonly updated_at: Millis
}

/** Which endpoints receive which event type of an account: the fan-out lookup of every event. */
export interface WebhookSubscriptionsTable {
  readonly customer_no: string
  readonly event_type: string
  readonly endpoint_id: string
  readonly enabled: Int
}

/** One event for one endpoint: the durable delivery queue (`waybill_webhook_deliveries`). */
export interface WebhookDeliveriesTable {
  readonly endpoint_id: string
  readonly event_id: string
  readonly track_no: string
  readonly sequence: Int
  /** `pending`, `delivered`, `failed`. */
  readonly status: string
  readonly attempts: Int
  readonly next_attempt_at: Millis
  readonly lease_owner: string | null
  readonly lease_until: Millis
  readonly last_status: Int | null
  readonly created_at: Millis
  readonly updated_at: Millis
  /**
   * 1 when a claim may take this pending delivery: it is the earliest pending one of its
   * shipment to its endpoint, and the endpoint is enabled. Meaningful for pending rows only.
   */
  readonly claimable: Int
}

/**
 * One row of `waybill_blobs`: a stored blob (`@waybill/blob-pg`). `key` is what the BlobStore
 * answers (content address, or `<key>.<variant>` for a rendition); `blob_id` names its chunks,
 * which are written under it before the key is known (a streamed write learns its hash last).
 */
export interface BlobsTable {
  readonly key: string
  readonly blob_id: string
  /** A `bigint` column: bytes. */
  readonly size: ColumnType<number | string | bigint, number, number>
  readonly chunks: Int
  readonly created_at: Millis
}

/** One row of `waybill_blob_chunks`: up to 256 KiB of a blob, `seq` from 0. */
export interface BlobChunksTable {
  readonly blob_id: string
  readonly seq: Int
  readonly data: Uint8Array
}

/**
 * The one row of `waybill_key_check` (`id` = `"master"`): an HMAC of a fixed label under the
 * master secret, written by the first host, so a host started with another secret refuses to run
 * instead of minting keys and tickets no other host accepts.
 */
export interface KeyCheckTable {
  readonly id: string
  readonly mac: string
  readonly created_at: Millis
}

/** The delivery log (`waybill_webhook_attempts`). */
export interface WebhookAttemptsTable {
  readonly endpoint_id: string
  readonly event_id: string
  readonly attempt: Int
  readonly at: Millis
  readonly status: Int | null
  readonly ok: Int
  readonly duration_ms: Int
  readonly response: string
}

/** A portal user; `email_key` (lowercase) is unique across accounts. */
export interface UsersTable {
  readonly user_id: string
  readonly customer_no: string
  readonly email: string
  readonly email_key: string
  readonly role: string
  /** Null while an invited user has not set a password. */
  readonly password_hash: string | null
  readonly password_version: Int
  readonly password_changed_at: ColumnType<number | string | bigint | null, number | null, number | null>
  readonly invited_by: string | null
  readonly created_at: Millis
}

/** A portal session; `id` is the SHA-256 (hex) of the token. */
export interface SessionsTable {
  readonly id: string
  readonly user_id: string
  readonly customer_no: string
  readonly csrf_token: string
  readonly created_at: Millis
  readonly last_seen_at: Millis
  readonly authenticated_at: Millis
  readonly password_version: Int
}

/** A one-time link token (invite, reset); `hash` is the SHA-256 (hex) of the token. */
export interface UserTokensTable {
  readonly hash: string
  readonly purpose: string
  readonly user_id: string
  readonly customer_no: string
  readonly password_version: Int
  readonly created_at: Millis
  readonly expires_at: Millis
  readonly used_at: ColumnType<number | string | bigint | null, number | null, number | null>
}

/** A sign-in lock of a sign-in name or client address. */
export interface SignInLocksTable {
  readonly lock_key: string
  readonly locked_until: Millis
}

/**
 * One recorded API call of `waybill_activity` (the account's activity log, kept 30 days).
 * Primary key (at, id): the retention purge deletes a range of it.
 */
export interface ActivityTable {
  /** A ULID made from `at`. */
  readonly id: string
  readonly at: Millis
  readonly customer_no: string
  readonly method: string
  /** The path without its query. */
  readonly path: string
  /** `live`, `test`, or null for a call authenticated without a key. */
  readonly key_mode: string | null
  readonly status: Int
  /** "" when the handler knew no client address. */
  readonly client_ip: string
  readonly request_id: string
}

export interface WaybillDatabase {
  readonly waybill_accounts: AccountsTable
  readonly waybill_api_keys: ApiKeysTable
  readonly waybill_account_links: AccountLinksTable
  readonly waybill_shipments: ShipmentsTable
  readonly waybill_stops: StopsTable
  readonly waybill_pieces: PiecesTable
  readonly waybill_events: EventsTable
  readonly waybill_webhook_endpoints: WebhookEndpointsTable
  readonly waybill_webhook_subscriptions: WebhookSubscriptionsTable
  readonly waybill_webhook_deliveries: WebhookDeliveriesTable
  readonly waybill_webhook_attempts: WebhookAttemptsTable
  readonly waybill_ip_blocks: IpBlocksTable
  readonly waybill_orders: OrdersTable
  readonly waybill_documents: DocumentsTable
  readonly waybill_ticket_grants: TicketGrantsTable
  readonly waybill_rate_counters: RateCountersTable
  readonly waybill_registrations: RegistrationsTable
  readonly waybill_payment_enablements: PaymentEnablementsTable
  readonly waybill_idempotency_keys: IdempotencyKeysTable
  readonly waybill_blobs: BlobsTable
  readonly waybill_blob_chunks: BlobChunksTable
  readonly waybill_key_check: KeyCheckTable
  readonly waybill_users: UsersTable
  readonly waybill_sessions: SessionsTable
  readonly waybill_user_tokens: UserTokensTable
  readonly waybill_sign_in_locks: SignInLocksTable
  readonly waybill_activity: ActivityTable
}

/** The names of Waybill's tables, for hosts that back up, truncate or inspect them. */
export const tableNames: ReadonlyArray<keyof WaybillDatabase> = [
  "waybill_accounts",
  "waybill_api_keys",
  "waybill_account_links",
  "waybill_shipments",
  "waybill_stops",
  "waybill_pieces",
  "waybill_events",
  "waybill_webhook_endpoints",
  "waybill_webhook_subscriptions",
  "waybill_webhook_deliveries",
  "waybill_webhook_attempts",
  "waybill_ip_blocks",
  "waybill_orders",
  "waybill_documents",
  "waybill_rate_counters",
  "waybill_registrations",
  "waybill_payment_enablements",
  "waybill_idempotency_keys",
  "waybill_blobs",
  "waybill_blob_chunks",
  "waybill_key_check",
  "waybill_users",
  "waybill_sessions",
  "waybill_user_tokens",
  "waybill_sign_in_locks",
  "waybill_activity",
  "waybill_ticket_grants"
]
