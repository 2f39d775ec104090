/**
 * @module AccountStoreKysely
 *
 * `AccountStore` over Kysely: customers, key slots (hashes only) and account links.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sql } from "kysely"
import { type Connection, mapResult } from "./internal/connection.js"
import * as Rows from "./internal/rows.js"
import { type AccountStoreShape } from "./internal/core.js"

/** `AccountStore` over Kysely: customers, key slots (hashes only) and account links. */
export const makeAccountStore = (conn: Connection): AccountStoreShape => {
  const { execute, first, prepare, rows, write, writeUnique } = conn
  /** A key row with its account's columns (prefixed `account_`). */
  const keysWithAccounts = (c: Connection["db"]) =>
    c
      .selectFrom("waybill_api_keys as k")
      .innerJoin("waybill_accounts as a", "a.customer_no", "k.customer_no")
      .selectAll("k")
      .select([
        "a.name as account_name",
        "a.cancel_mode as account_cancel_mode",
        "a.rate_card as account_rate_card",
        "a.ip_allowlist as account_ip_allowlist",
        "a.created_at as account_created_at"
      ])
  type AccountRow = Parameters<typeof Rows.toAccount>[0]
  type KeyWithAccountRow = Parameters<typeof Rows.toKey>[0] & {
    readonly account_name: AccountRow["name"]
    readonly account_cancel_mode: AccountRow["cancel_mode"]
    readonly account_rate_card: AccountRow["rate_card"]
    readonly account_ip_allowlist: AccountRow["ip_allowlist"]
    readonly account_created_at: AccountRow["created_at"]
  }
  const toKeyWithAccount = (r: KeyWithAccountRow) => ({
    key: Rows.toKey(r),
    account: Rows.toAccount({
      customer_no: r.customer_no,
      name: r.account_name,
      cancel_mode: r.account_cancel_mode,
      rate_card: r.account_rate_card,
      ip_allowlist: r.account_ip_allowlist,
      created_at: r.account_created_at
    })
  })
  const keyWithAccountSql = prepare((c, p: { readonly hash: string }) =>
    keysWithAccounts(c).where("k.hash", "=", p.hash).where(sql.ref("k.hash"), "<>", sql.lit(""))
  )
  const slotWithAccountSql = prepare((c, p: { readonly customerNo: string; readonly mode: string }) =>
    keysWithAccounts(c).where("k.customer_no", "=", p.customerNo).where("k.mode", "=", p.mode)
  )

  const accounts: AccountStoreShape = {
    insertAccount: (account) =>
      writeUnique("accounts.insert", "customer_no", (c) =>
        c.insertInto("waybill_accounts").values(Rows.accountRow(account))
      ).pipe(Effect.asVoid),

    findAccount: (customerNo) =>
      first("accounts.select", (c) =>
        c.selectFrom("waybill_accounts").selectAll().where("customer_no", "=", customerNo)
      ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toAccount))),

    // Writes every field but the key; a missing account changes nothing (callers look it up first).
    updateAccount: (account) => {
      const { customer_no, ...fields } = Rows.accountRow(account)
      return write("accounts.update", (c) =>
        c.updateTable("waybill_accounts").set(fields).where("customer_no", "=", customer_no)
      ).pipe(Effect.asVoid)
    },

    // Upsert on the (customer_no, mode) slot. A hash taken by another slot violates the
    // partial unique index instead, which ON CONFLICT does not absorb: that is DuplicateKey.
    putKey: (key) => {
      const row = Rows.keyRow(key)
      const slot = {
        id: row.id,
        status: row.status,
        generation: row.generation,
        hash: row.hash,
        hint: row.hint,
        last4: row.last4,
        created_at: row.created_at,
        updated_at: row.updated_at
      }
      return writeUnique("api_keys.put", "key", (c) =>
        c
          .insertInto("waybill_api_keys")
          .values(row)
          .onConflict((oc) => oc.columns(["customer_no", "mode"]).doUpdateSet(slot))
      ).pipe(Effect.asVoid)
    },

    // The literal `hash <> ''` repeats the partial index's predicate so both SQLite and
    // PostgreSQL can prove the index applies (a bound parameter would not let them).
    findKeyByHash: (hash) =>
      hash === ""
        ? Effect.succeed(Option.none())
        : first("api_keys.select-by-hash", (c) =>
            c
              .selectFrom("waybill_api_keys")
              .selectAll()
              .where("hash", "=", hash)
              .where(sql.ref("hash"), "<>", sql.lit(""))
          ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toKey))),

    // Runs on every keyed request: a prepared statement (synchronous on SQLite).
    findKeyWithAccount: (hash) =>
      hash === ""
        ? Effect.succeed(Option.none())
        : mapResult(execute("api_keys.select-with-account", keyWithAccountSql({ hash })), (result) =>
            Option.map(Option.fromNullable(result.rows[0]), toKeyWithAccount)
          ),

    findSlotWithAccount: (customerNo, mode) =>
      execute("api_keys.select-slot-with-account", slotWithAccountSql({ customerNo, mode })).pipe(
        Effect.map((result) => Option.map(Option.fromNullable(result.rows[0]), toKeyWithAccount))
      ),

    findKey: (customerNo, mode) =>
      first("api_keys.select", (c) =>
        c.selectFrom("waybill_api_keys").selectAll().where("customer_no", "=", customerNo).where("mode", "=", mode)
      ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), Rows.toKey))),

    listKeys: (customerNo) =>
      rows("api_keys.list", (c) =>
        c.selectFrom("waybill_api_keys").selectAll().where("customer_no", "=", customerNo).orderBy("mode")
      ).pipe(Effect.map((rows) => rows.map(Rows.toKey))),

    linkAccount: (parent, child) =>
      write("account_links.insert", (c) =>
        c
          .insertInto("waybill_account_links")
          .values({ parent_customer_no: parent, child_customer_no: child })
          .onConflict((oc) => oc.columns(["parent_customer_no", "child_customer_no"]).doNothing())
      ).pipe(Effect.asVoid),

    unlinkAccount: (parent, child) =>
      write("account_links.delete", (c) =>
        c
          .deleteFrom("waybill_account_links")
          .where("parent_customer_no", "=", parent)
          .where("child_customer_no", "=", child)
      ).pipe(Effect.asVoid),

    linkedChildren: (parent) =>
      rows("account_links.select", (c) =>
        c
          .selectFrom("waybill_account_links")
          .select("child_customer_no")
          .where("parent_customer_no", "=", parent)
          .orderBy("child_customer_no")
      ).pipe(Effect.map((rows) => rows.map((r) => r.child_customer_no)))
  }

  return accounts
}
