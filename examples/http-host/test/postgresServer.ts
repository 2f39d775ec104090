/**
 * The PostgreSQL server of the tests that need one (`WAYBILL_PG_URL`, else the machine's
 * `postgres://postgres@127.0.0.1:5432/test`). With `CI` set, a server that does not answer fails
 * the test file at once: CI must not pass on SQLite alone. Elsewhere the suite is skipped, with the
 * reason in its title.
 */
import pg from "pg"
import { describe } from "vitest"

/** The server the tests create their databases and schemas on. */
export const pgServerUrl = process.env["WAYBILL_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

const ci = !["", "0", "false", undefined].includes(process.env["CI"])

/** Why the server does not answer, or `undefined` when it does. */
const unreachable = async (serverUrl: string): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2_000 })
  try {
    await client.connect()
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * `describe`, or `describe.skip` with the reason in the title when the server does not answer
 * outside CI; throws in CI.
 */
export const postgresSuite = async (
  title: string,
  serverUrl: string = pgServerUrl
): Promise<{ readonly suite: typeof describe | typeof describe.skip; readonly title: string }> => {
  const why = await unreachable(serverUrl)
  if (why === undefined) return { suite: describe, title }
  if (ci) throw new Error(`CI is set, but PostgreSQL at ${serverUrl} is not reachable (${why})`)
  return { suite: describe.skip, title: `${title} (skipped: PostgreSQL not reachable: ${why})` }
}

/** The server's URL with another database. */
export const databaseUrl = (database: string, serverUrl: string = pgServerUrl): string => {
  const u = new URL(serverUrl)
  u.pathname = `/${database}`
  return u.toString()
}

/** Runs `body` on one connection (create and drop databases), closed afterwards. */
export const withClient = async <A>(
  body: (client: pg.Client) => Promise<A>,
  connectionString: string = pgServerUrl
): Promise<A> => {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}
