/**
 * The databases the storage tests run against. `test/globalSetup.ts` picks the dialects once per
 * run (`WAYBILL_TEST_DIALECTS`, comma-separated; unset: `sqlite`, plus `postgres` when the
 * server at `WAYBILL_PG_URL` answers). Each dialect contributes one or more targets; every
 * target's `open` builds a fresh, empty database and tears it down with the scope.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { sql } from "kysely"
import pg from "pg"
import { describe, inject } from "vitest"
import { migrate, postgresEngine, sqliteEngine, type StorageEngine, StorageKysely } from "../src/index.js"
import { defaultPostgresUrl } from "./globalSetup.js"

export type Dialect = "sqlite" | "postgres"

/** What a test may ask of a target's database. */
export interface OpenOptions {
  /** Called with every statement the engine sends (transaction control included). */
  readonly onStatement?: (sql: string, parameters: ReadonlyArray<unknown>) => void
}

/** One database setup the suites run against. */
export interface Target {
  readonly name: string
  readonly dialect: Dialect
  /** A fresh, empty (unmigrated) engine, closed (and its data removed) when the scope closes. */
  readonly open: (options?: OpenOptions) => Effect.Effect<StorageEngine, unknown, Scope.Scope>
}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-storage-"))),
  (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
)

const close = (engine: StorageEngine) => Effect.promise(() => engine.close())

const sqliteMemory: Target = {
  name: "sqlite (memory)",
  dialect: "sqlite",
  open: (options = {}) =>
    Effect.acquireRelease(
      Effect.sync(() => sqliteEngine(new Database(":memory:"), options)),
      close
    )
}

const sqliteFileWal: Target = {
  name: "sqlite (file, WAL)",
  dialect: "sqlite",
  open: (options = {}) =>
    Effect.flatMap(tempDir, (dir) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const sqlite = new Database(path.join(dir, "waybill.db"))
          const mode = sqlite.pragma("journal_mode = WAL", { simple: true })
          if (mode !== "wal") throw new Error(`journal_mode is ${String(mode)}, expected wal`)
          return sqliteEngine(sqlite, options)
        }),
        close
      )
    )
}

/** The server the `postgres` target uses (`WAYBILL_PG_URL`). */
export const postgresUrl = process.env["WAYBILL_PG_URL"] ?? defaultPostgresUrl

let schemas = 0

/**
 * PostgreSQL: a schema of its own per `open` (created first, dropped with everything in it on
 * release), reached through a pool whose connections all have `search_path` set to it, so
 * unqualified table names (all of Waybill's) resolve there. Parallel test files share the server
 * but never see each other's tables.
 */
const postgres: Target = {
  name: "postgres",
  dialect: "postgres",
  open: (options = {}) => {
    const schema = `waybill_test_${process.pid}_${Date.now().toString(36)}_${(schemas++).toString(36)}`
    return Effect.acquireRelease(
      Effect.tryPromise(async () => {
        const pool = new pg.Pool({
          connectionString: postgresUrl,
          options: `-c search_path=${schema}`,
          max: 10,
          connectionTimeoutMillis: 5_000
        })
        const engine = postgresEngine(pool, options)
        try {
          await sql`create schema ${sql.id(schema)}`.execute(engine.kysely)
        } catch (error) {
          await engine.close()
          throw error
        }
        return engine
      }),
      (engine) =>
        Effect.promise(async () => {
          try {
            await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(engine.kysely)
          } finally {
            await engine.close()
          }
        })
    )
  }
}

const registry: Readonly<Record<Dialect, ReadonlyArray<Target>>> = {
  sqlite: [sqliteMemory, sqliteFileWal],
  postgres: [postgres]
}

/** The dialects selected for this run (see `globalSetup.ts`). */
export const dialects: ReadonlyArray<Dialect> = inject("waybillTestDialects").map((d) => {
  if (!Object.hasOwn(registry, d)) {
    throw new Error(
      `WAYBILL_TEST_DIALECTS: unknown dialect ${JSON.stringify(d)} (known: ${Object.keys(registry).join(", ")})`
    )
  }
  return d as Dialect
})

/** The targets selected for this run. */
export const targets: ReadonlyArray<Target> = dialects.flatMap((d) => registry[d])

/** True when `sqlite` is among the selected dialects. */
export const sqliteSelected: boolean = dialects.includes("sqlite")

/**
 * A `describe` of tests that only mean something on SQLite (`why`): skipped, with the reason in
 * its title, when `sqlite` is not selected.
 */
export const describeSqliteOnly = (name: string, why: string, body: () => void): void => {
  if (sqliteSelected) describe(name, body)
  else describe.skip(`${name} (skipped: SQLite only, ${why}; sqlite is not in WAYBILL_TEST_DIALECTS)`, body)
}

/** A migrated database of `target` with the storage layer over it, released with the layer. */
export const storageLayer = (target: Target) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const db = yield* target.open()
      yield* migrate(db)
      return StorageKysely.layer(db)
    })
  )

/** A statement an engine sent. */
export interface Sent {
  readonly sql: string
  readonly parameters: ReadonlyArray<unknown>
}

const CONTROL = /^(begin|start transaction|commit|rollback|savepoint|release)\b/i

/**
 * A fresh database of `target` whose engine records the statements it sends: `queries` the
 * stores' own, `all` with transaction control too (`begin`, `savepoint`, `commit`, ...: on
 * SQLite a single write outside a transaction is committed in a batch of its own).
 */
export const recording = (target: Target) =>
  Effect.gen(function* () {
    const queries: Array<Sent> = []
    const all: Array<Sent> = []
    const db = yield* target.open({
      onStatement: (sql, parameters) => {
        all.push({ sql, parameters })
        if (!CONTROL.test(sql)) queries.push({ sql, parameters })
      }
    })
    return { db, queries, all }
  })
