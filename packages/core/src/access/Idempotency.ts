/**
 * @module Idempotency
 *
 * `Idempotency-Key` for requests that change something (booking, cancel): a retry of a request
 * whose answer was lost gets that answer again instead of running twice.
 *
 * - Scope: the caller's account and key mode, so two customers (or one customer's test and live
 *   keys) never share a key.
 * - First request: claims the key with one atomic insert (of two hosts racing, one wins), runs,
 *   and stores its answer **in the transaction of its own writes**: a host killed after the
 *   commit has stored the answer with it, so the retry replays it and nothing runs twice.
 * - Same key and same fingerprint within {@link RETENTION_MS}: the stored answer again
 *   (`replayed`). Same key, another fingerprint: {@link IdempotencyKeyMismatch}. The first still
 *   running: {@link IdempotencyKeyInProgress}, and nothing runs.
 * - 5xx answers are not stored: the work is rolled back, the claim released, a retry runs.
 * - A claim left by a host that died before its commit holds the key for {@link CLAIM_LOCK_MS};
 *   then a retry takes it over and runs. Its work never committed (the answer would be in the
 *   same commit), so running again books nothing twice; and a slow first request that loses its
 *   claim cannot commit anymore: its answer is written only where the token is still its own,
 *   and its whole transaction rolls back when that write finds nothing.
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { deleteInBatches, Transactor, Ulid, type StorageError } from "../shared/index.js"
import type { Entropy } from "../shared/index.js"
import type { Principal } from "./Account.js"
import {
  type IdempotencyClaim,
  type IdempotencyScope,
  IdempotencyStore,
  type StoredAnswer
} from "./IdempotencyStore.js"

/** How long a key's answer is kept and replayed: 24 hours. */
export const RETENTION_MS = 24 * 60 * 60 * 1000

/** How long an unanswered claim holds its key before a retry may take it over (a host died). */
export const CLAIM_LOCK_MS = 60 * 1000

/** At most this many expired records are deleted per statement by {@link purgeExpired}. */
export const PURGE_BATCH = 1000

const KEY = /^[\x20-\x7e]{1,255}$/

/** Whether `value` is a usable `Idempotency-Key`: 1 to 255 printable ASCII characters. */
export const isValidKey = (value: string): boolean => KEY.test(value)

/** The message of the 400 answer for an unusable key. */
export const invalidKeyMessage = "The Idempotency-Key header must be 1 to 255 printable ASCII characters."

/** The first request with this key is still running; nothing was run. */
export class IdempotencyKeyInProgress extends Schema.TaggedError<IdempotencyKeyInProgress>()(
  "IdempotencyKeyInProgress",
  {}
) {
  static readonly text = "A request with this Idempotency-Key is in progress."
}

/** The key was used with another request (method, target or body); nothing was run. */
export class IdempotencyKeyMismatch extends Schema.TaggedError<IdempotencyKeyMismatch>()("IdempotencyKeyMismatch", {}) {
  static readonly text = "This Idempotency-Key was used with a different request."
}

/** One idempotent request: the admitted caller, its key, and its fingerprint. */
export interface IdempotentRequest {
  readonly principal: Principal
  readonly key: string
  /** Identifies the request (the HTTP layer hashes method, target and body). */
  readonly fingerprint: string
}

/** The answer, and whether it is a replay of a stored one. */
export interface Outcome {
  readonly answer: StoredAnswer
  readonly replayed: boolean
}

/** Timings (tests shorten them). */
export interface IdempotencyOptions {
  readonly retentionMs?: number
  readonly claimLockMs?: number
}

/** The scope of a principal's keys. */
export const scopeOf = (principal: Principal): IdempotencyScope => ({
  customerNo: principal.account.customerNo,
  mode: principal.key.mode
})

/** Inside the work's transaction: the answer is a 5xx, so roll everything back and keep nothing. */
class Discard extends Data.TaggedError("Discard")<{ readonly answer: StoredAnswer }> {}
/** Inside the work's transaction: the claim is no longer ours, so nothing may commit. */
class ClaimLost extends Data.TaggedError("ClaimLost") {}

type Begun = { readonly _tag: "Claimed" } | { readonly _tag: "Replay"; readonly answer: StoredAnswer }

