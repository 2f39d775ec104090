/**
 * A database handle that knows the current fiber's transaction. Every store module is built
 * from one `Connection`, so all stores over one database share transactions: inside
 * `withTransaction`, each store call made by that fiber runs on the transaction.
 *
 * Two ways to run a statement:
 * - through Kysely (`query`, `queryUnique`): any dialect, always asynchronous;
 * - as a compiled statement (`execute`, `executeUnique`, with SQL from `prepare` or
 *   `compileInsert`): when the Kysely instance is registered over a synchronous SQLite handle
 *   (`SyncSqlite`), it runs on that handle synchronously, with no promise and no fiber
 *   suspension; otherwise it goes through Kysely like `query`. The hot paths (booking, key
 *   lookup) use this form.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import { type Compilable, CompiledQuery, type ControlledTransaction, type Kysely, type QueryResult } from "kysely"
import { registeredSqlite, type SqliteDatabase } from "../SyncSqlite.js"
import type { WaybillDatabase } from "../Tables.js"
import { DuplicateKey, StorageError } from "./core.js"
import { isUniqueViolation } from "./errors.js"
import { lockOf } from "./lock.js"
import { cachedPrepare } from "../StatementCache.js"

export type Db = Kysely<WaybillDatabase>
type Trx = ControlledTransaction<WaybillDatabase>

type Table = keyof WaybillDatabase & string

export interface Connection {
  /** The database itself (outside any transaction). */
  readonly db: Db
  /** The open transaction of this fiber, else the database. */
  readonly connection: Effect.Effect<Db>
  /** Runs a query on {@link connection}; driver errors become `StorageError({ operation })`. */
  readonly query: <A>(operation: string, run: (c: Db) => Promise<A>) => Effect.Effect<A, StorageError>
  /** Like `query`, but a unique violation is `DuplicateKey({ what })`. */
  readonly queryUnique: <A>(
    operation: string,
    what: DuplicateKey["what"],
    run: (c: Db) => Promise<A>
  ) => Effect.Effect<A, DuplicateKey | StorageError>
  /**
   * Runs a compiled statement on the fiber's transaction (or the database): synchronously on a
   * registered SQLite handle, else through Kysely. Driver errors become `StorageError`.
   */
  readonly execute: <R>(operation: string, statement: Statement<R>) => Effect.Effect<QueryResult<R>, StorageError>
  /** Like `execute`, but a unique violation is `DuplicateKey({ what })`. */
  readonly executeUnique: <R>(
    operation: string,
    what: DuplicateKey["what"],
    statement: Statement<R>
  ) => Effect.Effect<QueryResult<R>, DuplicateKey | StorageError>
  /**
   * A statement compiled once: `build` runs with placeholder parameters the first time, and
   * later calls only bind `params` to the SQL text Kysely produced (Kysely would rebuild and
   * recompile the query on every call, which costs more than running it). `build` must not
   * branch on the values it is given. Parameters that are arrays or objects, or a query Kysely
   * does not bind exactly as given, fall back to compiling on every call.
   */
  readonly prepare: <P extends Readonly<Record<string, unknown>>, O>(
    build: (c: Db, params: P) => Compilable<O>
  ) => (params: P) => Statement<O>
  /**
   * An insert of rows that all have the same columns, compiled once per table, column list and
   * row count, for {@link execute}.
   */
  readonly compileInsert: (table: Table, rows: ReadonlyArray<Readonly<Record<string, unknown>>>) => Statement
  /** Runs `self` in a transaction, or joins the one this fiber has open. */
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * Like `withTransaction`, for reads that must all see one snapshot (a row and its children).
   * A new transaction asks for `repeatable read`: PostgreSQL's default, `read committed`, gives
   * every statement its own snapshot, so a commit landing between two reads would show in the
   * second only. SQLite transactions always read one snapshot (Kysely's SQLite driver ignores the
   * level). A joined transaction keeps the level it was opened with.
   */
  readonly withSnapshot: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}

