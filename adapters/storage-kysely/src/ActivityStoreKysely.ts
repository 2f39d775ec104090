/**
 * @module ActivityStoreKysely
 *
 * `ActivityStore` over Kysely: `waybill_activity`, one row per recorded API call. A batch is
 * one multi-row insert in one transaction; lists are keyset pages of an index that starts with
 * the customer number (tenant-scoped by construction); the purge deletes bounded ranges of the
 * primary key (at, id).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sql } from "kysely"
import type { Connection } from "./internal/connection.js"
import { type ActivityEntry, type ActivityStoreShape, Page } from "./internal/core.js"
import { keyset } from "./internal/paging.js"
import type { ActivityTable } from "./Tables.js"

type Row = { readonly [K in keyof ActivityTable]: unknown }

const toEntry = (row: Row): ActivityEntry => ({
  id: String(row.id),
  at: Number(row.at),
  customerNo: String(row.customer_no),
  method: String(row.method),
  path: String(row.path),
  keyMode: row.key_mode === "live" || row.key_mode === "test" ? row.key_mode : null,
  status: Number(row.status),
  clientIp: String(row.client_ip),
  requestId: String(row.request_id)
})

const toRow = (e: ActivityEntry) => ({
  id: e.id,
  at: e.at,
  customer_no: e.customerNo,
  method: e.method,
  path: e.path,
  key_mode: e.keyMode,
  status: e.status,
  client_ip: e.clientIp,
  request_id: e.requestId
})

/**
 * Rows per insert statement: 9 parameters a row keeps a statement under SQLite's 32766 bound
 * parameters (and PostgreSQL's 65535) with room to spare. The recorder's batches are 500.
 */
const ROWS_PER_INSERT = 1000

/** `ActivityStore` over Kysely. */
export const makeActivityStore = (conn: Connection): ActivityStoreShape => {
  const { first, rows, withTransaction, write } = conn
  return {
    // Compiled per batch rather than through `compileInsert`: batch sizes vary from 1 to 500, and
    // each size would take a slot of the insert cache that booking's statements rely on.
    append: (entries) =>
      entries.length === 0
        ? Effect.void
        : withTransaction(
            Effect.gen(function* () {
              for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
                const chunk = entries.slice(i, i + ROWS_PER_INSERT).map(toRow)
                yield* write("activity.append", (c) => c.insertInto("waybill_activity").values(chunk))
              }
            })
          ),

    list: (customerNo, query, page) => {
      const status = query.status
      // An empty range matches nothing: no statement (it would walk the account's whole log).
      if (status !== undefined && status.from >= status.below) return Effect.succeed(Page.sliceOf([], page.limit))
      return rows("activity.list", (c) => {
        let q = c.selectFrom("waybill_activity").selectAll().where("customer_no", "=", customerNo)
        if (query.mode !== undefined) q = q.where("key_mode", "=", query.mode)
        if (status !== undefined) {
          q = q.where("status", ">=", status.from).where("status", "<", status.below)
          // A range within one hundred (every filter: one status, or a class) names its hundred
          // too, so the (.., status / 100, at, id) indexes of 0017 find its rows. `100` stays a
          // literal in the SQL: an expression index matches the expression as written.
          const hundred = Math.floor(status.from / 100)
          if (Math.floor((status.below - 1) / 100) === hundred)
            q = q.where(sql<number>`${sql.ref("status")} / 100`, "=", hundred)
        }
        return keyset(q, ["at", "id"], page)
      }).pipe(Effect.map((found) => Page.sliceOf(found.map(toEntry), page.limit)))
    },

    lastUsed: (customerNo, mode) =>
      first("activity.last-used", (c) =>
        c
          .selectFrom("waybill_activity")
          .select((eb) => eb.fn.max("at").as("at"))
          .where("customer_no", "=", customerNo)
          .where("key_mode", "=", mode)
      ).pipe(
        Effect.map((row) =>
          row === undefined || row.at === null || row.at === undefined ? Option.none() : Option.some(Number(row.at))
        )
      ),

    deleteBefore: (before, limit) =>
      write("activity.delete-before", (c) =>
        c
          .deleteFrom("waybill_activity")
          // A bounded batch: one huge delete would hold SQLite's lock (and the batch) too long.
          .where(({ eb, refTuple, selectFrom }) =>
            eb(
              refTuple("at", "id"),
              "in",
              selectFrom("waybill_activity as a")
                .select(["a.at", "a.id"])
                .where("a.at", "<", before)
                .limit(limit)
                .$asTuple("at", "id")
            )
          )
          .where("at", "<", before)
      )
  }
}