/** Claims the key, or finds the answer to replay; fails for a key in use or reused. */
const begin = Effect.fnUntraced(function* (claim: IdempotencyClaim) {
  const store = yield* IdempotencyStore
  const now = claim.createdAt
  // A row can change between the insert that found it and the takeover (answered, released,
  // taken by another retry): look again, a few times, then call it busy.
  for (let round = 0; round < 3; round++) {
    const existing = yield* store.claim(claim)
    if (Option.isNone(existing)) return { _tag: "Claimed" } as Begun
    const found = existing.value
    if (found.expiresAt > now) {
      if (found.fingerprint !== claim.fingerprint) return yield* new IdempotencyKeyMismatch()
      if (Option.isSome(found.answer)) return { _tag: "Replay", answer: found.answer.value } as Begun
      if (found.lockedUntil > now) return yield* new IdempotencyKeyInProgress()
    }
    if (yield* store.takeOver(claim, found.token)) return { _tag: "Claimed" } as Begun
  }
  return yield* new IdempotencyKeyInProgress()
})

/**
 * Runs `work` at most once per key (see the module), inside one transaction with the storing of
 * its answer. `answerOf` turns the work's outcome (success or failure) into the answer to store
 * and send. An answer below 500 commits with whatever the work wrote; one of 500 and above is
 * not stored and rolls the work back, so a use case whose failures leave writes that must not
 * persist must answer them with a 5xx. A defect or interruption rolls back and releases the claim.
 */
export const run: <A, E, R, R2>(
  request: IdempotentRequest,
  work: Effect.Effect<A, E, R>,
  answerOf: (exit: Exit.Exit<A, E>) => Effect.Effect<StoredAnswer, never, R2>,
  options?: IdempotencyOptions
) => Effect.Effect<
  Outcome,
  IdempotencyKeyInProgress | IdempotencyKeyMismatch | StorageError,
  R | R2 | IdempotencyStore | Transactor | Entropy
> = Effect.fnUntraced(function* <A, E, R, R2>(
  request: IdempotentRequest,
  work: Effect.Effect<A, E, R>,
  answerOf: (exit: Exit.Exit<A, E>) => Effect.Effect<StoredAnswer, never, R2>,
  options: IdempotencyOptions = {}
) {
  const store = yield* IdempotencyStore
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  const scope = scopeOf(request.principal)
  const claim: IdempotencyClaim = {
    scope,
    key: request.key,
    fingerprint: request.fingerprint,
    token: yield* Ulid.make,
    createdAt: now,
    lockedUntil: now + (options.claimLockMs ?? CLAIM_LOCK_MS),
    expiresAt: now + (options.retentionMs ?? RETENTION_MS)
  }
  const begun = yield* begin(claim)
  if (begun._tag === "Replay") return { answer: begun.answer, replayed: true }

  const release = store
    .release(scope, claim.key, claim.token)
    .pipe(
      Effect.catchAll((e) =>
        Effect.logWarning("idempotency: could not release a claim; it frees itself when its lock runs out", e)
      )
    )
  const complete = (answer: StoredAnswer): Effect.Effect<StoredAnswer, ClaimLost | StorageError> =>
    Effect.flatMap(store.complete(scope, claim.key, claim.token, answer), (ours) =>
      ours ? Effect.succeed(answer) : Effect.fail(new ClaimLost())
    )

  // The answer is made and stored in the work's transaction, whether the work succeeded or
  // failed: a failure's side effects that must outlive it (an abuse miss counted by the
  // cancel) commit as they would without a key. Only a 5xx answer rolls everything back.
  // Only the work's typed outcome is answered here; a defect or interruption goes on up (and
  // rolls the transaction back).
  const inTransaction = Effect.either(work).pipe(
    Effect.flatMap((outcome) =>
      answerOf(Either.isRight(outcome) ? Exit.succeed(outcome.right) : Exit.fail(outcome.left))
    ),
    Effect.flatMap(
      (answer): Effect.Effect<StoredAnswer, Discard | ClaimLost | StorageError> =>
        answer.status >= 500 ? Effect.fail(new Discard({ answer })) : complete(answer)
    )
  )
  const answer = yield* tx.withTransaction(inTransaction).pipe(
    Effect.catchTags({
      Discard: (d: Discard) => Effect.as(release, d.answer),
      ClaimLost: () => Effect.fail(new IdempotencyKeyInProgress())
    }),
    // Storage failed, a defect, an interruption: nothing was stored, so free the key for a retry
    // (a no-op when the claim is no longer ours).
    Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : release))
  )
  return { answer, replayed: false }
})

/**
 * Deletes every record expired by now, in batches of {@link PURGE_BATCH}; how many it deleted.
 * Hosts run it periodically; nothing depends on it for correctness (expired records are ignored
 * and replaced when their key comes again), it only keeps the table small.
 */
export const purgeExpired = Effect.gen(function* () {
  const store = yield* IdempotencyStore
  const now = yield* Clock.currentTimeMillis
  return yield* deleteInBatches(PURGE_BATCH, (limit) => store.deleteExpired(now, limit))
})
