/**
 * @module sessions
 *
 * The example host's cleanup of the account portal's sign-in state: `Sessions.purgeExpired`
 * (sessions past the idle or absolute timeout, expired one-time links, sign-in locks that are
 * over) over the same database, once soon after start and then every `everyMs` (default an
 * hour), like the activity purge beside it. A dead session never signs anyone in whether or not
 * it was purged (core checks the timeouts on every request): this only keeps the tables small.
 * A failed round is logged and the next one runs as planned.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Sessions } from "@waybill/core"
import { type StorageEngine, StorageKysely } from "@waybill/storage-kysely"

/** Settings of the portal sessions' purge in the host. */
export interface SessionPurgeOptions {
  /** Pause between rounds, ms (default one hour). */
  readonly everyMs?: number
  /** `false`: no purge in this process (another host of the fleet does it). Default `true`. */
  readonly enabled?: boolean
}

/** A running purge. */
export interface RunningSessionPurger {
  readonly stop: () => Promise<void>
}

const HOUR = 60 * 60 * 1000

/**
 * Forks the periodic purge over `engine` (with the host's `clock`, when it has one); `stop`
 * interrupts it wherever it is.
 */
export const startSessionPurger = (
  engine: StorageEngine,
  options: SessionPurgeOptions = {},
  clock?: Clock.Clock
): RunningSessionPurger => {
  if (options.enabled === false) return { stop: () => Promise.resolve() }
  const round = Sessions.purgeExpired().pipe(
    Effect.tap((n) => (n > 0 ? Effect.logDebug("portal: expired sessions and links deleted", n) : Effect.void)),
    Effect.catchAll((e) => Effect.logWarning("portal: session purge failed; the next round tries again", e))
  )
  const services =
    clock === undefined ? StorageKysely.layer(engine) : Layer.merge(StorageKysely.layer(engine), Layer.setClock(clock))
  const fiber = Effect.runFork(
    round.pipe(Effect.delay(1_000), Effect.repeat(Schedule.spaced(options.everyMs ?? HOUR)), Effect.provide(services))
  )
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}
