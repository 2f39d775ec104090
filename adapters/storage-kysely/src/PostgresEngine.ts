/**
 * @module PostgresEngine
 *
 * The PostgreSQL engine: Waybill's statements on a `pg` pool the host creates. A statement
 * outside a transaction borrows a pooled client for itself; a transaction holds one client from
 * `BEGIN` to `COMMIT` (or `ROLLBACK` on failure, defect or interruption). No group commit: the
 * server runs concurrent transactions on their own connections and syncs its WAL for them.
 *
 * The adapter does not import `pg`: {@link PgPool} is the part of `pg.Pool` it uses.
 *
 * Lost connections: `pg.Pool` opens a new connection for the next checkout, so the engine only
 * has to make sure a broken client is never handed out again and its error never crashes the
 * process. It listens for `error` on the pool (an idle client whose server went away) and on each
 * client it has checked out (one that broke between two statements), reports them to
 * `onConnectionError`, and releases a client that broke with the error, which makes the pool
 * discard it. The statement that met the broken connection fails with its error; the caller's
 * next one gets a fresh connection.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Kysely, PostgresDialect } from "kysely"
import {
  type BatchOutcome,
  type BatchStatement,
  engineDialect,
  type EngineOptions,
  type Result,
  runInOrder,
  type Run,
  type StorageEngine
} from "./Engine.js"
import { StorageError } from "./internal/core.js"
import { health } from "./Migrations.js"
import type { WaybillDatabase } from "./Tables.js"

/** What `pg` answers to a query. */
export interface PgResult {
  readonly command: string
  readonly rowCount: number | null
  readonly rows: Array<any>
}

/** A pooled client (`pg.PoolClient`). */
export interface PgClient {
  query(sql: string, parameters: Array<unknown>): Promise<PgResult>
  /** Returns the client to the pool; with an error, the pool discards it. */
  release(error?: Error | boolean): void
  /** `pg.Client`'s events: the engine listens for `error` while it holds the client. */
  on?(event: "error", listener: (error: Error) => void): unknown
  removeListener?(event: "error", listener: (error: Error) => void): unknown
}

/** The part of `pg.Pool` the engine uses. */
export interface PgPool {
  connect(): Promise<PgClient>
  query(sql: string, parameters: Array<unknown>): Promise<PgResult>
  end(): Promise<void>
  /** `pg.Pool`'s events: the engine listens for `error` (an idle client lost its connection). */
  on?(event: "error", listener: (error: Error) => void): unknown
}

/** Options of {@link postgresEngine}. */
export interface PostgresEngineOptions extends EngineOptions {
  /**
   * Told about a connection that broke (the server restarted, a network cut): the pool has
   * discarded it already. Default: ignored. Never given anything secret by the engine, but the
   * error is `pg`'s own, so a host logging it should log its message only.
   */
  readonly onConnectionError?: (error: Error) => void
}

const AFFECTING: ReadonlySet<string> = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"])

const toResult = (r: PgResult): Result =>
  AFFECTING.has(r.command) ? { rows: r.rows ?? [], numAffectedRows: BigInt(r.rowCount ?? 0) } : { rows: r.rows ?? [] }

/**
 * The engine over `pool`. `close()` (or `kysely.destroy()`) ends the pool. Size the pool for
 * the concurrent transactions you expect (each holds a client until it ends).
 */
