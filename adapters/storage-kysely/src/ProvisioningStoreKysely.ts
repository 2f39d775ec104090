/**
 * @module ProvisioningStoreKysely
 *
 * `ProvisioningStore` over Kysely: one row per registration in `waybill_registrations`. The
 * machine state is JSON text; the columns looked up by (link hash, validation-key hash,
 * customer number, e-mail) are copied out of it and indexed. `update` is a compare-and-set on
 * `version`, one statement, so concurrent writers of one registration serialise exactly.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Kysely, type Migration, type Selectable, sql } from "kysely"
import type { Connection } from "./internal/connection.js"
import type { ProvisioningStoreShape, RegistrationRecord } from "./internal/core.js"
import type { RegistrationsTable } from "./Tables.js"

/** Migration `0005_provisioning`: the registrations table and its lookup indexes. */
export const provisioningMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_registrations")
      .addColumn("idx", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("email_domain", "text", (c) => c.notNull())
      .addColumn("password_hash", "text", (c) => c.notNull())
      .addColumn("otp_secret_id", "text", (c) => c.notNull())
      .addColumn("stage", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("link_hash", "text")
      .addColumn("validation_key_hash", "text")
      .addColumn("customer_no", "text")
      .addColumn("mail_status", "text", (c) => c.notNull())
      .addColumn("profile", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .execute()
    for (const column of ["link_hash", "validation_key_hash", "customer_no", "email"] as const) {
      await db.schema
        .createIndex(`waybill_registrations_${column}_idx`)
        .on("waybill_registrations")
        .column(column)
        .execute()
    }
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("waybill_registrations").ifExists().execute()
  }
}

const toRow = (r: RegistrationRecord) => ({
  idx: r.idx,
  email: r.email,
  email_domain: r.emailDomain,
  password_hash: r.passwordHash,
  otp_secret_id: r.otpSecretId,
  stage: r.state.stage,
  state: JSON.stringify(r.state),
  link_hash: r.state.linkHash,
  validation_key_hash: r.state.validationKeyHash,
  customer_no: r.state.customerNo,
  mail_status: r.mailStatus,
  profile: JSON.stringify(r.profile),
  created_at: r.createdAt,
  updated_at: r.updatedAt,
  version: r.version
})

const fromRow = (row: Selectable<RegistrationsTable>): RegistrationRecord => ({
  idx: row.idx,
  email: row.email,
  emailDomain: row.email_domain,
  passwordHash: row.password_hash,
  otpSecretId: row.otp_secret_id,
  state: JSON.parse(row.state),
  mailStatus: row.mail_status === "failed" ? "failed" : "sent",
  profile: JSON.parse(row.profile),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  version: Number(row.version)
})

/** `ProvisioningStore` over Kysely. */
export const makeProvisioningStore = (conn: Connection): ProvisioningStoreShape => {
  const { first, write } = conn
  const one = (operation: string, column: "idx" | "link_hash" | "validation_key_hash" | "customer_no", value: string) =>
    first(operation, (c) =>
      c.selectFrom("waybill_registrations").selectAll().where(column, "=", value).orderBy("created_at", "desc").limit(1)
    ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), fromRow)))

  return {
    insert: (record) =>
      write("registrations.insert", (c) => c.insertInto("waybill_registrations").values(toRow(record))).pipe(
        Effect.asVoid
      ),
    find: (idx) => one("registrations.find", "idx", idx),
    findByLinkHash: (hash) => one("registrations.findByLink", "link_hash", hash),
    findByValidationKeyHash: (hash) => one("registrations.findByValidationKey", "validation_key_hash", hash),
    findByCustomerNo: (customerNo) => one("registrations.findByCustomer", "customer_no", customerNo),
    emailHasCustomer: (email) =>
      first("registrations.emailHasCustomer", (c) =>
        c
          .selectFrom("waybill_registrations")
          .select("idx")
          // Addresses are stored as typed; one account per address whatever its case.
          .where(sql<string>`lower(email)`, "=", email.toLowerCase())
          .where("customer_no", "is not", null)
          .limit(1)
      ).pipe(Effect.map((row) => row !== undefined)),
    update: (record) => {
      const { idx: _idx, created_at: _created, ...row } = toRow(record)
      return write("registrations.update", (c) =>
        c
          .updateTable("waybill_registrations")
          .set(row)
          .where("idx", "=", record.idx)
          .where("version", "=", record.version - 1)
      ).pipe(Effect.map((r) => r === 1))
    }
  }
}
