/**
 * @module ActivityStore
 *
 * The account's API activity log: one row per authenticated API call, written in batches by the
 * HTTP layer's recorder (never on the request's own path), read newest first in pages, and
 * deleted once older than the retention (`Activity.RETENTION_MS`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { KeyMode } from "./Account.js"
import type { Page, StorageError } from "../shared/index.js"

/** One recorded API call. */
export interface ActivityEntry {
  /** A ULID made from `at` (unique; breaks ties between calls of the same millisecond). */
  readonly id: string
  /** When the call arrived, epoch ms. */
  readonly at: number
  readonly customerNo: string
  /** `GET`, `POST`, ... */
  readonly method: string
  /** The path as called, without the query (which may hold a key). */
  readonly path: string
  /** The mode of the key that authenticated the call; `null` for a call authenticated otherwise (a browser session). */
  readonly keyMode: KeyMode | null
  /** The status of the answer, including refusals after authentication (403 allowlist, 429). */
  readonly status: number
  /** The client address as the handler resolved it (socket or trusted proxy); "" when unknown. */
  readonly clientIp: string
  /** The `X-Request-Id` of the answer. */
  readonly requestId: string
}

/** Which statuses a list keeps: one status, or a class of them. */
export type StatusFilter = number | "2xx" | "4xx" | "5xx"

/** What a list of the activity is narrowed to (absent fields: everything). */
export interface ActivityFilter {
  readonly mode?: KeyMode | undefined
  readonly status?: StatusFilter | undefined
}

/** A status range, inclusive below and exclusive above, that a store filters on. */
export interface StatusRange {
  readonly from: number
  readonly below: number
}

/** The filter as a store receives it: a key mode and a status range. */
export interface ActivityQuery {
  readonly mode?: KeyMode | undefined
  readonly status?: StatusRange | undefined
}

export interface ActivityStoreShape {
  /**
   * Writes the entries in one transaction (adapters: one multi-row insert). Ids are unique; an
   * entry whose id exists is an error of the caller's (the recorder makes fresh ULIDs).
   */
  readonly append: (entries: ReadonlyArray<ActivityEntry>) => Effect.Effect<void, StorageError>
  /**
   * The customer's entries matching `query`, newest first by `(at, id)`, below the page's key:
   * one range of an index per page, whatever the log's size.
   */
  readonly list: (
    customerNo: string,
    query: ActivityQuery,
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<ActivityEntry>, StorageError>
  /** The time of the customer's latest call with a key of `mode` (within what is kept). */
  readonly lastUsed: (customerNo: string, mode: KeyMode) => Effect.Effect<Option.Option<number>, StorageError>
  /** Deletes up to `limit` entries older than `before` (`at < before`); how many it deleted. */
  readonly deleteBefore: (before: number, limit: number) => Effect.Effect<number, StorageError>
}

export class ActivityStore extends Context.Tag("@waybill/core/ActivityStore")<ActivityStore, ActivityStoreShape>() {}
