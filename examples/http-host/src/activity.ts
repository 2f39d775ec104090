/**
 * @module activity
 *
 * The example host's retention of the account activity log: `Activity.purgeExpired` (entries
 * older than 30 days) over the same database, once soon after start and then every `everyMs`
 * (default an hour), like the `Idempotency-Key` cleanup beside it. A failed round is logged and
 * the next one runs as planned. `pnpm waybill activity purge` runs one round by hand.
 *
 * The recording itself is `@waybill/http`'s (batched, flushed by `handler.dispose()` on
 * shutdown); this module only keeps the table at 30 days.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import { Activity } from "@waybill/core"
import { type StorageEngine, StorageKysely } from "@waybill/storage-kysely"

/** Settings of the activity log in the host: recording, and the purge. */
export interface ActivityHostOptions {
  /**
   * `false`: this process records no API calls (`createHandler`'s `activity: false`; the bench
   * measures booking with and without). Default `true`.
   */
  readonly record?: boolean
  /** Pause between rounds, ms (default one hour). */
  readonly everyMs?: number
  /**
   * `false`: no purge in this process (another host, or a scheduled
   * `pnpm waybill activity purge`, does it). Default `true`.
   */
  readonly enabled?: boolean
}

/** A running purge. */
export interface RunningActivityPurger {
  readonly stop: () => Promise<void>
}

const HOUR = 60 * 60 * 1000

/** Forks the periodic purge over `engine`; `stop` interrupts it wherever it is. */
export const startActivityPurger = (
  engine: StorageEngine,
  options: ActivityHostOptions = {}
): RunningActivityPurger => {
  if (options.enabled === false) return { stop: () => Promise.resolve() }
  const round = Activity.purgeExpired.pipe(
    Effect.tap((n) => (n > 0 ? Effect.logDebug("activity: entries older than 30 days deleted", n) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning("activity: purge failed; the next round tries again", e))
  )
  const fiber = Effect.runFork(
    round.pipe(
      Effect.delay(1_000),
      Effect.repeat(Schedule.spaced(options.everyMs ?? HOUR)),
      Effect.provide(StorageKysely.layer(engine))
    )
  )
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}
