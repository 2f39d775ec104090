/**
 * @module idempotency
 *
 * The example host's cleanup of `Idempotency-Key` records: `Idempotency.purgeExpired` over the
 * same database, once soon after start and then every `everyMs` (default an hour). Nothing
 * depends on it for correctness (expired records are ignored and replaced when their key comes
 * again); it keeps the table at about a day of keys. A failed round is logged and the next one
 * runs as planned. `pnpm waybill idempotency purge` runs one round by hand.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import { Idempotency } from "@waybill/core"
import { type StorageEngine, StorageKysely } from "@waybill/storage-kysely"

/** Settings of the cleanup. */
export interface IdempotencyPurgeOptions {
  /** Pause between rounds, ms (default one hour). */
  readonly everyMs?: number
}

/** A running cleanup. */
export interface RunningPurger {
  readonly stop: () => Promise<void>
}

const HOUR = 60 * 60 * 1000

/** Forks the periodic cleanup over `engine`; `stop` interrupts it wherever it is. */
export const startIdempotencyPurger = (engine: StorageEngine, options: IdempotencyPurgeOptions = {}): RunningPurger => {
  const round = Idempotency.purgeExpired.pipe(
    Effect.tap((n) => (n > 0 ? Effect.logDebug("idempotency: expired records deleted", n) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning("idempotency: cleanup failed; the next round tries again", e))
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
