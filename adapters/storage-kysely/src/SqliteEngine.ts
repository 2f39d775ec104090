/**
 * @module SqliteEngine
 *
 * The SQLite engine: Waybill's statements on one better-sqlite3 handle, synchronously (a
 * statement costs no promise and no fiber suspension), each SQL text prepared once.
 *
 * **Group commit.** A transaction (a "unit") runs on the handle's one connection, alone: the
 * handle's lock is held while its body runs, and its work sits under a `SAVEPOINT`. When the
 * body ends, the savepoint is released (success) or rolled back to (failure: only that unit's
 * writes are undone) and the lock is freed, but the SQLite transaction stays open: units that
 * arrive meanwhile run in it too, one after another. The batch commits when the event loop has
 * nothing else to run first (`setImmediate`), or at the next free moment of the lock; units that
 * arrive after that start the next batch. A unit that wrote is answered only once the `COMMIT`
 * holding its writes has returned; if that `COMMIT` fails, every unit of the batch fails with
 * `StorageError("transaction.commit")`. A unit that only read is answered when its body ends.
 * A single write outside a transaction is a unit of its own (without a savepoint: SQLite undoes a
 * failed statement by itself); a single read runs at once when no unit is running, and waits for
 * the lock otherwise. Reads outside a unit may therefore see writes of the open batch that are
 * not yet committed (they are, unless the `COMMIT` fails).
 *
 * A {@link StorageEngine.batch} (a fixed list of statements, such as a booking) is queued rather
 * than run at once: the flush runs every queued batch back to back, each under its own
 * savepoint, just before the `COMMIT`. SQLite's work for a whole group of requests then runs in
 * one stretch instead of between each request's own code, which measured two to three times
 * cheaper per statement (`docs/benchmarks.md`).
 *
 * Durability is SQLite's: in WAL mode a returned `COMMIT` is in the WAL file, so a killed process
 * (`kill -9`) loses nothing it answered (with `synchronous = NORMAL`, a power cut may lose the
 * last commits; `FULL` syncs each `COMMIT`, once per batch).
 *
 * Use one engine per database file per process: {@link sqliteEngine} returns the same engine for
 * the same handle, so every layer over it shares the lock and the batch. A second handle on the
 * same file would contend through SQLite's busy handler, which blocks the event loop.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Kysely, SqliteDialect } from "kysely"
import {
  type BatchOutcome,
  type BatchStatement,
  engineDialect,
  type EngineOptions,
  type Result,
  type Run,
  type StorageEngine
} from "./Engine.js"
import { StorageError } from "./internal/core.js"
import { makeLock } from "./internal/lock.js"
import { health } from "./Migrations.js"
import type { WaybillDatabase } from "./Tables.js"

/** A prepared statement of a synchronous SQLite driver (better-sqlite3's `Statement`). */
export interface SqliteStatement {
  /** Whether the statement returns rows (`SELECT`, `... RETURNING`). */
  readonly reader: boolean
  /** Whether the statement leaves the database as it is. */
  readonly readonly: boolean
  all(...parameters: Array<any>): Array<unknown>
  run(...parameters: Array<any>): { readonly changes: number | bigint }
  /** Rows as arrays of column values instead of objects (better-sqlite3's `raw`). */
  raw(toggle?: boolean): unknown
  /** The result's columns, in order. */
  columns(): ReadonlyArray<{ readonly name: string }>
}

/** A synchronous SQLite driver's database handle (better-sqlite3's `Database`). */
export interface SqliteHandle {
  prepare(sql: string): SqliteStatement
  /** Whether a transaction is open on the handle. */
  readonly inTransaction: boolean
  close(): unknown
}

/** Options of {@link sqliteEngine}. */
export interface SqliteEngineOptions extends EngineOptions {
  /** Prepared statements kept per handle (least recently used dropped beyond this; default 512). */
  readonly statementCache?: number
}

const engines = new WeakMap<object, StorageEngine>()

/** A statement as the engine keeps it: readers with their column names (they run raw). */
interface Prepared {
  readonly statement: SqliteStatement
  /** The result's column names, for statements that return rows; undefined for the others. */
  readonly names: ReadonlyArray<string> | undefined
}

