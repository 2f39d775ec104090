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

/** One stop of a shipment's route; primary key (track_no, seq). */
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
}

/** One leg between consecutive stops; primary key (track_no, seq). */
export interface LegsTable {
  readonly track_no: string
  readonly seq: Int
  readonly from_stop: Int
  readonly to_stop: Int
  readonly miles: Real
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

export interface WaybillDatabase {
  readonly waybill_accounts: AccountsTable
  readonly waybill_api_keys: ApiKeysTable
  readonly waybill_account_links: AccountLinksTable
  readonly waybill_shipments: ShipmentsTable
  readonly waybill_stops: StopsTable
  readonly waybill_legs: LegsTable
  readonly waybill_pieces: PiecesTable
  readonly waybill_events: EventsTable
  readonly waybill_ip_blocks: IpBlocksTable
}

/** The names of Waybill's tables, for hosts that back up, truncate or inspect them. */
export const tableNames: ReadonlyArray<keyof WaybillDatabase> = [
  "waybill_accounts",
  "waybill_api_keys",
  "waybill_account_links",
  "waybill_shipments",
  "waybill_stops",
  "waybill_legs",
  "waybill_pieces",
  "waybill_events",
  "waybill_ip_blocks"
]