/**
 * SQL text and its parameters, ready to run. A statement from a reused template carries no
 * Kysely query tree (building one per call is part of what the template saves); Kysely gets one
 * only when it runs the statement itself (`CompiledQuery.raw`).
 */
export interface Statement<R = unknown> {
  readonly sql: string
  readonly parameters: ReadonlyArray<unknown>
  /** Kysely's own compilation, when the statement was compiled for this call. */
  readonly compiled?: CompiledQuery<R>
}

const statementOf = <R>(compiled: CompiledQuery<R>): Statement<R> => ({
  sql: compiled.sql,
  parameters: compiled.parameters,
  compiled
})

const compiledOf = <R>(statement: Statement<R>): CompiledQuery<R> =>
  statement.compiled ?? (CompiledQuery.raw(statement.sql, [...statement.parameters]) as CompiledQuery<R>)

/** What a fiber's transaction slot holds: a Kysely transaction, or the mark of a SQLite one. */
type Open = { readonly _tag: "Kysely"; readonly trx: Trx } | { readonly _tag: "Sqlite" }

const SQLITE_OPEN: Open = { _tag: "Sqlite" }

const SENTINEL = "\u0000waybill-param:"

/** Each call gets its own transaction `FiberRef`, so two databases never see each other's transactions. */
export const makeConnection = (database: Kysely<any>): Connection => {
  const db: Db = database
  const current = FiberRef.unsafeMake<Option.Option<Open>>(Option.none())
  const sqlite = registeredSqlite(database)

  const prepare: Connection["prepare"] = (build) => {
    let template:
      | { readonly sql: string; readonly slots: ReadonlyArray<string | { value: unknown }> }
      | null
      | undefined
    return (params) => {
      if (template === undefined) template = compileTemplate(db, build, params)
      if (template === null) return statementOf(build(db, params).compile())
      const slots = template.slots
      const parameters = new Array<unknown>(slots.length)
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!
        parameters[i] = typeof slot === "string" ? params[slot] : slot.value
      }
      return { sql: template.sql, parameters }
    }
  }

  // SQL text per insert shape (table, row count, column list), produced by the host's own
  // Kysely (so its dialect and plugins apply). A shape is cached only after checking that Kysely
  // bound exactly the row values, in column order; otherwise it is compiled per call as usual.
  const inserts = new Map<string, Array<{ readonly columns: ReadonlyArray<string>; readonly sql: string | null }>>()
  const compileInsert: Connection["compileInsert"] = (table, rows) => {
    const columns = Object.keys(rows[0] ?? {})
    const width = columns.length
    const parameters = new Array<unknown>(rows.length * width)
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!
      for (let c = 0; c < width; c++) parameters[r * width + c] = row[columns[c]!]
    }
    const key = `${table}|${rows.length}|${width}`
    const shapes = inserts.get(key) ?? []
    const known = shapes.find((shape) => shape.columns.every((column, i) => column === columns[i]))
    if (known !== undefined && known.sql !== null) return { sql: known.sql, parameters }
    const compiled = db
      .insertInto(table)
      .values(rows as never)
      .compile()
    if (known === undefined && inserts.size < 512) {
      const same =
        compiled.parameters.length === parameters.length && compiled.parameters.every((p, i) => p === parameters[i])
      inserts.set(key, [...shapes, { columns, sql: same ? compiled.sql : null }])
    }
    return statementOf(compiled)
  }

  const mode = sqlite === undefined ? kyselyMode(db, current) : sqliteMode(db, sqlite, current)
  return { db, prepare, compileInsert, ...mode }
}

type Mode = Pick<
  Connection,
  "connection" | "query" | "queryUnique" | "execute" | "executeUnique" | "withTransaction" | "withSnapshot"
>

const storageError = (operation: string) => (cause: unknown) => new StorageError({ operation, cause })
const uniqueError =
  (operation: string, what: DuplicateKey["what"]) =>
  (cause: unknown): DuplicateKey | StorageError =>
    isUniqueViolation(cause) ? new DuplicateKey({ what }) : new StorageError({ operation, cause })

