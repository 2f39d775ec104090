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
import { Activity } from "@waybill/core"
import type { StorageEngine } from "@waybill/storage-kysely"
import { type PurgeOptions, type RunningPurger, startPurger } from "./purger.js"

/**
 * Settings of the activity log in the host: recording, and the purge (`enabled: false`: another
 * host, or a scheduled `pnpm waybill activity purge`, does it).
 */
export interface ActivityHostOptions extends PurgeOptions {
  /**
   * `false`: this process records no API calls (`createHandler`'s `activity: false`; the bench
   * measures booking with and without). Default `true`.
   */
  readonly record?: boolean
}

/** Forks the periodic purge over `engine`; `stop` interrupts it wherever it is. */
export const startActivityPurger = (engine: StorageEngine, options: ActivityHostOptions = {}): RunningPurger =>
  startPurger(engine, options, {
    round: Activity.purgeExpired,
    deleted: "activity: entries older than 30 days deleted",
    failed: "activity: purge failed; the next round tries again"
  })
