/**
 * @module Migrations
 *
 * Waybill's schema as in-code Kysely migrations. They ship inside the package (no migration
 * folder for the host to copy or a bundler to lose) and run through Kysely's own `Migrator`, so
 * the host gets its locking and bookkeeping; the bookkeeping tables are prefixed `waybill_` too,
 * which lets Waybill share a database with the host's own Kysely migrations without either
 * seeing the other's history.
 *
 * Every statement uses the schema builder and column types both SQLite and PostgreSQL accept;
 * new migrations must keep that rule and must never edit a released one (append a new entry).
 */
import * as Effect from "effect/Effect"
import { StorageError } from "./internal/core.js"
import type { StorageEngine } from "./Engine.js"
import { provisioningMigration } from "./ProvisioningStoreKysely.js"
import { usersMigration } from "./UserStoreKysely.js"
import { type Kysely, type Migration, type MigrationResultSet, Migrator, PostgresAdapter, sql } from "kysely"

/** Kysely's migration history table for Waybill. */
export const migrationTableName = "waybill_migration"

/** Kysely's migration lock table for Waybill. */
export const migrationLockTableName = "waybill_migration_lock"

const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_accounts")
      .addColumn("customer_no", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("cancel_mode", "text", (c) => c.notNull())
      .addColumn("rate_card", "text")
      .addColumn("ip_allowlist", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute()

    await db.schema
      .createTable("waybill_api_keys")
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("id", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("generation", "integer", (c) => c.notNull())
      .addColumn("hash", "text", (c) => c.notNull())
      .addColumn("hint", "text", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_api_keys_pk", ["customer_no", "mode"])
      .execute()
    // Blank slots all hold "": uniqueness applies to real hashes only (a partial index, which
    // SQLite and PostgreSQL both support). It is also the lookup index of every request.
    await db.schema
      .createIndex("waybill_api_keys_hash_uq")
      .on("waybill_api_keys")
      .column("hash")
      .unique()
      .where(sql.ref("hash"), "<>", sql.lit(""))
      .execute()

    await db.schema
      .createTable("waybill_account_links")
      .addColumn("parent_customer_no", "text", (c) => c.notNull())
      .addColumn("child_customer_no", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_account_links_pk", ["parent_customer_no", "child_customer_no"])
      .execute()

    await db.schema
      .createTable("waybill_shipments")
      .addColumn("track_no", "text", (c) => c.primaryKey())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("driver_id", "text")
      .addColumn("contact", "text", (c) => c.notNull())
      .addColumn("phone", "text", (c) => c.notNull())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("billing_reference", "text", (c) => c.notNull())
      .addColumn("service_type", "text", (c) => c.notNull())
      .addColumn("vehicle_type", "text", (c) => c.notNull())
      .addColumn("pieces", "integer", (c) => c.notNull())
      .addColumn("weight_lb", "double precision", (c) => c.notNull())
      .addColumn("signature_required", "integer", (c) => c.notNull())
      .addColumn("liftgate_required", "integer", (c) => c.notNull())
      .addColumn("pickup_instructions", "text", (c) => c.notNull())
      .addColumn("deliver_instructions", "text", (c) => c.notNull())
      .addColumn("ready_at", "bigint", (c) => c.notNull())
      .addColumn("requested_delivery_at", "bigint", (c) => c.notNull())
      .addColumn("estimated_delivery_at", "bigint", (c) => c.notNull())
      .addColumn("guaranteed_delivery_at", "bigint", (c) => c.notNull())
      .addColumn("charge_transport", "double precision", (c) => c.notNull())
      .addColumn("charge_weight", "double precision", (c) => c.notNull())
      .addColumn("charge_stops", "double precision", (c) => c.notNull())
      .addColumn("charge_fuel", "double precision", (c) => c.notNull())
      .addColumn("charge_extras", "double precision", (c) => c.notNull())
      .addColumn("charge_discount", "double precision", (c) => c.notNull())
      .addColumn("charge_total", "double precision", (c) => c.notNull())
      .addColumn("jsonstrn", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute()
    // Order listings and tracking are per customer, newest first.
    await db.schema
      .createIndex("waybill_shipments_customer_idx")
      .on("waybill_shipments")
      .columns(["customer_no", "created_at"])
      .execute()

    // Children reference the shipment; they are always written in the shipment's transaction,
    // so the constraint holds whether or not a SQLite host turns on `foreign_keys`.
    await db.schema
      .createTable("waybill_stops")
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("external_id", "integer")
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("city", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("zip", "text", (c) => c.notNull())
      .addColumn("contact_name", "text", (c) => c.notNull())
      .addColumn("phone", "text", (c) => c.notNull())
      .addColumn("note", "text", (c) => c.notNull())
      .addColumn("latitude", "double precision", (c) => c.notNull())
      .addColumn("longitude", "double precision", (c) => c.notNull())
      .addColumn("time_zone", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("eta_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_stops_pk", ["track_no", "seq"])
      .addForeignKeyConstraint("waybill_stops_shipment_fk", ["track_no"], "waybill_shipments", ["track_no"], (fk) =>
        fk.onDelete("cascade")
      )
      .execute()

    await db.schema
      .createTable("waybill_legs")
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("from_stop", "integer", (c) => c.notNull())
      .addColumn("to_stop", "integer", (c) => c.notNull())
      .addColumn("miles", "double precision", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_legs_pk", ["track_no", "seq"])
      .addForeignKeyConstraint("waybill_legs_shipment_fk", ["track_no"], "waybill_shipments", ["track_no"], (fk) =>
        fk.onDelete("cascade")
      )
      .execute()

    await db.schema
      .createTable("waybill_pieces")
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("piece_no", "text", (c) => c.notNull())
      .addColumn("weight", "text", (c) => c.notNull())
      .addColumn("length", "text", (c) => c.notNull())
      .addColumn("width", "text", (c) => c.notNull())
      .addColumn("height", "text", (c) => c.notNull())
      .addColumn("pc", "text", (c) => c.notNull())
      .addColumn("source_id", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_pieces_pk", ["track_no", "seq"])
      .addForeignKeyConstraint("waybill_pieces_shipment_fk", ["track_no"], "waybill_shipments", ["track_no"], (fk) =>
        fk.onDelete("cascade")
      )
      .execute()

    // No foreign key to shipments: `webhook.test` and future document events need not have one.
    await db.schema
      .createTable("waybill_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("sequence", "integer", (c) => c.notNull())
      .addColumn("livemode", "integer", (c) => c.notNull())
      .addColumn("occurred_at", "bigint", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addUniqueConstraint("waybill_events_track_seq_uq", ["track_no", "sequence"])
      .execute()
    // The webhook dispatcher scans by time; account-wide event listings go by customer.
    await db.schema.createIndex("waybill_events_occurred_idx").on("waybill_events").column("occurred_at").execute()
    await db.schema
      .createIndex("waybill_events_customer_idx")
      .on("waybill_events")
      .columns(["customer_no", "occurred_at"])
      .execute()
  },

  async down(db: Kysely<any>) {
    for (const table of [
      "waybill_events",
      "waybill_pieces",
      "waybill_legs",
      "waybill_stops",
      "waybill_shipments",
      "waybill_account_links",
      "waybill_api_keys",
      "waybill_accounts"
    ]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}

const ipBlocks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_ip_blocks")
      .addColumn("ip_key", "text", (c) => c.primaryKey())
      .addColumn("until", "bigint", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("strikes", "integer", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("waybill_ip_blocks_until_idx").on("waybill_ip_blocks").column("until").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_ip_blocks").ifExists().execute()
  }
}

const documents: Migration = {
  async up(db: Kysely<any>) {
    // Lazily created: an order without a row is at version 1 with no invoice number.
    await db.schema
      .createTable("waybill_orders")
      .addColumn("track_no", "text", (c) => c.primaryKey())
      .addColumn("current_version", "integer", (c) => c.notNull())
      .addColumn("invoice_no", "text", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("waybill_orders_invoice_idx").on("waybill_orders").column("invoice_no").execute()
    // Customer reference lookups (documents metadata).
    await db.schema
      .createIndex("waybill_shipments_reference_idx")
      .on("waybill_shipments")
      .column("billing_reference")
      .execute()
    await db.schema
      .createTable("waybill_documents")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("order_version", "integer", (c) => c.notNull())
      .addColumn("batch", "integer", (c) => c.notNull())
      .addColumn("page", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("source_id", "text", (c) => c.notNull())
      .addColumn("content_type", "text", (c) => c.notNull())
      .addColumn("rotation", "integer", (c) => c.notNull())
      .addColumn("blob_key", "text", (c) => c.notNull())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("hidden", "integer", (c) => c.notNull())
      .addColumn("removed", "integer", (c) => c.notNull())
      .addColumn("captured_at", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addForeignKeyConstraint("waybill_documents_shipment_fk", ["track_no"], "waybill_shipments", ["track_no"])
      .execute()
    // Every read is per order: the current version's attachments and the signatures.
    await db.schema
      .createIndex("waybill_documents_order_idx")
      .on("waybill_documents")
      .columns(["track_no", "order_version"])
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_documents").ifExists().execute()
    await db.schema.dropIndex("waybill_shipments_reference_idx").ifExists().execute()
    await db.schema.dropTable("waybill_orders").ifExists().execute()
  }
}

const abuse: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_rate_counters")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("window_start", "bigint", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute()
    // Pruning deletes by window end.
    await db.schema
      .createIndex("waybill_rate_counters_expires_idx")
      .on("waybill_rate_counters")
      .column("expires_at")
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_rate_counters").ifExists().execute()
  }
}

const webhooks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("event_types", "text", (c) => c.notNull())
      .addColumn("secret", "text", (c) => c.notNull())
      .addColumn("previous_secret", "text")
      .addColumn("previous_secret_until", "bigint")
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("failing_since", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("waybill_webhook_endpoints_customer_idx")
      .on("waybill_webhook_endpoints")
      .column("customer_no")
      .execute()
    // Every appended event looks up its receivers here, by the primary key's prefix.
    await db.schema
      .createTable("waybill_webhook_subscriptions")
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_webhook_subscriptions_pk", ["customer_no", "event_type", "endpoint_id"])
      .execute()
    await db.schema
      .createTable("waybill_webhook_deliveries")
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("sequence", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "bigint", (c) => c.notNull())
      .addColumn("last_status", "integer")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_webhook_deliveries_pk", ["endpoint_id", "event_id"])
      .execute()
    // The dispatcher's scan for due work, and its per-shipment ordering check.
    await db.schema
      .createIndex("waybill_webhook_deliveries_due_idx")
      .on("waybill_webhook_deliveries")
      .columns(["status", "next_attempt_at"])
      .execute()
    await db.schema
      .createIndex("waybill_webhook_deliveries_order_idx")
      .on("waybill_webhook_deliveries")
      .columns(["endpoint_id", "track_no", "sequence"])
      .execute()
    await db.schema
      .createIndex("waybill_webhook_deliveries_event_idx")
      .on("waybill_webhook_deliveries")
      .column("event_id")
      .execute()
    await db.schema
      .createTable("waybill_webhook_attempts")
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("attempt", "integer", (c) => c.notNull())
      .addColumn("at", "bigint", (c) => c.notNull())
      .addColumn("status", "integer")
      .addColumn("ok", "integer", (c) => c.notNull())
      .addColumn("duration_ms", "integer", (c) => c.notNull())
      .addColumn("response", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("waybill_webhook_attempts_endpoint_idx")
      .on("waybill_webhook_attempts")
      .columns(["endpoint_id", "at"])
      .execute()
  },

  async down(db: Kysely<any>) {
    for (const table of [
      "waybill_webhook_attempts",
      "waybill_webhook_deliveries",
      "waybill_webhook_subscriptions",
      "waybill_webhook_endpoints"
    ]) {
      await db.schema.dropTable(table).execute()
    }
  }
}

/**
 * Every booking writes one row to `waybill_events`, and each index on it is one more B-tree page
 * to write per commit. Nothing reads events by time alone: the dispatcher works from
 * `waybill_webhook_deliveries`, and `recover` goes by customer and time (`waybill_events_customer_idx`).
 */
const leanerEvents: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_events_occurred_idx").ifExists().execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.createIndex("waybill_events_occurred_idx").on("waybill_events").column("occurred_at").execute()
  }
}

/** Operator-recorded payment enablements: one row per customer and payment provider. */
const paymentEnablements: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_payment_enablements")
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      .addColumn("enabled_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_payment_enablements_pk", ["customer_no", "provider"])
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_payment_enablements").ifExists().execute()
  }
}

/**
 * What a booking commit writes, made smaller (12 B-trees per booking before, 9 after):
 *
 * - Legs move onto the stops they arrive at (`leg_seq`, `leg_from`, `leg_miles` on
 *   `waybill_stops`), and `waybill_legs` goes: legs were only ever read with their stops, and
 *   their table cost a statement and two B-trees (table and primary key) per booking. Existing
 *   legs are copied; the migration refuses (before changing anything) when a leg arrives at no
 *   stop or two legs at one stop, which Waybill never writes.
 * - `waybill_shipments` had an index on (`customer_no`, `created_at`), which no query orders by,
 *   and one on `billing_reference` alone, which the documents lookup by customer reference always
 *   narrows by customer. One index on (`customer_no`, `billing_reference`) serves both lookups
 *   (the customer's shipments, and a reference within them) and tenant-scopes the second.
 */
const leanerBooking: Migration = {
  async up(db: Kysely<any>) {
    // Checked before anything changes (SQLite runs DDL outside the migration's transaction).
    const stray = await sql<{ readonly n: unknown }>`select count(*) as n from waybill_legs l
      where not exists (select 1 from waybill_stops s where s.track_no = l.track_no and s.seq = l.to_stop)
         or exists (select 1 from waybill_legs o where o.track_no = l.track_no and o.to_stop = l.to_stop and o.seq <> l.seq)`.execute(
      db
    )
    const n = Number(stray.rows[0]?.n ?? 0)
    if (n > 0) {
      throw new Error(
        `waybill migration 0008: ${n} legs do not arrive at a stop of their own (no such stop, or two legs at one); nothing was changed`
      )
    }
    await db.schema.alterTable("waybill_stops").addColumn("leg_seq", "integer").execute()
    await db.schema.alterTable("waybill_stops").addColumn("leg_from", "integer").execute()
    await db.schema.alterTable("waybill_stops").addColumn("leg_miles", "double precision").execute()
    const leg = (column: string) =>
      sql`(select ${sql.ref(`l.${column}`)} from waybill_legs l where l.track_no = waybill_stops.track_no and l.to_stop = waybill_stops.seq)`
    await sql`update waybill_stops set leg_seq = ${leg("seq")}, leg_from = ${leg("from_stop")}, leg_miles = ${leg("miles")}`.execute(
      db
    )
    await db.schema.dropTable("waybill_legs").execute()
    await db.schema.dropIndex("waybill_shipments_customer_idx").ifExists().execute()
    await db.schema.dropIndex("waybill_shipments_reference_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_shipments_customer_reference_idx")
      .on("waybill_shipments")
      .columns(["customer_no", "billing_reference"])
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_shipments_customer_reference_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_shipments_customer_idx")
      .on("waybill_shipments")
      .columns(["customer_no", "created_at"])
      .execute()
    await db.schema
      .createIndex("waybill_shipments_reference_idx")
      .on("waybill_shipments")
      .column("billing_reference")
      .execute()
    await db.schema
      .createTable("waybill_legs")
      .addColumn("track_no", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("from_stop", "integer", (c) => c.notNull())
      .addColumn("to_stop", "integer", (c) => c.notNull())
      .addColumn("miles", "double precision", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_legs_pk", ["track_no", "seq"])
      .addForeignKeyConstraint("waybill_legs_shipment_fk", ["track_no"], "waybill_shipments", ["track_no"], (cb) =>
        cb.onDelete("cascade")
      )
      .execute()
    await sql`insert into waybill_legs (track_no, seq, from_stop, to_stop, miles)
      select track_no, leg_seq, leg_from, seq, leg_miles from waybill_stops where leg_seq is not null`.execute(db)
    for (const column of ["leg_seq", "leg_from", "leg_miles"]) {
      await db.schema.alterTable("waybill_stops").dropColumn(column).execute()
    }
  }
}

/**
 * `emailHasCustomer` (one account per address, whatever its case) compares `lower(email)`, which
 * the plain index on `email` cannot serve (EXPLAIN QUERY PLAN: a scan of every registration). An
 * index on the expression can, on SQLite and PostgreSQL alike.
 */
const registrationEmail: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_registrations_email_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_registrations_email_lower_idx")
      .on("waybill_registrations")
      .expression(sql`lower(email)`)
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_registrations_email_lower_idx").ifExists().execute()
    await db.schema.createIndex("waybill_registrations_email_idx").on("waybill_registrations").column("email").execute()
  }
}

/**
 * `Idempotency-Key` records: one per account, key mode and key. The primary key is what makes a
 * claim atomic (two hosts inserting one key: one insert wins). The index on `expires_at` serves
 * the periodic cleanup.
 */
const idempotency: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_idempotency_keys")
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("idem_key", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("token", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("locked_until", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addColumn("status", "integer")
      .addColumn("headers", "text")
      .addColumn("body", "text")
      .addPrimaryKeyConstraint("waybill_idempotency_keys_pk", ["customer_no", "mode", "idem_key"])
      .execute()
    await db.schema
      .createIndex("waybill_idempotency_keys_expires")
      .on("waybill_idempotency_keys")
      .column("expires_at")
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_idempotency_keys").ifExists().execute()
  }
}

/**
 * Document files in the database (`@waybill/blob-pg`, the default BlobStore on PostgreSQL) and
 * the master-secret check every host of a fleet verifies at start. The tables are made on SQLite
 * too, where they stay empty unless a host chooses to keep blobs there: one schema on both
 * dialects keeps `tableNames` and backups alike. `bytea` is PostgreSQL's byte type; SQLite
 * accepts the name and stores the bytes as a BLOB.
 */
const blobsAndKeyCheck: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_blobs")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("blob_id", "text", (c) => c.notNull().unique())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("chunks", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute()
    await db.schema
      .createTable("waybill_blob_chunks")
      .addColumn("blob_id", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("data", "bytea", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_blob_chunks_pk", ["blob_id", "seq"])
      .execute()
    await db.schema
      .createTable("waybill_key_check")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("mac", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_key_check").ifExists().execute()
    await db.schema.dropTable("waybill_blob_chunks").ifExists().execute()
    await db.schema.dropTable("waybill_blobs").ifExists().execute()
  }
}

/**
 * The indexes the paged lists read (`internal/paging.ts`): each keyset, `(key) < (cursor)`
 * newest first within one endpoint or one account, is one backward range of an index that
 * ends in the key's columns. Each replaces the index that held the same filter without the
 * key (whose lookups the new one serves by its prefix), so writes pay for no extra index.
 * IP blocks and the unfiltered endpoint list stay small enough to sort per page.
 */
const pagingIndexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("waybill_webhook_deliveries_list_idx")
      .on("waybill_webhook_deliveries")
      .columns(["endpoint_id", "created_at", "event_id"])
      .execute()
    await db.schema
      .createIndex("waybill_webhook_attempts_list_idx")
      .on("waybill_webhook_attempts")
      .columns(["endpoint_id", "at", "event_id", "attempt"])
      .execute()
    await db.schema.dropIndex("waybill_webhook_attempts_endpoint_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_webhook_endpoints_list_idx")
      .on("waybill_webhook_endpoints")
      .columns(["customer_no", "created_at", "id"])
      .execute()
    await db.schema.dropIndex("waybill_webhook_endpoints_customer_idx").ifExists().execute()
  },
  async down(db: Kysely<any>) {
    await db.schema
      .createIndex("waybill_webhook_endpoints_customer_idx")
      .on("waybill_webhook_endpoints")
      .column("customer_no")
      .execute()
    await db.schema.dropIndex("waybill_webhook_endpoints_list_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_webhook_attempts_endpoint_idx")
      .on("waybill_webhook_attempts")
      .columns(["endpoint_id", "at"])
      .execute()
    await db.schema.dropIndex("waybill_webhook_attempts_list_idx").ifExists().execute()
    await db.schema.dropIndex("waybill_webhook_deliveries_list_idx").ifExists().execute()
  }
}

/**
 * The account's shipment list and its search (`ShipmentStore.search`, the portal's Shipments
 * page): newest first within one account is one backward range of `(customer_no, created_at,
 * track_no)`; a customer reference is matched case-insensitively through `(customer_no,
 * lower(billing_reference))`, which replaces `(customer_no, billing_reference)` (the documents
 * lookup compares `lower()` first, then the exact value), so a booking writes one index more,
 * not two; an invoice number through `lower(invoice_no)` (orders are written when an invoice is
 * set, never by a booking).
 */
const shipmentSearch: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("waybill_shipments_customer_created_idx")
      .on("waybill_shipments")
      .columns(["customer_no", "created_at", "track_no"])
      .execute()
    await sql`create index waybill_shipments_customer_reference_lower_idx on waybill_shipments (customer_no, lower(billing_reference))`.execute(
      db
    )
    await db.schema.dropIndex("waybill_shipments_customer_reference_idx").ifExists().execute()
    await sql`create index waybill_orders_invoice_lower_idx on waybill_orders (lower(invoice_no))`.execute(db)
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_orders_invoice_lower_idx").ifExists().execute()
    await db.schema
      .createIndex("waybill_shipments_customer_reference_idx")
      .on("waybill_shipments")
      .columns(["customer_no", "billing_reference"])
      .execute()
    await db.schema.dropIndex("waybill_shipments_customer_reference_lower_idx").ifExists().execute()
    await db.schema.dropIndex("waybill_shipments_customer_created_idx").ifExists().execute()
  }
}

/**
 * The account's activity log and what the portal shows of a key slot.
 *
 * - `waybill_activity`: one row per authenticated API call, written in batches (one multi-row
 *   insert per batch, never on a request's path), kept 30 days. The primary key (at, id) is
 *   the range the hourly purge deletes (`at < cutoff`), so the purge needs no index of its own;
 *   (customer_no, at, id) serves the account's list newest first, and (customer_no, key_mode,
 *   at, id) the list filtered by key mode and a key's last use (`max(at)`, read backwards from
 *   the end of one mode's range). A status filter is checked on the rows of those ranges.
 * - `waybill_api_keys` gains `last4` and `created_at` of the current key, written when a key
 *   is made or rotated. Keys made before stay null: the characters cannot be recovered from
 *   an HMAC, and a creation time guessed from `updated_at` could be a later status change.
 */
const activity: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_activity")
      .addColumn("id", "text", (c) => c.notNull())
      .addColumn("at", "bigint", (c) => c.notNull())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("method", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("key_mode", "text")
      .addColumn("status", "integer", (c) => c.notNull())
      .addColumn("client_ip", "text", (c) => c.notNull())
      .addColumn("request_id", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("waybill_activity_pk", ["at", "id"])
      .execute()
    await db.schema
      .createIndex("waybill_activity_customer_idx")
      .on("waybill_activity")
      .columns(["customer_no", "at", "id"])
      .execute()
    await db.schema
      .createIndex("waybill_activity_customer_mode_idx")
      .on("waybill_activity")
      .columns(["customer_no", "key_mode", "at", "id"])
      .execute()
    await db.schema.alterTable("waybill_api_keys").addColumn("last4", "text").execute()
    await db.schema.alterTable("waybill_api_keys").addColumn("created_at", "bigint").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("waybill_api_keys").dropColumn("created_at").execute()
    await db.schema.alterTable("waybill_api_keys").dropColumn("last4").execute()
    await db.schema.dropTable("waybill_activity").ifExists().execute()
  }
}

/**
 * The activity log filtered by status (the portal's Activity page): a status filter is one HTTP
 * status or one class (`4xx`), so it names one hundred, `status / 100`. Checked on the rows of
 * the account's whole range (0015), a rare status (a 503, or any 5xx) walked the account's log,
 * 50 ms on 300,000 rows; these indexes find that hundred's rows newest first, with or without a
 * key mode (without the second, a mode and a status together would pick the first and walk
 * the other mode's rows). Written with the batched activity inserts, never on a request's path.
 */
const activityStatus: Migration = {
  async up(db: Kysely<any>) {
    await sql`create index waybill_activity_customer_class_idx on waybill_activity (customer_no, (status / 100), at, id)`.execute(
      db
    )
    await sql`create index waybill_activity_customer_mode_class_idx on waybill_activity (customer_no, key_mode, (status / 100), at, id)`.execute(
      db
    )
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_activity_customer_mode_class_idx").ifExists().execute()
    await db.schema.dropIndex("waybill_activity_customer_class_idx").ifExists().execute()
  }
}

/**
 * The claim's order check asks whether a shipment has an earlier *pending* delivery; the index
 * over every delivery made it step over the shipment's sent ones, a table read each, so a scan
 * cost grew with how far each shipment in flight had got (230 us a scan in the webhook drain
 * bench). Holding the pending rows alone answers the check with one seek, and the index stays
 * the size of the backlog instead of growing with the history.
 */
const pendingOrder: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_webhook_deliveries_order_idx").execute()
    await sql`create index waybill_webhook_deliveries_order_idx on waybill_webhook_deliveries (endpoint_id, track_no, sequence) where status = 'pending'`.execute(
      db
    )
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_webhook_deliveries_order_idx").execute()
    await db.schema
      .createIndex("waybill_webhook_deliveries_order_idx")
      .on("waybill_webhook_deliveries")
      .columns(["endpoint_id", "track_no", "sequence"])
      .execute()
  }
}

/**
 * Each pending delivery says whether a claim may take it (`claimable`): it is its shipment's
 * first pending delivery to its endpoint, and the endpoint is enabled. The claim walks an index
 * of those alone. It used to walk every pending delivery in due order and skip the rest one by
 * one: a shipment's later deliveries (200 us a scan with 10 events a shipment, more the deeper
 * the backlog) and a disabled endpoint's whole backlog (8 ms a scan for 60,000 deliveries).
 */
const claimableDeliveries: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("waybill_webhook_deliveries")
      // 1 by default: a host of the previous release, which knows nothing of the column, queues
      // deliveries a claim can see (the claim still checks the order), never ones it cannot.
      .addColumn("claimable", "integer", (c) => c.notNull().defaultTo(1))
      .execute()
    await sql`update waybill_webhook_deliveries set claimable = case when exists (select 1 from waybill_webhook_deliveries p where p.endpoint_id = waybill_webhook_deliveries.endpoint_id and p.track_no = waybill_webhook_deliveries.track_no and p.status = 'pending' and p.sequence < waybill_webhook_deliveries.sequence) then 0 when exists (select 1 from waybill_webhook_endpoints e where e.id = waybill_webhook_deliveries.endpoint_id and e.enabled = 1) then 1 else 0 end where status = 'pending'`.execute(
      db
    )
    await sql`create index if not exists waybill_webhook_deliveries_claimable_idx on waybill_webhook_deliveries (next_attempt_at) where status = 'pending' and claimable = 1`.execute(
      db
    )
    // The due index over every row would win the claim's plan (an equality on its first column)
    // and walk the rest again; what it still served, the prune of finished rows, has an index of
    // finished rows instead. That one may be large: an operator can build it beforehand with
    // `create index concurrently` (docs/deploying.md), hence `if not exists`.
    await sql`create index if not exists waybill_webhook_deliveries_done_idx on waybill_webhook_deliveries (next_attempt_at) where status <> 'pending'`.execute(
      db
    )
    await db.schema.dropIndex("waybill_webhook_deliveries_due_idx").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("waybill_webhook_deliveries_done_idx").execute()
    await db.schema
      .createIndex("waybill_webhook_deliveries_due_idx")
      .on("waybill_webhook_deliveries")
      .columns(["status", "next_attempt_at"])
      .execute()
    await db.schema.dropIndex("waybill_webhook_deliveries_claimable_idx").execute()
    await db.schema.alterTable("waybill_webhook_deliveries").dropColumn("claimable").execute()
  }
}

/**
 * Download grants (`DocumentStore.insertGrant`): one row per documents lookup, read by primary key
 * on every download, deleted once expired by a range of that key (its first digits are the
 * expiry second), so the table needs no other index.
 */
const ticketGrants: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_ticket_grants")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("key_mode", "text", (c) => c.notNull())
      .addColumn("key_generation", "integer", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addColumn("documents", "text", (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_ticket_grants").ifExists().execute()
  }
}

/**
 * Every migration, by name. Names sort in application order; Kysely refuses to run when the
 * database has applied a name this list lacks, which catches a downgraded library early.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  "0001_initial": initial,
  "0002_ip_blocks": ipBlocks,
  "0006_webhooks": webhooks,
  "0003_documents": documents,
  "0004_abuse": abuse,
  "0005_provisioning": provisioningMigration,
  "0007_leaner_events": leanerEvents,
  "0008_leaner_booking": leanerBooking,
  "0009_registration_email": registrationEmail,
  "0010_payment_enablements": paymentEnablements,
  "0011_idempotency": idempotency,
  "0012_blobs_and_key_check": blobsAndKeyCheck,
  "0013_paging_indexes": pagingIndexes,
  "0014_users": usersMigration,
  "0016_shipment_search": shipmentSearch,
  "0015_activity": activity,
  "0017_activity_status": activityStatus,
  "0018_webhook_pending_order": pendingOrder,
  "0019_webhook_claimable": claimableDeliveries,
  "0020_ticket_grants": ticketGrants
}

/**
 * The schema Waybill's tables go to on PostgreSQL: the connection's `current_schema()` (the
 * first schema of its `search_path` that exists), `undefined` elsewhere.
 *
 * Kysely's `Migrator` looks for its bookkeeping tables by name in every schema it can see
 * unless it is given one: without this, a `waybill_migration` table in any other schema (another
 * tenant's, a test's, a copy) would make it skip creating ours and then fail on the missing table.
 */
const migrationSchema = async (db: Kysely<any>): Promise<string | undefined> => {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined
  const { rows } = await sql<{ readonly schema: string | null }>`select current_schema() as schema`.execute(db)
  const schema = rows[0]?.schema ?? null
  if (schema === null) {
    throw new Error("waybill migrations: no schema of the search_path exists (current_schema() is null)")
  }
  return schema
}

const migrator = async (db: Kysely<any>): Promise<Migrator> => {
  const schema = await migrationSchema(db)
  return new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve({ ...migrations }) },
    migrationTableName,
    migrationLockTableName,
    ...(schema === undefined ? {} : { migrationTableSchema: schema })
  })
}

/**
 * Brings the database to the latest schema, for hosts without Effect at their entry point
 * (a CLI, a deploy hook). Rejects with the migration's own error; applying is idempotent.
 * Runs through the engine's own Kysely (`engine.kysely`), so on SQLite it waits for any open
 * batch to commit and holds the connection while it runs.
 *
 * On PostgreSQL the whole run, including the creation of Kysely's bookkeeping tables (which
 * Kysely does before it takes its own lock, and which two hosts starting together can race on),
 * holds a session advisory lock keyed by the schema, on one pinned connection: a second host
 * waits, then finds nothing left to do. One connection is enough, so a pool of size 1 works.
 */
export const migrateToLatest = async (engine: StorageEngine): Promise<MigrationResultSet> => {
  const result =
    engine.dialect === "postgres"
      ? await engine.kysely.connection().execute(async (db) => {
          const lockKey = sql`hashtextextended('waybill_migrate:' || coalesce(current_schema(), ''), 0)`
          await sql`select pg_advisory_lock(${lockKey})`.execute(db)
          try {
            return await (await migrator(db)).migrateToLatest()
          } finally {
            await sql`select pg_advisory_unlock(${lockKey})`.execute(db)
          }
        })
      : await (await migrator(engine.kysely)).migrateToLatest()
  if (result.error !== undefined) throw result.error
  return result
}

/** What readiness asks of a database: can it be reached, and is every migration applied? */
export interface Health {
  readonly reachable: boolean
  readonly migrated: boolean
}

/**
 * `engine`'s {@link Health}: `reachable` when a trivial query answers, `migrated` when every
 * migration of this library version is recorded as applied. Never rejects: a failure to reach
 * the database is the answer `reachable: false`.
 */
export const health = async (engine: StorageEngine): Promise<Health> => {
  try {
    await sql`select 1`.execute(engine.kysely)
  } catch {
    return { reachable: false, migrated: false }
  }
  try {
    const known = await (await migrator(engine.kysely)).getMigrations()
    return { reachable: true, migrated: known.every((m) => m.executedAt !== undefined) }
  } catch {
    return { reachable: true, migrated: false }
  }
}

/** {@link migrateToLatest} as an Effect: run it before providing `StorageKysely.layer`. */
export const migrate = (engine: StorageEngine): Effect.Effect<void, StorageError> =>
  Effect.tryPromise({
    try: () => migrateToLatest(engine),
    catch: (cause) => new StorageError({ operation: "migrate", cause })
  }).pipe(Effect.asVoid)
