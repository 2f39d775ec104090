/**
 * @module Activity
 *
 * The account's recent API calls, as the portal's "API Access and Activity" page shows them:
 * time, endpoint, key mode, status, client address and request id, newest first, filterable by
 * key mode and status, kept {@link RETENTION_MS} (30 days).
 *
 * What is recorded, and when, is the HTTP layer's business (`@waybill/http` records every call
 * whose API key authenticated, in batches written off the request's path); this module reads
 * the log and purges it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { KeyMode } from "./Account.js"
import {
  type ActivityEntry,
  type ActivityFilter,
  type ActivityQuery,
  ActivityStore,
  type StatusFilter,
  type StatusRange
} from "./ActivityStore.js"
import { deleteInBatches, Page } from "../shared/index.js"

export type { ActivityEntry, ActivityFilter, StatusFilter } from "./ActivityStore.js"

/** How long calls are kept: 30 days. */
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000

/** At most this many entries are deleted per statement by {@link purgeExpired}. */
export const PURGE_BATCH = 1000

/** The status classes a filter may name besides one status. */
export const statusClasses = ["2xx", "4xx", "5xx"] as const

/** How the log is paged: newest first by `(at, id)`. */
export const keying: Page.Keying<Page.TimeKey, ActivityEntry> = {
  schema: Page.TimeKeySchema,
  of: (e) => [e.at, e.id]
}

/**
 * The status range a filter stands for: `"4xx"` is 400 to 499, a number is itself. A number
 * that is not an HTTP status (an integer from 100 to 599) matches nothing: an empty range.
 */
export const statusRange = (status: StatusFilter): StatusRange => {
  if (typeof status === "number") {
    return Number.isInteger(status) && status >= 100 && status <= 599
      ? { from: status, below: status + 1 }
      : { from: 0, below: 0 }
  }
  const hundreds = Number(status[0]) * 100
  return { from: hundreds, below: hundreds + 100 }
}

/** Whether an entry passes `filter` (what a store's query selects, as a plain predicate). */
export const matches = (entry: ActivityEntry, filter: ActivityFilter): boolean => {
  if (filter.mode !== undefined && entry.keyMode !== filter.mode) return false
  if (filter.status === undefined) return true
  const range = statusRange(filter.status)
  return entry.status >= range.from && entry.status < range.below
}

/**
 * Reads a status filter as it comes from a form or a query string: `2xx`, `4xx`, `5xx`, or a
 * three-digit status; empty or absent is no filter. Anything else is none.
 */
export const parseStatus = (raw: string | null | undefined): Option.Option<StatusFilter | undefined> => {
  if (raw === null || raw === undefined || raw === "") return Option.some(undefined)
  const lower = raw.toLowerCase()
  if ((statusClasses as ReadonlyArray<string>).includes(lower)) return Option.some(lower as StatusFilter)
  if (/^[1-5]\d\d$/.test(raw)) return Option.some(Number(raw))
  return Option.none()
}

const queryOf = (filter: ActivityFilter): ActivityQuery => ({
  ...(filter.mode === undefined ? {} : { mode: filter.mode }),
  ...(filter.status === undefined ? {} : { status: statusRange(filter.status) })
})

/**
 * A page of the account's recorded calls matching `filter`, newest first. Fails with
 * `Page.InvalidPage` for a cursor that is not one of this list's.
 */
export const list = Effect.fn("Activity.list")(function* (
  customerNo: string,
  filter: ActivityFilter,
  page: Page.Query
) {
  const store = yield* ActivityStore
  const query = queryOf(filter)
  return yield* Page.read(page, keying, (request) => store.list(customerNo, query, request))
})

/**
 * When a key of `mode` was last used by the account, as far as the log still knows (30 days),
 * counting only calls at or after `since` (the current key's creation: calls before it were
 * made with the key it replaced). `null` when none.
 */
export const lastUsed = Effect.fn("Activity.lastUsed")(function* (
  customerNo: string,
  mode: KeyMode,
  since: number | null
) {
  const store = yield* ActivityStore
  const at = yield* store.lastUsed(customerNo, mode)
  return Option.match(at, {
    onNone: () => null,
    onSome: (t) => (since !== null && t < since ? null : t)
  })
})

/**
 * Deletes every entry older than {@link RETENTION_MS}, in batches of {@link PURGE_BATCH}; how
 * many it deleted. Hosts run it periodically (the example host hourly).
 */
export const purgeExpired = Effect.gen(function* () {
  const store = yield* ActivityStore
  const before = (yield* Clock.currentTimeMillis) - RETENTION_MS
  return yield* deleteInBatches(PURGE_BATCH, (limit) => store.deleteBefore(before, limit))
})
