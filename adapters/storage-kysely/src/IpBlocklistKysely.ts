/**
 * @module IpBlocklistKysely
 *
 * `IpBlocklist` over Kysely: blocked client addresses with an end time.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Connection, mapResult } from "./internal/connection.js"
import { type IpBlocklistShape, Page } from "./internal/core.js"
import { keyset } from "./internal/paging.js"

/** `IpBlocklist` over Kysely: blocked client addresses with an end time. */
export const makeIpBlocklist = (conn: Connection): IpBlocklistShape => {
  const { execute, prepare, rows, write } = conn
  const findSql = prepare((c, p: { readonly ipKey: string }) =>
    c.selectFrom("waybill_ip_blocks").selectAll().where("ip_key", "=", p.ipKey)
  )

  const ipBlock = (r: { ip_key: string; until: unknown; reason: string; created_at: unknown; strikes: unknown }) => ({
    ipKey: r.ip_key,
    until: Number(r.until),
    reason: r.reason,
    createdAt: Number(r.created_at),
    strikes: Number(r.strikes)
  })

  const ipBlocks: IpBlocklistShape = {
    // Runs before every keyed request: a prepared statement (synchronous on SQLite).
    find: (ipKey) =>
      mapResult(execute("ip_blocks.find", findSql({ ipKey })), (r) =>
        Option.map(Option.fromNullable(r.rows[0]), ipBlock)
      ),
    put: (b) =>
      write("ip_blocks.put", (c) =>
        c
          .insertInto("waybill_ip_blocks")
          .values({ ip_key: b.ipKey, until: b.until, reason: b.reason, created_at: b.createdAt, strikes: b.strikes })
          .onConflict((oc) =>
            oc
              .column("ip_key")
              .doUpdateSet({ until: b.until, reason: b.reason, created_at: b.createdAt, strikes: b.strikes })
          )
      ).pipe(Effect.asVoid),
    remove: (ipKey) =>
      write("ip_blocks.remove", (c) => c.deleteFrom("waybill_ip_blocks").where("ip_key", "=", ipKey)).pipe(
        Effect.map((r) => r > 0)
      ),
    listActive: (now, page) =>
      rows("ip_blocks.list", (c) =>
        keyset(c.selectFrom("waybill_ip_blocks").selectAll().where("until", ">", now), ["created_at", "ip_key"], page)
      ).pipe(Effect.map((rows) => Page.sliceOf(rows.map(ipBlock), page.limit)))
  }

  return ipBlocks
}
