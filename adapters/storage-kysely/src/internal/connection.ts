/**
 * A database handle that knows the current fiber's transaction. Every store module is built
 * from one `Connection`, so all stores over one database share transactions: inside
 * `withTransaction`, each store call made by that fiber runs on the transaction.
 *
 * One way to run a statement: build it with Kysely, compile it with Kysely's compiler (the hot
 * ones once, as templates: `prepare`, `compileInsert`), and hand the SQL text and parameters to
 * the engine (`Engine.ts`), on the fiber's transaction or outside any. Nothing here knows which
 * database is underneath.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type { Compilable, CompiledQuery, Kysely } from "kysely"
import {
  type BatchOutcome,
  type BatchStatement,
  type Result,
  type Run,
  runBatch,
  type StorageEngine
} from "../Engine.js"
import type { WaybillDatabase } from "../Tables.js"
import { DuplicateKey, StorageError } from "./core.js"
import { isUniqueViolation } from "./errors.js"

export type Db = Kysely<WaybillDatabase>

type Table = keyof WaybillDatabase & string

export interface Connection {
  /** The Kysely the stores build and compile their queries with (never runs them). */
  readonly db: Db
  /** The engine's database, for the few statements that differ (row locks exist on PostgreSQL only). */
  readonly dialect: StorageEngine["dialect"]
  /** Runs a statement on the fiber's transaction (or outside any); driver errors become `StorageError({ operation })`. */
  readonly execute: <R>(operation: string, statement: Statement<R>) => Effect.Effect<Result<R>, StorageError>
  /** Like `execute`, but a unique violation is `DuplicateKey({ what })`. */
  readonly executeUnique: <R>(
    operation: string,
    what: DuplicateKey["what"],
    statement: Statement<R>
  ) => Effect.Effect<Result<R>, DuplicateKey | StorageError>
  /** Compiles `build`'s query with {@link db} and runs it: its rows. */
  readonly rows: <O>(operation: string, build: (c: Db) => Compilable<O>) => Effect.Effect<Array<O>, StorageError>
  /** Compiles `build`'s query and runs it: its first row, if any. */
  readonly first: <O>(operation: string, build: (c: Db) => Compilable<O>) => Effect.Effect<O | undefined, StorageError>
  /** Compiles `build`'s write and runs it: how many rows it changed. */
  readonly write: (operation: string, build: (c: Db) => Compilable<unknown>) => Effect.Effect<number, StorageError>
  /** Like `write`, but a unique violation is `DuplicateKey({ what })`. */
  readonly writeUnique: (
    operation: string,
    what: DuplicateKey["what"],
    build: (c: Db) => Compilable<unknown>
  ) => Effect.Effect<number, DuplicateKey | StorageError>
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
  /**
   * Runs a fixed list of statements as one unit of work (the engine's `batch`: on SQLite one
   * unit of the group commit), or, inside a transaction this fiber has open, as part of it (under a
   * savepoint of its own). Driver errors become `StorageError({ operation })`.
   */
  readonly batch: (
    operation: string,
    statements: ReadonlyArray<BatchStatement>
  ) => Effect.Effect<BatchOutcome, StorageError>
  /** Runs `self` in a transaction, or joins the one this fiber has open. */
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
  /**
   * Like `withTransaction`, for reads that must all see one snapshot (a row and its children).
   * A new transaction asks for `repeatable read`: PostgreSQL's default, `read committed`, gives
   * every statement its own snapshot, so a commit landing between two reads would show in the
   * second only. A SQLite transaction always reads one snapshot. A joined transaction keeps the
   * level it was opened with.
   */
  readonly withSnapshot: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}

/** SQL text and its parameters, ready to run (`R` is the row type). */
export interface Statement<R = unknown> {
  readonly sql: string
  readonly parameters: ReadonlyArray<unknown>
  /** Phantom: the row type. */
  readonly _rows?: R
}

const statementOf = <R>(compiled: CompiledQuery<R>): Statement<R> => ({
  sql: compiled.sql,
  parameters: compiled.parameters
})