export const postgresEngine = (pool: PgPool, options: PostgresEngineOptions = {}): StorageEngine => {
  const onStatement = options.onStatement
  const onConnectionError = options.onConnectionError ?? (() => undefined)
  pool.on?.("error", onConnectionError)

  /** A checked-out client whose connection breaks while held is released with that error. */
  interface Held {
    readonly client: PgClient
    readonly release: (error?: boolean) => void
  }
  const checkout = async (): Promise<Held> => {
    const client = await pool.connect()
    let broken: Error | undefined
    const listener = (error: Error) => {
      broken ??= error
      onConnectionError(error)
    }
    client.on?.("error", listener)
    let released = false
    return {
      client,
      release: (error) => {
        if (released) return
        released = true
        client.removeListener?.("error", listener)
        client.release(broken ?? error)
      }
    }
  }
  const send = (
    target: { query(sql: string, parameters: Array<unknown>): Promise<PgResult> },
    sql: string,
    parameters: ReadonlyArray<unknown>
  ): Promise<Result> => {
    if (onStatement !== undefined) onStatement(sql, parameters)
    return target.query(sql, [...parameters]).then(toResult)
  }
  const runOn =
    (target: { query(sql: string, parameters: Array<unknown>): Promise<PgResult> }): Run =>
    (sql, parameters, onError) =>
      Effect.tryPromise({ try: () => send(target, sql, parameters), catch: onError })

  const begin = (snapshot: boolean): Effect.Effect<Held, StorageError> =>
    Effect.tryPromise({
      try: async () => {
        const held = await checkout()
        try {
          await send(held.client, snapshot ? "start transaction isolation level repeatable read" : "begin", [])
        } catch (error) {
          held.release(true)
          throw error
        }
        return held
      },
      catch: (cause) => new StorageError({ operation: "transaction.begin", cause })
    })

  // Uninterruptible: once COMMIT is sent its outcome must be known before release decides
  // whether a ROLLBACK is still owed.
  const commit = ({ client }: Held) =>
    Effect.uninterruptible(
      Effect.tryPromise({
        try: () => send(client, "commit", []),
        catch: (cause) => new StorageError({ operation: "transaction.commit", cause })
      })
    )

  // After a failure, defect, interruption or failed COMMIT. A client whose ROLLBACK failed is
  // discarded by the pool; the original cause is what the caller needs to see.
  const end = (held: Held, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
    Exit.isSuccess(exit)
      ? Effect.sync(() => held.release())
      : Effect.tryPromise(() => send(held.client, "rollback", [])).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Effect.sync(() => held.release()),
            onFailure: (cause) =>
              Effect.zipRight(
                Effect.sync(() => held.release(true)),
                Effect.logWarning("waybill storage: rollback failed", cause)
              )
          })
        )

  const transaction: StorageEngine["transaction"] = (snapshot, body) =>
    Effect.acquireUseRelease(begin(snapshot), (held) => Effect.zipLeft(body(runOn(held.client)), commit(held)), end)

  // A batch is a transaction of its statements; one that must change a row and did not fails it
  // (so it rolls back) with this, which the batch answers as `unchanged`.
  class Unchanged {
    constructor(readonly index: number) {}
  }
  const batch = <E>(
    statements: ReadonlyArray<BatchStatement>,
    onError: (cause: unknown, index: number) => E
  ): Effect.Effect<BatchOutcome, E | StorageError> => {
    const body = (run: Run) =>
      Effect.flatMap(runInOrder(run, statements, onError), (outcome) =>
        outcome.unchanged === undefined ? Effect.succeed(outcome) : Effect.fail(new Unchanged(outcome.unchanged))
      )
    return transaction(false, body).pipe(
      Effect.catchIf(
        (e): e is Unchanged => e instanceof Unchanged,
        (e) => Effect.succeed<BatchOutcome>({ unchanged: e.index })
      )
    ) as Effect.Effect<BatchOutcome, E | StorageError>
  }

  const kysely = new Kysely<WaybillDatabase>({
    dialect: engineDialect(() => engine, new PostgresDialect({ pool: pool as never }))
  })
  const engine: StorageEngine = {
    dialect: "postgres",
    kysely,
    run: runOn(pool),
    transaction,
    batch,
    reserve: async () => {
      const held = await checkout()
      return {
        run: (sql, parameters) => send(held.client, sql, parameters),
        release: (broken) => held.release(broken === true ? true : undefined)
      }
    },
    health: () => health(engine),
    close: () => pool.end()
  }
  return engine
}
