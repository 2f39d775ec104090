/**
 * @module IdempotencyStore
 *
 * The port behind `Idempotency-Key`: one row per key and scope (an account and a key mode),
 * holding the request's fingerprint, a claim while the first request runs, and the answer once
 * it is known. Shared by every host on one database, so a retry that lands on another host is
 * answered the same way.
 *
 * Every write is conditional on the claim `token` the caller holds, so a request whose claim
 * was taken over (a stale claim of a crashed host) can never store an answer or release a claim
 * that is no longer its own.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { StorageError } from "../shared/index.js"
import type { KeyMode } from "./Account.js"

/** Whose keys these are: idempotency keys of one account and key mode never meet another's. */
export interface IdempotencyScope {
  readonly customerNo: string
  readonly mode: KeyMode
}

/** A stored answer, replayed byte for byte (status, the route's own header fields, body text). */
export interface StoredAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** A claim on a key: written by the first request, before it runs. */
export interface IdempotencyClaim {
  readonly scope: IdempotencyScope
  readonly key: string
  /** SHA-256 hex of the request's method, target and body. */
  readonly fingerprint: string
  /** The claimant's secret: only the holder may complete or release the claim. */
  readonly token: string
  /** Epoch ms. */
  readonly createdAt: number
  /** Epoch ms: a claim still unanswered after this belonged to a host that died; it may be taken over. */
  readonly lockedUntil: number
  /** Epoch ms: the record is forgotten (and deleted by the cleanup) after this. */
  readonly expiresAt: number
}

/** A key's row as stored: the claim, and the answer once the first request finished. */
export interface IdempotencyRecord extends IdempotencyClaim {
  readonly answer: Option.Option<StoredAnswer>
}

export interface IdempotencyStoreShape {
  /**
   * Claims a key with one atomic insert. `None`: the claim is the caller's. `Some(record)`: the
   * key was already there (in any state); nothing was written.
   */
  readonly claim: (claim: IdempotencyClaim) => Effect.Effect<Option.Option<IdempotencyRecord>, StorageError>
  /**
   * Replaces the row of `claim.key` with `claim` when it still carries `previousToken` and is
   * either expired (`expiresAt <= claim.createdAt`) or an unanswered claim whose lock has run out
   * (`lockedUntil <= claim.createdAt`). True when the caller now holds the key; of two callers
   * racing on one row, at most one gets true.
   */
  readonly takeOver: (claim: IdempotencyClaim, previousToken: string) => Effect.Effect<boolean, StorageError>
  /**
   * Stores the answer of the claim held with `token`. False when the caller no longer holds an
   * unanswered claim (taken over, released, answered): nothing was written. Runs in the caller's
   * transaction when one is open, so the answer commits with the work it describes.
   */
  readonly complete: (
    scope: IdempotencyScope,
    key: string,
    token: string,
    answer: StoredAnswer
  ) => Effect.Effect<boolean, StorageError>
  /** Deletes the unanswered claim held with `token` (the request failed in a way not worth keeping). */
  readonly release: (scope: IdempotencyScope, key: string, token: string) => Effect.Effect<void, StorageError>
  /** Deletes up to `limit` records expired at `now` (`expiresAt <= now`); how many it deleted. */
  readonly deleteExpired: (now: number, limit: number) => Effect.Effect<number, StorageError>
}

export class IdempotencyStore extends Context.Tag("@waybill/core/IdempotencyStore")<
  IdempotencyStore,
  IdempotencyStoreShape
>() {}
