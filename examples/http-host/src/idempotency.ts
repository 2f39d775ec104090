/**
 * @module idempotency
 *
 * The example host's cleanup of `Idempotency-Key` records: `Idempotency.purgeExpired` over the
 * same database, once soon after start and then every `everyMs` (default an hour). Nothing
 * depends on it for correctness (expired records are ignored and replaced when their key comes
 * again); it keeps the table at about a day of keys. A failed round is logged and the next one
 * runs as planned. `pnpm waybill idempotency purge` runs one round by hand.
 */
import { Idempotency } from "@waybill/core"
import type { StorageEngine } from "@waybill/storage-kysely"
import { type PurgeOptions, type RunningPurger, startPurger } from "./purger.js"

/** Settings of the cleanup (`enabled: false`: another host, or `pnpm waybill idempotency purge`, does it). */
export type IdempotencyPurgeOptions = PurgeOptions

/** Forks the periodic cleanup over `engine`; `stop` interrupts it wherever it is. */
export const startIdempotencyPurger = (engine: StorageEngine, options: IdempotencyPurgeOptions = {}): RunningPurger =>
  startPurger(engine, options, {
    round: Idempotency.purgeExpired,
    deleted: "idempotency: expired records deleted",
    failed: "idempotency: cleanup failed; the next round tries again"
  })
