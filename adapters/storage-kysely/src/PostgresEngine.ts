/**
 * @module PostgresEngine
 *
 * The PostgreSQL engine: Waybill's statements on a `pg` pool the host creates. A statement
 * outside a transaction borrows a pooled client for itself; a transaction holds one client from
 * `BEGIN` to `COMMIT` (or `ROLLBACK` on failure, defect or interruption). No group commit: the
 * server runs concurrent transactions on their own connections and syncs its WAL for them.
 *
 * The adapter does not import `pg`: {@link PgPool} is the part of `pg.Pool` it uses.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Kysely, PostgresDialect } from "kysely"
import { engineDialect, type EngineOptions, type Result, type Run, type StorageEngine } from "./Engine.js"
import { StorageError } from "./internal/core.js"
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
}

/** The part of `pg.Pool` the engine uses. */
export interface PgPool {
  connect(): Promise<PgClient>
  query(sql: string, parameters: Array<unknown>): Promise<PgResult>
  end(): Promise<void>
}

const AFFECTING: ReadonlySet<string> = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"])

const toResult = (r: PgResult): Result =>
  AFFECTING.has(r.command) ? { rows: r.rows ?? [], numAffectedRows: BigInt(r.rowCount ?? 0) } : { rows: r.rows ?? [] }

/**
 * The engine over `pool`. `close()` (or `kysely.destroy()`) ends the pool. Size the pool for
 * the concurrent transactions you expect (each holds a client until it ends).
 */
export const postgresEngine = (pool: PgPool, options: EngineOptions = {}): StorageEngine => {
  const onStatement = options.onStatement
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

  const begin = (snapshot: boolean): Effect.Effect<PgClient, StorageError> =>
    Effect.tryPromise({
      try: async () => {
        const client = await pool.connect()
        try {
          await send(client, snapshot ? "start transaction isolation level repeatable read" : "begin", [])
        } catch (error) {
          client.release(true)
          throw error
        }
        return client
      },
      catch: (cause) => new StorageError({ operation: "transaction.begin", cause })
    })

  // Uninterruptible: once COMMIT is sent its outcome must be known before release decides
  // whether a ROLLBACK is still owed.
  const commit = (client: PgClient) =>
    Effect.uninterruptible(
      Effect.tryPromise({
        try: () => send(client, "commit", []),
        catch: (cause) => new StorageError({ operation: "transaction.commit", cause })
      })
    )

  // After a failure, defect, interruption or failed COMMIT. A client whose ROLLBACK failed is
  // discarded by the pool; the original cause is what the caller needs to see.
  const end = (client: PgClient, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
    Exit.isSuccess(exit)
      ? Effect.sync(() => client.release())
      : Effect.tryPromise(() => send(client, "rollback", [])).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Effect.sync(() => client.release()),
            onFailure: (cause) =>
              Effect.zipRight(
                Effect.sync(() => client.release(true)),
                Effect.logWarning("waybill storage: rollback failed", cause)
              )
          })
        )

  const kysely = new Kysely<WaybillDatabase>({
    dialect: engineDialect(() => engine, new PostgresDialect({ pool: pool as never }))
  })
  const engine: StorageEngine = {
    dialect: "postgres",
    kysely,
    run: runOn(pool),
    transaction: (snapshot, body) =>
      Effect.acquireUseRelease(begin(snapshot), (client) => Effect.zipLeft(body(runOn(client)), commit(client)), end),
    reserve: async () => {
      const client = await pool.connect()
      let released = false
      return {
        run: (sql, parameters) => send(client, sql, parameters),
        release: () => {
          if (released) return
          released = true
          client.release()
        }
      }
    },
    close: () => pool.end()
  }
  return engine
}