/**
 * Rows read as arrays (`raw`) made into objects here. better-sqlite3 builds each row object
 * through V8's C++ API, property by property, which cost about 1.9 us a row of 18 columns on the
 * bench machine (a 100-document lookup: 430 us in the query against 240 us raw plus this loop):
 * objects built in JavaScript, always in the same column order, share one hidden class. Later
 * columns of the same name win, as in better-sqlite3's own objects.
 */
const rowsOf = (names: ReadonlyArray<string>, raw: Array<ReadonlyArray<unknown>>): Array<Record<string, unknown>> => {
  const rows = new Array<Record<string, unknown>>(raw.length)
  for (let r = 0; r < raw.length; r++) {
    const values = raw[r]!
    const row: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i]
    rows[r] = row
  }
  return rows
}

/**
 * A statement whose trailing `limit ?` (and `offset ?`) is written into its text. SQLite reads a
 * bound LIMIT's value when it plans (3.47 and later) and so marks the statement expired each time
 * that parameter is bound: every run prepared it again. A webhook claim scan cost 210 us a run
 * instead of 25, a documents lookup's orders query (compiled once, its limit bound) the same
 * kind of overhead. With the value in the text, each limit value is its own cached statement.
 * Kysely puts a statement's own LIMIT and OFFSET last, so they are its last parameters; anything
 * else (a limit in a subquery, a value that is not an integer) is left bound.
 */
