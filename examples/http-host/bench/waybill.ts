/**
 * The Waybill target: the example host exactly as `serve` composes it (src/host.ts), plus one
 * customer account whose live key the load uses. Nothing is tuned for the bench but the per-key
 * rate limit (below).
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { sql } from "kysely"
import { Accounts, Config } from "@waybill/core"
import { serve, waybillLayer } from "../src/host.js"
import { benchLog } from "./logSink.js"
import { join, dirname } from "node:path"
import { PRAGMA_NAMES, pragmaValue } from "./sqlite.js"
import type { StartTarget } from "./target.js"
import { BENCH_OPERATOR_TOKEN } from "./documentScenarios.js"

/**
 * The bench drives one key far past any sensible per-key limit, so the limit is raised out of
 * reach; the limiter itself still counts every request, so its cost is part of the measurement.
 */
const benchConfig = {
  ...Config.defaults,
  limits: { ...Config.defaults.limits, perKey: { requests: Number.MAX_SAFE_INTEGER, windowSeconds: 60 } }
}

export const startWaybill: StartTarget = async ({ dbFile, host, port, databaseUrl }) => {
  // The PostgreSQL helpers (and the `pg` driver with them) load only for the *-pg scenarios, as
  // the host loads its driver only with a database URL: a SQLite run holds neither.
  const postgres = databaseUrl === undefined ? undefined : await import("./postgres.js")
  // The documents scenarios upload through /ops/v1 and run over plain HTTP (see documentScenarios.ts).
  // On PostgreSQL every host of a run reads the same secret file, beside the first one's files.
  const where = {
    dbFile,
    ...(databaseUrl === undefined || postgres === undefined
      ? {}
      : {
          databaseUrl: Redacted.make(databaseUrl),
          poolSize: postgres.BENCH_POOL_SIZE,
          secretFile: join(dirname(dbFile), "fleet.secret")
        })
  }
  const running = await serve({
    ...where,
    port,
    host,
    config: benchConfig,
    operatorToken: Redacted.make(BENCH_OPERATOR_TOKEN),
    allowInsecureHttp: true,
    log: benchLog(),
    // BENCH_ACTIVITY=off: no account activity recording, to measure what recording costs.
    ...(process.env["BENCH_ACTIVITY"] === "off" ? { activity: { record: false } } : {}),
    // BENCH_BLOB_CACHE=off: every download reads its file (no `@waybill/blob-cache`), to measure what keeping files saves.
    ...(process.env["BENCH_BLOB_CACHE"] === "off" ? { blobCacheBytes: 0 } : {})
  })
  const db = running.database.db
  try {
    const created = await Effect.runPromise(
      Accounts.createAccount({ name: "Bench customer" }).pipe(
        Effect.provide(waybillLayer(running.database.engine, where))
      )
    )
    const pragmas: Record<string, string> = {}
    if (postgres === undefined) {
      for (const name of PRAGMA_NAMES) {
        const result = await sql.raw(`pragma ${name}`).execute(db)
        pragmas[name] = pragmaValue(result.rows)
      }
    } else {
      const query = async (text: string) => (await sql.raw(text).execute(db)).rows as Array<Record<string, unknown>>
      Object.assign(pragmas, await postgres.pgSettings(query, postgres.BENCH_POOL_SIZE))
    }
    const count = async (table: string): Promise<number> => {
      const result = await sql.raw(`select count(*) as n from ${table}`).execute(db)
      return Number(pragmaValue(result.rows))
    }
    return {
      url: running.url,
      apiKey: Redacted.value(created.liveKey),
      pragmas,
      rowCounts: async () => ({ shipments: await count("waybill_shipments"), events: await count("waybill_events") }),
      close: running.close
    }
  } catch (error) {
    await running.close()
    throw error
  }
}
