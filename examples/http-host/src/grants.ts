/**
 * @module grants
 *
 * The example host's cleanup of download grants: `Documents.purgeExpiredGrants` over the same
 * database, once soon after start and then every `everyMs` (default a minute). Each documents
 * lookup stores one grant that lives 15 minutes; nothing depends on the cleanup for
 * correctness (an expired link is refused whether its grant is still there or not), it keeps
 * the table at about a quarter of an hour of lookups. With several hosts on one database, one
 * of them is enough (`enabled: false` on the others), though running it everywhere is harmless.
 */
import { Documents } from "@waybill/core"
import type * as Clock from "effect/Clock"
import type { StorageEngine } from "@waybill/storage-kysely"
import { type PurgeOptions, type RunningPurger, startPurger } from "./purger.js"

/** Settings of the cleanup (`enabled: false`: another host does it). */
export type GrantPurgeOptions = PurgeOptions

const MINUTE = 60_000

/** Forks the periodic cleanup over `engine` (on the host's `clock`, when it has one). */
export const startGrantPurger = (
  engine: StorageEngine,
  options: GrantPurgeOptions = {},
  clock?: Clock.Clock
): RunningPurger =>
  startPurger(
    engine,
    { everyMs: MINUTE, ...options },
    {
      round: Documents.purgeExpiredGrants,
      deleted: "documents: expired download grants deleted",
      failed: "documents: grant cleanup failed; the next round tries again"
    },
    clock
  )