export const inlineLimits = (
  sql: string,
  parameters: ReadonlyArray<unknown>
): { readonly sql: string; readonly parameters: ReadonlyArray<unknown> } => {
  // Every statement passes here: two suffix checks, not a regular expression over its text.
  const count = sql.endsWith(LIMIT_OFFSET) ? 2 : sql.endsWith(LIMIT) ? 1 : 0
  if (count === 0 || parameters.length < count) return { sql, parameters }
  const values = parameters.slice(parameters.length - count)
  if (!values.every((v) => (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "bigint"))
    return { sql, parameters }
  const limit = `limit ${String(values[0])}${count === 2 ? ` offset ${String(values[1])}` : ""}`
  const head = sql.length - (count === 2 ? LIMIT_OFFSET : LIMIT).length
  return { sql: sql.slice(0, head) + limit, parameters: parameters.slice(0, parameters.length - count) }
}

const LIMIT = "limit ?"
const LIMIT_OFFSET = "limit ? offset ?"

const SAVEPOINT = "savepoint waybill_unit"
const RELEASE = "release waybill_unit"
const ROLLBACK_TO = "rollback to waybill_unit"

/**
 * The engine over `handle` (made on first use; later calls with the same handle return it and
 * ignore their options). The engine owns nothing but its lock and statement cache until
 * `close()` (or `kysely.destroy()`), which closes the handle.
 */
export const sqliteEngine = (handle: SqliteHandle, options: SqliteEngineOptions = {}): StorageEngine => {
  const existing = engines.get(handle)
  if (existing !== undefined) return existing
  const engine = makeSqliteEngine(handle, options)
  engines.set(handle, engine)
  return engine
}

const makeSqliteEngine = (handle: SqliteHandle, options: SqliteEngineOptions): StorageEngine => {
  const onStatement = options.onStatement
  const max = Math.max(16, options.statementCache ?? 512)
  const cache = new Map<string, Prepared>()
  const prepare = (sql: string): Prepared => {
    const hit = cache.get(sql)
    if (hit !== undefined) {
      cache.delete(sql)
      cache.set(sql, hit)
      return hit
    }
    const statement = handle.prepare(sql)
    let names: ReadonlyArray<string> | undefined
    if (statement.reader) {
      statement.raw(true)
      names = statement.columns().map((c) => c.name)
    }
    const prepared: Prepared = { statement, names }
    cache.set(sql, prepared)
    if (cache.size > max) cache.delete(cache.keys().next().value as string)
    return prepared
  }
  const runPrepared = ({ statement, names }: Prepared, sql: string, parameters: ReadonlyArray<unknown>): Result => {
    if (onStatement !== undefined) onStatement(sql, parameters)
    if (names !== undefined) return { rows: rowsOf(names, statement.all(parameters) as Array<ReadonlyArray<unknown>>) }
    return { rows: [], numAffectedRows: BigInt(statement.run(parameters).changes) }
  }
  const exec = (sql: string, parameters: ReadonlyArray<unknown> = []): Result =>
    runPrepared(prepare(sql), sql, parameters)

  // The batch: `open` once its BEGIN ran; `pending` holds the units that wrote in it, each
  // waiting for the COMMIT.
  type Ticket = (failure: { readonly cause: unknown } | undefined) => void
  let open = false
  let pending: Array<Ticket> = []
  let flushScheduled = false
  let flushDue = false

  // Batches wait here for the next flush, which runs them back to back (see `batch`).
  interface Queued {
    readonly statements: ReadonlyArray<BatchStatement>
    readonly onError: (cause: unknown, index: number) => unknown
    readonly answer: (outcome: Effect.Effect<BatchOutcome, unknown>) => void
  }
  let queue: Array<Queued> = []

  const settle = (units: ReadonlyArray<Ticket>, failure: { readonly cause: unknown } | undefined) => {
    for (const unit of units) unit(failure)
  }

  /**
   * Runs one queued batch in the open transaction (begun if none is), under the unit savepoint,
   * and answers it: at once when it kept nothing (it failed, or a `mustChange` statement changed
   * nothing), else through `pending`, after the COMMIT.
   */
  const runQueued = ({ answer, onError, statements }: Queued): void => {
    try {
      if (!open) {
        exec("begin immediate")
        open = true
      }
      exec(SAVEPOINT)
    } catch (cause) {
      checkLost()
      return answer(Effect.fail(new StorageError({ operation: "transaction.begin", cause })))
    }
    const undo = () => {
      try {
        exec(ROLLBACK_TO)
        exec(RELEASE)
      } catch {
        // Only a lost transaction makes these fail; checkLost settles that.
      }
      checkLost()
    }
    let wrote = false
    const results = new Array<Result>(statements.length)
    for (let i = 0; i < statements.length; i++) {
      const statement = statements[i]!
      const { parameters, sql } = inlineLimits(statement.sql, statement.parameters)
      let result: Result
      try {
        if (!handle.inTransaction) throw new Error("the transaction was rolled back by SQLite")
        const prepared = prepare(sql)
        if (!prepared.statement.readonly) wrote = true
        result = runPrepared(prepared, sql, parameters)
      } catch (cause) {
        undo()
        return answer(Effect.fail(onError(cause, i)))
      }
      if (statement.mustChange === true && (result.numAffectedRows ?? 0n) === 0n) {
        undo()
        return answer(Effect.succeed({ unchanged: i }))
      }
      results[i] = result
    }
    try {
      exec(RELEASE)
    } catch (cause) {
      undo()
      return answer(Effect.fail(controlError("transaction.commit")(cause)))
    }
    checkLost()
    const outcome: BatchOutcome = { results }
    if (!wrote) return answer(Effect.succeed(outcome))
    pending.push((failure) =>
      answer(
        failure === undefined ? Effect.succeed(outcome) : Effect.fail(controlError("transaction.commit")(failure.cause))
      )
    )
  }

  /** Commits the open batch and answers its units, after running the queued batches in it. Only while no unit's body is running. */
  const commitNow = () => {
    flushDue = false
    if (queue.length > 0) {
      const batches = queue
      queue = []
      for (const queued of batches) runQueued(queued)
    }
    const units = pending
    pending = []
    if (!open) return settle(units, undefined)
    open = false
    try {
      exec("commit")
    } catch (cause) {
      // A COMMIT that failed (SQLITE_BUSY, I/O) may leave the transaction open: end it.
      if (handle.inTransaction) {
        try {
          exec("rollback")
        } catch {
          // The batch fails either way; the handle is out of the transaction or unusable.
        }
      }
      return settle(units, { cause })
    }
    settle(units, undefined)
  }

  /** SQLite rolled the whole transaction back itself (SQLITE_FULL, I/O errors): every unit in it fails. */
  const checkLost = () => {
    if (open && !handle.inTransaction) {
      open = false
      const units = pending
      pending = []
      settle(units, { cause: new Error("SQLite rolled back the batch's transaction") })
    }
  }

  const lock = makeLock(() => {
    if (flushDue) commitNow()
  })

  const flush = () => {
    flushScheduled = false
    if (lock.locked) flushDue = true
    else commitNow()
  }
  const scheduleFlush = () => {
    if (!flushScheduled && (open || queue.length > 0)) {
      flushScheduled = true
      setImmediate(flush)
    }
  }

  const controlError = (operation: string) => (cause: unknown) => new StorageError({ operation, cause })

  /**
   * Opens the batch's transaction if none is (`BEGIN IMMEDIATE`) and, for a unit that may fail
   * alone, its savepoint. The lock is held. A failure has freed the lock.
   */
  const enter = (savepoint: boolean): StorageError | undefined => {
    try {
      if (!open) {
        exec("begin immediate")
        open = true
      }
    } catch (cause) {
      lock.release()
      return new StorageError({ operation: "transaction.begin", cause })
    }
    if (savepoint) {
      try {
        exec(SAVEPOINT)
      } catch (cause) {
        checkLost()
        lock.release()
        scheduleFlush()
        return new StorageError({ operation: "transaction.begin", cause })
      }
    }
    return undefined
  }

  /**
   * Ends a unit that {@link enter} opened: releases its savepoint (`kept`) or rolls back to it,
   * frees the lock, and answers what the unit waits for: the `COMMIT` that holds its writes when
   * it kept any, nothing otherwise. The wait is registered before the lock is freed, so the
   * batch it joined cannot commit without answering it.
   */
  const leave = (savepoint: boolean, kept: boolean, wrote: boolean): Effect.Effect<void, StorageError> => {
    let endFailure: { readonly cause: unknown } | undefined
    if (savepoint && handle.inTransaction) {
      try {
        if (kept) exec(RELEASE)
      } catch (cause) {
        endFailure = { cause }
      }
      if (!kept || endFailure !== undefined) {
        try {
          exec(ROLLBACK_TO)
          exec(RELEASE)
        } catch {
          // Only a lost transaction makes these fail; checkLost settles that below.
        }
      }
    } else if (kept && !handle.inTransaction) {
      endFailure = { cause: new Error("the transaction was rolled back by SQLite") }
    }
    checkLost()
    const waits = kept && endFailure === undefined && wrote
    let committed: Effect.Effect<void, StorageError> = Effect.void
    if (waits) {
      let ticket: { failure: { readonly cause: unknown } | undefined } | undefined
      let resume: ((effect: Effect.Effect<void, StorageError>) => void) | undefined
      const answer = (failure: { readonly cause: unknown } | undefined) =>
        failure === undefined ? Effect.void : Effect.fail(controlError("transaction.commit")(failure.cause))
      pending.push((failure) => {
        if (resume === undefined) ticket = { failure }
        else resume(answer(failure))
      })
      committed = Effect.async<void, StorageError>((callback) => {
        if (ticket !== undefined) callback(answer(ticket.failure))
        else resume = callback
      })
    }
    lock.release()
    scheduleFlush()
    if (endFailure !== undefined) return Effect.fail(controlError("transaction.commit")(endFailure.cause))
    return committed
  }

  /**
   * A unit of the batch: `body` runs with the lock held, in the open transaction (begun if
   * none is), under a savepoint when `savepoint`. Answered after the COMMIT when it wrote.
   */
  const unit = <A, E, R>(
    savepoint: boolean,
    body: (run: Run) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StorageError, R> =>
    Effect.uninterruptibleMask((restore) => {
      // The lock is free unless another unit's body is waiting on something: taken at once then,
      // without the steps of an effect that could wait.
      const locked = (): Effect.Effect<A, E | StorageError, R> => {
        const failed = enter(savepoint)
        if (failed !== undefined) return Effect.fail(failed)
        let wrote = false
        let active = true
        const run: Run = (text, bound, onError) => {
          const { parameters, sql } = inlineLimits(text, bound)
          try {
            // A fiber forked inside the unit that outlives it must not write into another unit.
            if (!active) throw new Error("the transaction this statement belongs to has ended")
            // Never let a statement of a unit run outside the batch's transaction.
            if (!handle.inTransaction) throw new Error("the transaction was rolled back by SQLite")
            const statement = prepare(sql)
            if (!statement.statement.readonly) wrote = true
            return Effect.succeed(runPrepared(statement, sql, parameters))
          } catch (cause) {
            return Effect.fail(onError(cause))
          }
        }
        const ended = (exit: Exit.Exit<A, E | StorageError>): Effect.Effect<A, E | StorageError, R> => {
          active = false
          const committed = leave(savepoint, Exit.isSuccess(exit), wrote)
          return Exit.isSuccess(exit) ? Effect.zipRight(committed, exit) : exit
        }
        return Effect.matchCauseEffect(restore(body(run)), {
          onFailure: (cause) => ended(Exit.failCause(cause)),
          onSuccess: (a) => ended(Exit.succeed(a))
        })
      }
      return lock.tryAcquire() ? locked() : Effect.flatMap(restore(lock.acquire), locked)
    })

  /**
   * A batch waits for the next flush of the group commit, which runs every queued batch back to
   * back, each under its own savepoint, and then commits them together: SQLite's work for many
   * requests in one tight run instead of interleaved with each request's own code (which made
   * the same statements two to three times slower, docs/benchmarks.md). Interrupted before the
   * flush, a batch is taken off the queue and never runs.
   */
  const batch = <E>(
    statements: ReadonlyArray<BatchStatement>,
    onError: (cause: unknown, index: number) => E
  ): Effect.Effect<BatchOutcome, E | StorageError> =>
    Effect.async<BatchOutcome, E | StorageError>((resume) => {
      const queued: Queued = { statements, onError, answer: resume as Queued["answer"] }
      queue.push(queued)
      scheduleFlush()
      return Effect.sync(() => {
        const at = queue.indexOf(queued)
        if (at >= 0) queue.splice(at, 1)
      })
    })

  const direct = <E>(
    statement: Prepared,
    sql: string,
    parameters: ReadonlyArray<unknown>,
    onError: (cause: unknown) => E
  ): Effect.Effect<Result, E> => {
    try {
      return Effect.succeed(runPrepared(statement, sql, parameters))
    } catch (cause) {
      return Effect.fail(onError(cause))
    }
  }

  const run: Run = (text, bound, onError) => {
    const { parameters, sql } = inlineLimits(text, bound)
    let statement: Prepared
    try {
      statement = prepare(sql)
    } catch (cause) {
      return Effect.fail(onError(cause))
    }
    if (!statement.statement.readonly) return unit(false, (r) => r(sql, parameters, onError))
    // A read: at once when no unit is running (the usual case), else after it.
    if (!lock.locked) return direct(statement, sql, parameters, onError)
    return Effect.acquireUseRelease(
      lock.acquire,
      () => Effect.suspend(() => direct(statement, sql, parameters, onError)),
      () => Effect.sync(lock.release)
    )
  }

  const kysely = new Kysely<WaybillDatabase>({
    dialect: engineDialect(() => engine, new SqliteDialect({ database: handle as never }))
  })
  const engine: StorageEngine = {
    dialect: "sqlite",
    kysely,
    run,
    transaction: (_snapshot, body) => unit(true, body),
    batch,
    reserve: async () => {
      await Effect.runPromise(lock.acquire)
      // The open batch commits first: Kysely's statements never run inside it.
      if (open || queue.length > 0) commitNow()
      let released = false
      return {
        run: async (sql, parameters) => exec(sql, parameters),
        release: () => {
          if (released) return
          released = true
          lock.release()
        }
      }
    },
    health: () => health(engine),
    close: async () => {
      await Effect.runPromise(lock.acquire)
      try {
        if (open || queue.length > 0) commitNow()
        handle.close()
      } finally {
        // Later statements fail on the closed handle (a StorageError) instead of waiting forever.
        lock.release()
      }
    }
  }
  return engine
}
