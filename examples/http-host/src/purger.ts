/**
 * @module purger
 *
 * The host's periodic cleanups over its own database (the `Idempotency-Key` records, the
 * account activity log, the portal's sessions and links): one round soon after start, then one
 * every `everyMs` (default an hour). A failed round is logged and the next one runs as planned;
 * `stop` interrupts the cleanup wherever it is.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { type StorageEngine, StorageKysely } from "@waybill/storage-kysely"

/** When a cleanup runs in this process. */
export interface PurgeOptions {
  /** Pause between rounds, ms (default one hour). */
  readonly everyMs?: number
  /** `false`: no cleanup in this process (another host, or a scheduled CLI run, does it). Default `true`. */
  readonly enabled?: boolean
}

/** A running cleanup. */
export interface RunningPurger {
  readonly stop: () => Promise<void>
}

/** What the storage layer provides a round. */
type Stores = Layer.Layer.Success<ReturnType<typeof StorageKysely.layer>>

const HOUR = 60 * 60 * 1000

/**
 * Forks a cleanup over `engine` (with the host's `clock`, when it has one): `round` deletes and
 * says how many rows; `deleted` and `failed` are its log messages.
 */
export const startPurger = <E>(
  engine: StorageEngine,
  options: PurgeOptions,
  cleanup: { readonly round: Effect.Effect<number, E, Stores>; readonly deleted: string; readonly failed: string },
  clock?: Clock.Clock
): RunningPurger => {
  if (options.enabled === false) return { stop: () => Promise.resolve() }
  const round = cleanup.round.pipe(
    Effect.tap((n) => (n > 0 ? Effect.logDebug(cleanup.deleted, n) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning(cleanup.failed, e))
  )
  const stores = StorageKysely.layer(engine)
  const fiber = Effect.runFork(
    round.pipe(
      Effect.delay(1_000),
      Effect.repeat(Schedule.spaced(options.everyMs ?? HOUR)),
      Effect.provide(clock === undefined ? stores : Layer.merge(stores, Layer.setClock(clock)))
    )
  )
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}
