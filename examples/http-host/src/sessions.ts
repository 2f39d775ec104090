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
import { Sessions } from "@waybill/core"
import type { StorageEngine } from "@waybill/storage-kysely"
import { type PurgeOptions, type RunningPurger, startPurger } from "./purger.js"

/** Settings of the portal sessions' purge in the host (`enabled: false`: another host of the fleet does it). */
export type SessionPurgeOptions = PurgeOptions

/**
 * Forks the periodic purge over `engine` (with the host's `clock`, when it has one); `stop`
 * interrupts it wherever it is.
 */
export const startSessionPurger = (
  engine: StorageEngine,
  options: SessionPurgeOptions = {},
  clock?: Clock.Clock
): RunningPurger =>
  startPurger(
    engine,
    options,
    {
      round: Sessions.purgeExpired(),
      deleted: "portal: expired sessions and links deleted",
      failed: "portal: session purge failed; the next round tries again"
    },
    clock
  )