/** Every statement through Kysely; transactions are Kysely controlled transactions. */
const kyselyMode = (db: Db, current: FiberRef.FiberRef<Option.Option<Open>>): Mode => {
  const connection: Effect.Effect<Db> = Effect.map(FiberRef.get(current), (open) =>
    Option.isSome(open) && open.value._tag === "Kysely" ? open.value.trx : db
  )
  const through = <A, E>(run: (c: Db) => Promise<A>, onError: (cause: unknown) => E): Effect.Effect<A, E> =>
    Effect.flatMap(connection, (c) => Effect.tryPromise({ try: () => run(c), catch: onError }))

  const begin = (snapshot: boolean): Effect.Effect<Trx, StorageError> =>
    Effect.tryPromise({
      try: () =>
        snapshot
          ? db.startTransaction().setIsolationLevel("repeatable read").execute()
          : db.startTransaction().execute(),
      catch: storageError("transaction.begin")
    })

  // Uninterruptible: once COMMIT is sent its outcome must be known before release decides
  // whether a ROLLBACK is still owed.
  const commit = (trx: Trx): Effect.Effect<void, StorageError> =>
    Effect.uninterruptible(
      Effect.tryPromise({ try: () => trx.commit().execute(), catch: storageError("transaction.commit") })
    )

  // Runs after a failure, defect, interruption or failed COMMIT. Kysely releases the
  // connection even when ROLLBACK itself fails, so a failed rollback is only worth a log line:
  // the original cause is what the caller needs to see.
  const rollback = (trx: Trx): Effect.Effect<void> =>
    trx.isCommitted || trx.isRolledBack
      ? Effect.void
      : Effect.tryPromise(() => trx.rollback().execute()).pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("waybill storage: rollback failed", cause))
        )

  const transaction =
    (snapshot: boolean) =>
    <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
      Effect.flatMap(
        FiberRef.get(current),
        (open): Effect.Effect<A, E | StorageError, R> =>
          Option.isSome(open)
            ? self // nested: join the outer transaction; the outermost call commits or rolls back
            : Effect.acquireUseRelease(
                begin(snapshot),
                (trx) =>
                  Effect.zipLeft(
                    Effect.locally(self, current, Option.some<Open>({ _tag: "Kysely", trx })),
                    commit(trx)
                  ),
                rollback
              )
      )

  return {
    connection,
    query: (operation, run) => through(run, storageError(operation)),
    queryUnique: (operation, what, run) => through(run, uniqueError(operation, what)),
    execute: (operation, statement) => through((c) => c.executeQuery(compiledOf(statement)), storageError(operation)),
    executeUnique: (operation, what, statement) =>
      through((c) => c.executeQuery(compiledOf(statement)), uniqueError(operation, what)),
    withTransaction: transaction(false),
    withSnapshot: transaction(true)
  }
}

/**
 * Compiled statements run on the SQLite handle synchronously; transactions are `BEGIN` /
 * `COMMIT` on the handle under the handle's lock. A fiber that does not own the open
 * transaction waits for the lock before any statement; Kysely-built queries (asynchronous)
 * hold the lock while they run, so no transaction can begin underneath them.
 */
