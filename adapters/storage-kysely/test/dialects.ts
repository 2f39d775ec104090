/**
 * The databases the storage tests run against, narrowed by `WAYBILL_TEST_DIALECTS`
 * (comma-separated; default `sqlite`). Each dialect contributes one or more targets; every
 * target's `makeLayer` builds a fresh, migrated database and tears it down with the layer.
 * PostgreSQL joins this table later as a `postgres` entry.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Kysely, SqliteDialect } from "kysely"
import { migrate, sqliteKysely, StorageKysely } from "../src/index.js"

/** One database setup the suites run against. */
export interface Target {
  readonly name: string
  /** A fresh migrated Kysely instance, destroyed (and its files removed) when the scope closes. */
  readonly database: Effect.Effect<Kysely<any>, unknown, Scope.Scope>
}

const sqliteMemory: Target = {
  name: "sqlite (memory)",
  database: Effect.acquireRelease(
    Effect.sync(() => new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(":memory:") }) })),
    (db) => Effect.promise(() => db.destroy())
  )
}

const sqliteFileWal: Target = {
  name: "sqlite (file, WAL)",
  database: Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-storage-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const sqlite = new Database(path.join(dir, "waybill.db"))
        const mode = sqlite.pragma("journal_mode = WAL", { simple: true })
        if (mode !== "wal") throw new Error(`journal_mode is ${String(mode)}, expected wal`)
        return new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) })
      }),
      (db) => Effect.promise(() => db.destroy())
    )
  })
}

/** A WAL file registered for the synchronous path (`sqliteKysely`): statements skip Kysely's driver. */
const sqliteFileSync: Target = {
  name: "sqlite (file, WAL, synchronous path)",
  database: Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-storage-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const sqlite = new Database(path.join(dir, "waybill.db"))
        sqlite.pragma("journal_mode = WAL")
        return sqliteKysely<any>(sqlite)
      }),
      (db) => Effect.promise(() => db.destroy())
    )
  })
}

const registry: Readonly<Record<string, ReadonlyArray<Target>>> = {
  sqlite: [sqliteMemory, sqliteFileWal, sqliteFileSync]
}

const requested = (process.env["WAYBILL_TEST_DIALECTS"] ?? "sqlite")
  .split(",")
  .map((d) => d.trim())
  .filter((d) => d !== "")

for (const d of requested) {
  if (registry[d] === undefined) {
    throw new Error(
      `WAYBILL_TEST_DIALECTS: unknown dialect ${JSON.stringify(d)} (known: ${Object.keys(registry).join(", ")})`
    )
  }
}

/** The targets selected for this run. */
export const targets: ReadonlyArray<Target> = requested.flatMap((d) => registry[d] ?? [])

/** A migrated database of `target` with the storage layer over it, released with the layer. */
export const storageLayer = (target: Target) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const db = yield* target.database
      yield* migrate(db)
      return StorageKysely.layer(db)
    })
  )
