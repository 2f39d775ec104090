/**
 * A database handle that knows the current fiber's transaction. Every store module is built
 * from one `Connection`, so all stores over one database share transactions: inside
 * `withTransaction`, each store call made by that fiber runs on the transaction.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import { CompiledQuery, type ControlledTransaction, type Kysely } from "kysely"
import type { WaybillDatabase } from "../Tables.js"
import { DuplicateKey, StorageError } from "./core.js"
import { isUniqueViolation } from "./errors.js"

export type Db = Kysely<WaybillDatabase>
type Trx = ControlledTransaction<WaybillDatabase>

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
   * Inserts rows that all have the same columns, compiling the statement once per table,
   * column list and row count (Kysely would rebuild and recompile it on every call, which costs
   * more than running it). Runs on the fiber's transaction like `query`.
   */
  readonly insertRows: (
    c: Db,
    table: keyof WaybillDatabase & string,
    rows: ReadonlyArray<Readonly<Record<string, unknown>>>
  ) => Promise<unknown>
  /** Runs `self` in a transaction, or joins the one this fiber has open. */
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}

/** Each call gets its own transaction `FiberRef`, so two databases never see each other's transactions. */
export const makeConnection = (database: Kysely<any>): Connection => {
  const db: Db = database
  const current = FiberRef.unsafeMake<Option.Option<Trx>>(Option.none())

  /** The open transaction of this fiber, else the database itself. */
  const connection: Effect.Effect<Db> = Effect.map(
    FiberRef.get(current),
    Option.getOrElse(() => db)
  )

  const query = <A>(operation: string, run: (c: Db) => Promise<A>): Effect.Effect<A, StorageError> =>
    Effect.flatMap(connection, (c) =>
      Effect.tryPromise({ try: () => run(c), catch: (cause) => new StorageError({ operation, cause }) })
    )

  const queryUnique = <A>(
    operation: string,
    what: DuplicateKey["what"],
    run: (c: Db) => Promise<A>
  ): Effect.Effect<A, DuplicateKey | StorageError> =>
    Effect.flatMap(connection, (c) =>
      Effect.tryPromise({
        try: () => run(c),
        catch: (cause): DuplicateKey | StorageError =>
          isUniqueViolation(cause) ? new DuplicateKey({ what }) : new StorageError({ operation, cause })
      })
    )

  const begin: Effect.Effect<Trx, StorageError> = Effect.tryPromise({
    try: () => db.startTransaction().execute(),
    catch: (cause) => new StorageError({ operation: "transaction.begin", cause })
  })

  // Uninterruptible: once COMMIT is sent its outcome must be known before release decides
  // whether a ROLLBACK is still owed.
  const commit = (trx: Trx): Effect.Effect<void, StorageError> =>
    Effect.uninterruptible(
      Effect.tryPromise({
        try: () => trx.commit().execute(),
        catch: (cause) => new StorageError({ operation: "transaction.commit", cause })
      })
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

  const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
    Effect.flatMap(
      FiberRef.get(current),
      (open): Effect.Effect<A, E | StorageError, R> =>
        Option.isSome(open)
          ? self // nested: join the outer transaction; the outermost call commits or rolls back
          : Effect.acquireUseRelease(
              begin,
              (trx) => Effect.zipLeft(Effect.locally(self, current, Option.some(trx)), commit(trx)),
              rollback
            )
    )

  // SQL text per insert shape, produced by the host's own Kysely (so its dialect and plugins
  // apply). A shape is cached only after checking that Kysely bound exactly the row values, in
  // column order; otherwise it is compiled per call as usual.
  const insertSql = new Map<string, string | null>()
  const insertRows: Connection["insertRows"] = (c, table, rows) => {
    const columns = Object.keys(rows[0] ?? {})
    const parameters = rows.flatMap((row) => columns.map((column) => row[column]))
    const shape = `${table}|${columns.join(",")}|${rows.length}`
    const cached = insertSql.get(shape)
    if (typeof cached === "string") return c.executeQuery(CompiledQuery.raw(cached, parameters))
    const compiled = c
      .insertInto(table)
      .values(rows as never)
      .compile()
    if (cached === undefined && insertSql.size < 512) {
      const same =
        compiled.parameters.length === parameters.length && compiled.parameters.every((p, i) => p === parameters[i])
      insertSql.set(shape, same ? compiled.sql : null)
    }
    return c.executeQuery(compiled)
  }

  return { db, connection, query, queryUnique, withTransaction, insertRows }
}
