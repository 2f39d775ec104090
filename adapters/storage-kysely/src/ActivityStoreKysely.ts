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
import type { Connection, Statement } from "./internal/connection.js"
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
 * Rows per insert statement, at most. A batch of any size is written as inserts of 64 rows and
 * the rest as inserts of 32, 16, ... 1 rows (its binary digits), so at most seven statement
 * texts ever exist, each compiled and prepared once, instead of one text per batch size compiled
 * and prepared on every write.
 */
const ROWS_PER_INSERT = 64

/** `ActivityStore` over Kysely. */
export const makeActivityStore = (conn: Connection): ActivityStoreShape => {
  const { batch, compileInsert, first, rows, write } = conn
  return {
    // One batch: on SQLite it joins the next group commit beside the bookings.
    append: (entries) => {
      if (entries.length === 0) return Effect.void
      const statements: Array<Statement> = []
      const insert = (from: number, size: number) =>
        statements.push(compileInsert("waybill_activity", entries.slice(from, from + size).map(toRow)))
      let at = 0
      for (; entries.length - at >= ROWS_PER_INSERT; at += ROWS_PER_INSERT) insert(at, ROWS_PER_INSERT)
      for (let size = ROWS_PER_INSERT >> 1; size >= 1; size >>= 1) {
        if (entries.length - at >= size) {
          insert(at, size)
          at += size
        }
      }
      return Effect.asVoid(batch("activity.append", statements))
    },

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
