/**
 * PostgreSQL for the `*-pg` scenarios: the server the bench runs on (`BENCH_PG_URL`, default the
 * test server), a fresh database per measurement (created under a random name, dropped after),
 * and the settings each target reports so the orchestrator can refuse to compare two targets
 * that ran on different ones.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"

/** The server (any database on it: the bench creates its own beside it). */
export const benchServerUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  env["BENCH_PG_URL"] ?? env["WAYBILL_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

/**
 * Connections each target's pool holds: Waybill's default (`DEFAULT_POOL_SIZE`, which
 * bench.test.ts checks this equals; not imported, so a floor child never loads the host).
 */
export const BENCH_POOL_SIZE = 10

/** Server settings read back by every target (`show NAME`), plus the pool size it uses. */
export const PG_SETTING_NAMES: ReadonlyArray<string> = ["synchronous_commit", "fsync", "shared_buffers"]

/** The settings of {@link PG_SETTING_NAMES} over a `query` function, and `pool_size`. */
export const pgSettings = async (
  query: (sql: string) => Promise<ReadonlyArray<Record<string, unknown>>>,
  poolSize: number
): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const name of PG_SETTING_NAMES) out[name] = String(Object.values((await query(`show ${name}`))[0] ?? {})[0])
  out["pool_size"] = String(poolSize)
  return out
}

const withAdmin = async <A>(serverUrl: string, body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

/** Process ids of the server's backends connected to `database` (on this machine: readable in /proc). */
export const backendPids = (serverUrl: string, database: string): Promise<ReadonlyArray<number>> =>
  withAdmin(serverUrl, async (c) =>
    (await c.query<{ pid: number }>(`select pid from pg_stat_activity where datname = $1`, [database])).rows.map(
      (r) => r.pid
    )
  )

/** Undefined when the server answers, else why it does not (checked before a run needs it). */
export const unreachable = async (serverUrl: string): Promise<string | undefined> => {
  try {
    await withAdmin(serverUrl, (c) => c.query("select 1"))
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** A database made for one measurement, and how to drop it. */
export interface BenchDatabase {
  readonly name: string
  /** `serverUrl` with the new database in its path. */
  readonly url: string
  readonly drop: () => Promise<void>
}

/** Creates an empty database with a random name on the server of `serverUrl`. */
export const createBenchDatabase = async (serverUrl: string, label: string): Promise<BenchDatabase> => {
  const name = `waybill_bench_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`
  await withAdmin(serverUrl, (c) => c.query(`create database ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: () =>
      withAdmin(serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined)
  }
}
