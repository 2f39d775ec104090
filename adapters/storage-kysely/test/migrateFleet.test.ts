/**
 * What a fleet of hosts needs of migrations and the engine: two hosts migrating one fresh
 * database at once apply each migration once and both succeed; readiness can ask an engine
 * whether its database answers and is migrated; a lost connection is discarded, not fatal.
 */
import Database from "better-sqlite3"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { sql } from "kysely"
import pg from "pg"
import { Migrations, migrateToLatest, type PgClient, type PgPool, postgresEngine, sqliteEngine } from "../src/index.js"
import { dialects, postgresUrl, targets } from "./dialects.js"

const names = Object.keys(Migrations.migrations).sort()

describe.each(targets)("migrations for a fleet on $name", (target) => {
  it.scoped("two migrations racing on one fresh database apply every migration once, without an error", () =>
    Effect.gen(function* () {
      const engine = yield* target.open()
      const [a, b] = yield* Effect.promise(() => Promise.all([migrateToLatest(engine), migrateToLatest(engine)]))
      const applied = [...(a.results ?? []), ...(b.results ?? [])]
      expect(applied.every((r) => r.status === "Success")).toBe(true)
      expect(applied.map((r) => r.migrationName).sort()).toEqual(names)
      const rows = yield* Effect.promise(() =>
        sql<{ readonly name: string }>`select name from ${sql.table(Migrations.migrationTableName)}`.execute(
          engine.kysely
        )
      )
      expect(rows.rows.map((r) => r.name).sort()).toEqual(names)
    })
  )

  it.scoped("health: reachable and unmigrated when fresh, migrated after migrate", () =>
    Effect.gen(function* () {
      const engine = yield* target.open()
      expect(yield* Effect.promise(() => engine.health())).toEqual({ reachable: true, migrated: false })
      yield* Effect.promise(() => migrateToLatest(engine))
      expect(yield* Effect.promise(() => engine.health())).toEqual({ reachable: true, migrated: true })
    })
  )

  it.scoped("health: a database missing a migration of this version is not migrated", () =>
    Effect.gen(function* () {
      const engine = yield* target.open()
      yield* Effect.promise(() => migrateToLatest(engine))
      yield* Effect.promise(() =>
        sql`delete from ${sql.table(Migrations.migrationTableName)} where name = ${names[names.length - 1]}`.execute(
          engine.kysely
        )
      )
      expect(yield* Effect.promise(() => engine.health())).toEqual({ reachable: true, migrated: false })
    })
  )
})

describe("health of an unreachable database", () => {
  it("SQLite: a closed handle is not reachable", async () => {
    const engine = sqliteEngine(new Database(":memory:"))
    await engine.close()
    expect(await engine.health()).toEqual({ reachable: false, migrated: false })
  })

  it.runIf(dialects.includes("postgres"))("PostgreSQL: a server that does not answer is not reachable", async () => {
    const engine = postgresEngine(
      new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 2_000 })
    )
    try {
      expect(await engine.health()).toEqual({ reachable: false, migrated: false })
    } finally {
      await engine.close()
    }
  })
})

describe("a lost PostgreSQL connection", () => {
  it.runIf(dialects.includes("postgres"))(
    "is reported, discarded by the pool, and the next statement runs on a fresh connection",
    async () => {
      const pool = new pg.Pool({ connectionString: postgresUrl, max: 1, connectionTimeoutMillis: 5_000 })
      const lost: Array<string> = []
      const engine = postgresEngine(pool, { onConnectionError: (e) => lost.push(e.message) })
      try {
        const pid = async () =>
          Number(
            (await sql<{ readonly pid: number }>`select pg_backend_pid() as pid`.execute(engine.kysely)).rows[0]?.pid
          )
        const first = await pid()
        // Another session ends ours while the pool holds it idle: the idle client emits `error`.
        const admin = new pg.Client({ connectionString: postgresUrl })
        await admin.connect()
        try {
          await admin.query("select pg_terminate_backend($1)", [first])
        } finally {
          await admin.end()
        }
        await expect.poll(() => lost.length, { interval: 20, timeout: 10_000 }).toBeGreaterThan(0)
        const second = await pid()
        expect(second).not.toBe(first)
        expect(await engine.health()).toEqual({ reachable: true, migrated: false })
      } finally {
        await engine.close()
      }
    }
  )

  it("a client that broke while checked out is released with its error, so the pool drops it", async () => {
    const released: Array<unknown> = []
    const listeners: Array<(e: Error) => void> = []
    const client: PgClient = {
      query: () => Promise.resolve({ command: "SELECT", rowCount: 1, rows: [] }),
      release: (error) => void released.push(error),
      on: (_event, listener) => listeners.push(listener),
      removeListener: () => undefined
    }
    const pool: PgPool = {
      connect: () => Promise.resolve(client),
      query: client.query,
      end: () => Promise.resolve()
    }
    const engine = postgresEngine(pool)
    const reserved = await engine.reserve()
    const broken = new Error("Connection terminated unexpectedly")
    for (const l of listeners) l(broken)
    reserved.release()
    const healthy = await engine.reserve()
    healthy.release()
    expect(released).toEqual([broken, undefined])
  })
})