const SENTINEL = "\u0000waybill-param:"

/** Each call gets its own transaction `FiberRef`, so two databases never see each other's transactions. */
export const makeConnection = (engine: StorageEngine): Connection => {
  const db: Db = engine.kysely
  // The open transaction's `Run`, else none (statements go to `engine.run`).
  const current = FiberRef.unsafeMake<Run | undefined>(undefined)

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

  // One runtime step to find the fiber's transaction and run the statement in it, rather than a
  // FiberRef read and a continuation: every store call pays this.
  const run = <R, E>(
    statement: Statement<R>,
    onError: (cause: unknown) => E
  ): Effect.Effect<Result<R>, E | StorageError> =>
    Effect.withFiberRuntime((fiber) =>
      (fiber.getFiberRef(current) ?? engine.run)(statement.sql, statement.parameters, onError)
    )
  /** Compiles `build` with Kysely and runs it; a query Kysely cannot compile fails like the statement would. */
  const runBuilt = <O, E>(
    build: (c: Db) => Compilable<O>,
    onError: (cause: unknown) => E
  ): Effect.Effect<Result<O>, E | StorageError> =>
    Effect.suspend(() => {
      let statement: Statement<O>
      try {
        statement = statementOf(build(db).compile())
      } catch (cause) {
        return Effect.fail(onError(cause))
      }
      return run(statement, onError)
    })
  const affected = (result: Result): number => Number(result.numAffectedRows ?? 0n)

  const clear = FiberRef.set(current, undefined)
  const transaction =
    (snapshot: boolean) =>
    <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
      Effect.withFiberRuntime((fiber) => {
        // Nested: join the outer transaction; the outermost call commits or rolls back.
        if (fiber.getFiberRef(current) !== undefined) return self
        // The body marks the fiber as it starts and the mark is cleared when the transaction
        // ends; the engine runs none of the fiber's code between the body's end and its own, so
        // this scopes the mark exactly (`Effect.locally` would spend a dozen runtime steps on
        // every transaction for the same thing).
        return Effect.ensuring(
          engine.transaction(snapshot, (r) => Effect.zipRight(FiberRef.set(current, r), self)),
          clear
        )
      })

  return {
    db,
    dialect: engine.dialect,
    prepare,
    compileInsert,
    execute: (operation, statement) => run(statement, storageError(operation)),
    executeUnique: (operation, what, statement) => run(statement, uniqueError(operation, what)),
    rows: (operation, build) => mapResult(runBuilt(build, storageError(operation)), (r) => r.rows),
    first: (operation, build) => mapResult(runBuilt(build, storageError(operation)), (r) => r.rows[0]),
    write: (operation, build) => mapResult(runBuilt(build, storageError(operation)), affected),
    writeUnique: (operation, what, build) => mapResult(runBuilt(build, uniqueError(operation, what)), affected),
    batch: (operation, statements) =>
      Effect.withFiberRuntime((fiber) => {
        const onError = storageError(operation)
        const open = fiber.getFiberRef(current)
        return open === undefined
          ? engine.batch(statements, onError)
          : runBatch(open, statements, (cause) => onError(cause))
      }),
    withTransaction: transaction(false),
    withSnapshot: transaction(true)
  }
}

/**
 * `Effect.map` for a statement's result. An engine that ran the statement at once (SQLite, not
 * waiting its turn) answers an `Exit`, which is mapped here and now; `Effect.map` would spend
 * two runtime steps on it.
 */
export const mapResult = <A, B, E>(self: Effect.Effect<A, E>, f: (a: A) => B): Effect.Effect<B, E> =>
  Exit.isExit(self) ? Exit.map(self as Exit.Exit<A, E>, f) : Effect.map(self, f)

const storageError = (operation: string) => (cause: unknown) => new StorageError({ operation, cause })
const uniqueError =
  (operation: string, what: DuplicateKey["what"]) =>
  (cause: unknown): DuplicateKey | StorageError =>
    isUniqueViolation(cause) ? new DuplicateKey({ what }) : new StorageError({ operation, cause })

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