const sqliteMode = (db: Db, sqlite: SqliteDatabase, current: FiberRef.FiberRef<Option.Option<Open>>): Mode => {
  const lock = lockOf(sqlite)
  const statements = cachedPrepare(sqlite, 512)

  const run = (sql: string, parameters: ReadonlyArray<unknown>): QueryResult<any> => {
    const statement = statements(sql)
    if (statement.reader) return { rows: statement.all(parameters) }
    const result = statement.run(parameters)
    return { rows: [], numAffectedRows: BigInt(result.changes), insertId: BigInt(result.lastInsertRowid) }
  }

  /** `effect` with the lock held, unless this fiber owns the open transaction (it holds it already). */
  const guarded = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(FiberRef.get(current), (open) =>
      Option.isSome(open)
        ? effect
        : Effect.acquireUseRelease(
            lock.acquire,
            () => effect,
            () => lock.releaseEffect
          )
    )

  /** A synchronous statement needs the lock only when another fiber's transaction is open. */
  const runNow = <R, E>(statement: Statement<R>, onError: (cause: unknown) => E): Effect.Effect<QueryResult<R>, E> =>
    Effect.suspend(() => {
      const attempt = () => {
        try {
          return Effect.succeed(run(statement.sql, statement.parameters) as QueryResult<R>)
        } catch (cause) {
          return Effect.fail(onError(cause))
        }
      }
      // Free lock (the usual case): the statement runs right here, in this one step.
      return lock.locked ? guarded(Effect.suspend(attempt)) : attempt()
    })

  const through = <A, E>(run: (c: Db) => Promise<A>, onError: (cause: unknown) => E): Effect.Effect<A, E> =>
    guarded(Effect.tryPromise({ try: () => run(db), catch: onError }))

  const control = (sql: string) => () => statements(sql).run([])

  const begin: Effect.Effect<void, StorageError> = Effect.zipRight(
    lock.acquire,
    Effect.try({ try: control("begin"), catch: storageError("transaction.begin") }).pipe(
      Effect.tapError(() => lock.releaseEffect)
    )
  )
  const commit = Effect.try({ try: control("commit"), catch: storageError("transaction.commit") })
  const release = (_: void, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
    Effect.suspend(() => {
      // After a failure, or a COMMIT that failed and left the transaction open, roll back.
      const open = sqlite.inTransaction
      const rollback =
        Exit.isSuccess(exit) && !open
          ? Effect.void
          : Effect.try(control("rollback")).pipe(
              Effect.catchAllCause((cause) =>
                open ? Effect.logWarning("waybill storage: rollback failed", cause) : Effect.void
              )
            )
      return Effect.ensuring(rollback, lock.releaseEffect)
    })

  const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(
      FiberRef.get(current),
      (open): Effect.Effect<A, E | StorageError, R> =>
        Option.isSome(open)
          ? self
          : Effect.acquireUseRelease(
              begin,
              () => Effect.zipLeft(Effect.locally(self, current, Option.some(SQLITE_OPEN)), commit),
              release
            )
    )

  return {
    connection: Effect.succeed(db),
    query: (operation, run) => through(run, storageError(operation)),
    queryUnique: (operation, what, run) => through(run, uniqueError(operation, what)),
    execute: (operation, statement) => runNow(statement, storageError(operation)),
    executeUnique: (operation, what, statement) => runNow(statement, uniqueError(operation, what)),
    withTransaction,
    // A SQLite transaction reads one snapshot, and here no other transaction runs meanwhile.
    withSnapshot: withTransaction
  }
}

/**
 * The SQL of `build` with a slot per parameter: a parameter name where Kysely bound the
 * placeholder of that name, or a constant Kysely added itself. `null` when the statement cannot
 * be reused (see `Connection.prepare`).
 */
const compileTemplate = <P extends Readonly<Record<string, unknown>>>(
  db: Db,
  build: (c: Db, params: P) => Compilable<unknown>,
  params: P
): { readonly sql: string; readonly slots: ReadonlyArray<string | { value: unknown }> } | null => {
  const names = Object.keys(params)
  if (names.some((n) => typeof params[n] === "object" && params[n] !== null)) return null
  const placeholders = Object.fromEntries(names.map((n) => [n, `${SENTINEL}${n}\u0000`])) as unknown as P
  const compiled = build(db, placeholders).compile()
  const seen = new Set<string>()
  const slots = compiled.parameters.map((p): string | { value: unknown } => {
    if (typeof p === "string" && p.startsWith(SENTINEL)) {
      const name = p.slice(SENTINEL.length, -1)
      seen.add(name)
      return name
    }
    return { value: p }
  })
  if (seen.size !== names.length || compiled.sql.includes(SENTINEL)) return null
  // The real call must compile to the same text with the values where the slots say.
  const real = build(db, params).compile()
  const same =
    real.sql === compiled.sql &&
    real.parameters.length === slots.length &&
    real.parameters.every((p, i) => {
      const slot = slots[i]!
      return typeof slot === "string" ? p === params[slot] : p === slot.value
    })
  return same ? { sql: compiled.sql, slots } : null
}
