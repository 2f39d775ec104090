/**
 * Runs once per test run, before any worker starts: decides which dialects the storage suites
 * run against and hands the list to the workers (`inject("waybillTestDialects")` in
 * `dialects.ts`), so PostgreSQL is probed, and its absence reported, once.
 *
 * - `WAYBILL_TEST_DIALECTS` set: exactly those dialects. When it names `postgres` and the server
 *   at `WAYBILL_PG_URL` does not answer, the run fails here (an explicit request never skips).
 * - unset, on CI (`CI` set and not `false`/`0`): `sqlite,postgres`, and a missing server fails
 *   the run: a CI machine whose PostgreSQL is slow or absent must not pass on SQLite alone.
 * - unset, elsewhere: `sqlite,postgres` when the server answers within a second, else `sqlite`
 *   and a notice that the postgres suites did not run.
 */
import pg from "pg"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The dialects selected for this run, in order. */
    readonly waybillTestDialects: ReadonlyArray<string>
  }
}

export const defaultPostgresUrl = "postgres://postgres@127.0.0.1:5432/test"

const postgresUrl = (): string => process.env["WAYBILL_PG_URL"] ?? defaultPostgresUrl

/** `undefined` when the server answers `select 1`, else why not. */
const probe = async (url: string): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000, query_timeout: 2_000 })
  try {
    await client.connect()
    await client.query("select 1")
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** Hides the password of a URL for messages. */
const redacted = (url: string): string => url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@")

/** True on a CI machine (`CI=true`, as every CI service sets it). */
export const onCi = (env: NodeJS.ProcessEnv = process.env): boolean => {
  const ci = env["CI"]
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0"
}

export default async function setup(project: TestProject): Promise<void> {
  const explicit = process.env["WAYBILL_TEST_DIALECTS"]
  let dialects: ReadonlyArray<string>
  if (explicit !== undefined || onCi()) {
    const why =
      explicit !== undefined ? "WAYBILL_TEST_DIALECTS names postgres" : "CI is set (CI runs require PostgreSQL)"
    dialects = (explicit ?? "sqlite,postgres")
      .split(",")
      .map((d) => d.trim())
      .filter((d) => d !== "")
    if (dialects.includes("postgres")) {
      const failure = await probe(postgresUrl())
      if (failure !== undefined) {
        throw new Error(
          `${why}, but PostgreSQL at ${redacted(postgresUrl())} is not reachable: ${failure}. Start the server (or point WAYBILL_PG_URL at one); the postgres storage suites must run, not disappear.`
        )
      }
    }
  } else {
    const failure = await probe(postgresUrl())
    if (failure === undefined) {
      dialects = ["sqlite", "postgres"]
    } else {
      console.warn(
        `\n[@waybill/storage-kysely] NOTICE: PostgreSQL at ${redacted(postgresUrl())} is not reachable (${failure}).\n` +
          `  This run covers SQLITE ONLY: every postgres storage suite is left out.\n` +
          `  CI (CI=true) or WAYBILL_TEST_DIALECTS=sqlite,postgres make a missing server fail the run.\n`
      )
      dialects = ["sqlite"]
    }
  }
  project.provide("waybillTestDialects", dialects)
}
