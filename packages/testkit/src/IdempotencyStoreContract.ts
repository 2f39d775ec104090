/**
 * @module IdempotencyStoreContract
 *
 * The conformance suite of the `IdempotencyStore` port (`Idempotency-Key`): a claim is atomic
 * (of concurrent claims of one key exactly one wins), keys are scoped by account and key mode,
 * every later write is a compare-and-set on the claim's token, an answer stored inside a
 * transaction rolls back with it, and the cleanup deletes expired records only.
 *
 * Cases use fresh keys, so a shared store works too.
 */
import { expect } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type IdempotencyClaim, IdempotencyStore, type StoredAnswer, Transactor } from "@waybill/core"
import { registerCases, skipReasons } from "./internal/contract.js"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "the first claim of a key is the caller's; a second finds the record and writes nothing",
  "keys are scoped by account and key mode",
  "complete stores the answer once, for the token's holder only",
  "release deletes only the holder's unanswered claim",
  "take over: refused while the claim is locked or answered, allowed once stale or expired",
  "concurrent claims of one key: exactly one wins",
  "concurrent take-overs of one stale claim: at most one wins",
  "an answer stored in a transaction rolls back with it",
  "deleteExpired deletes expired records only, at most limit per call"
] as const

/** The name of one case of the suite. */
export type IdempotencyStoreCase = (typeof cases)[number]

/** A case an implementation cannot pass yet, with the reason shown in the test report. */
export interface SkippedIdempotencyStoreCase {
  readonly case: IdempotencyStoreCase
  readonly reason: string
}

let counter = 0
/** A key no other case (or earlier run on a shared store) has used. */
const freshKey = (label: string) => `contract:${label}:${Date.now().toString(36)}:${(counter++).toString(36)}`

const T0 = 1_800_000_000_000
const scope = { customerNo: "1000001", mode: "live" } as const

const claimOf = (key: string, over: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  scope,
  key,
  fingerprint: "f".repeat(64),
  token: `tok-${(counter++).toString(36)}`,
  createdAt: T0,
  lockedUntil: T0 + 60_000,
  expiresAt: T0 + 86_400_000,
  ...over
})

const answer: StoredAnswer = {
  status: 200,
  headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  body: '{"data":{"result":"success"},"error":null}'
}

class Boom extends Data.TaggedError("Boom") {}

const body: { readonly [K in IdempotencyStoreCase]: Effect.Effect<void, unknown, IdempotencyStore | Transactor> } = {
  "the first claim of a key is the caller's; a second finds the record and writes nothing": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const key = freshKey("first")
    const first = claimOf(key)
    expect(yield* store.claim(first)).toEqual(Option.none())
    const second = yield* store.claim(claimOf(key, { fingerprint: "0".repeat(64), createdAt: T0 + 5 }))
    expect(Option.isSome(second)).toBe(true)
    const found = Option.getOrThrow(second)
    expect(found).toEqual({ ...first, answer: Option.none() })
  }),

  "keys are scoped by account and key mode": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const key = freshKey("scope")
    expect(yield* store.claim(claimOf(key))).toEqual(Option.none())
    expect(yield* store.claim(claimOf(key, { scope: { customerNo: scope.customerNo, mode: "test" } }))).toEqual(
      Option.none()
    )
    expect(yield* store.claim(claimOf(key, { scope: { customerNo: "1000002", mode: "live" } }))).toEqual(Option.none())
    // Answering one scope's claim leaves the others unanswered.
    const other = claimOf(freshKey("scope-other"))
    yield* store.claim(other)
    expect(yield* store.complete(scope, other.key, other.token, answer)).toBe(true)
    expect(yield* store.complete({ customerNo: "1000002", mode: "live" }, other.key, other.token, answer)).toBe(false)
  }),

  "complete stores the answer once, for the token's holder only": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const claim = claimOf(freshKey("complete"))
    yield* store.claim(claim)
    expect(yield* store.complete(scope, claim.key, "not-the-token", answer)).toBe(false)
    expect(yield* store.complete(scope, claim.key, claim.token, answer)).toBe(true)
    expect(yield* store.complete(scope, claim.key, claim.token, { ...answer, status: 400 })).toBe(false)
    const found = Option.getOrThrow(yield* store.claim(claimOf(claim.key)))
    expect(found.answer).toEqual(Option.some(answer))
    expect(found.token).toBe(claim.token)
  }),

  "release deletes only the holder's unanswered claim": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const claim = claimOf(freshKey("release"))
    yield* store.claim(claim)
    yield* store.release(scope, claim.key, "not-the-token")
    expect(Option.isSome(yield* store.claim(claimOf(claim.key)))).toBe(true)
    yield* store.release(scope, claim.key, claim.token)
    const again = claimOf(claim.key)
    expect(yield* store.claim(again)).toEqual(Option.none())
    // An answered record is kept.
    yield* store.complete(scope, again.key, again.token, answer)
    yield* store.release(scope, again.key, again.token)
    expect(Option.getOrThrow(yield* store.claim(claimOf(again.key))).answer).toEqual(Option.some(answer))
  }),

  "take over: refused while the claim is locked or answered, allowed once stale or expired": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const key = freshKey("take-over")
    const first = claimOf(key)
    yield* store.claim(first)
    // Locked: too early.
    expect(yield* store.takeOver(claimOf(key, { createdAt: T0 + 59_999 }), first.token)).toBe(false)
    // Stale, but the previous token is not the row's.
    expect(yield* store.takeOver(claimOf(key, { createdAt: T0 + 60_000 }), "not-the-token")).toBe(false)
    // Stale: taken over; the old holder can no longer complete or release.
    const second = claimOf(key, { createdAt: T0 + 60_000, lockedUntil: T0 + 120_000, fingerprint: "a".repeat(64) })
    expect(yield* store.takeOver(second, first.token)).toBe(true)
    expect(yield* store.complete(scope, key, first.token, answer)).toBe(false)
    yield* store.release(scope, key, first.token)
    const now = Option.getOrThrow(yield* store.claim(claimOf(key)))
    expect(now.token).toBe(second.token)
    expect(now.fingerprint).toBe("a".repeat(64))
    // Answered and not expired: never taken over, however old its lock.
    expect(yield* store.complete(scope, key, second.token, answer)).toBe(true)
    expect(yield* store.takeOver(claimOf(key, { createdAt: T0 + 3_600_000 }), second.token)).toBe(false)
    // Expired: taken over, and the new claim starts unanswered.
    const third = claimOf(key, { createdAt: second.expiresAt })
    expect(yield* store.takeOver(third, second.token)).toBe(true)
    const fresh = Option.getOrThrow(yield* store.claim(claimOf(key)))
    expect(fresh.token).toBe(third.token)
    expect(fresh.answer).toEqual(Option.none())
  }),

  "concurrent claims of one key: exactly one wins": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const key = freshKey("race")
    const claims = Array.from({ length: 16 }, () => claimOf(key))
    const results = yield* Effect.all(
      claims.map((c) => store.claim(c)),
      { concurrency: "unbounded" }
    )
    const winners = claims.filter((_, i) => Option.isNone(results[i]!))
    expect(winners).toHaveLength(1)
    for (const r of results) {
      if (Option.isSome(r)) expect(r.value.token).toBe(winners[0]!.token)
    }
  }),

  "concurrent take-overs of one stale claim: at most one wins": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const key = freshKey("take-over-race")
    const first = claimOf(key)
    yield* store.claim(first)
    const results = yield* Effect.all(
      Array.from({ length: 8 }, () => store.takeOver(claimOf(key, { createdAt: T0 + 60_000 }), first.token)),
      { concurrency: "unbounded" }
    )
    expect(results.filter((r) => r)).toHaveLength(1)
  }),

  "an answer stored in a transaction rolls back with it": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const tx = yield* Transactor
    const claim = claimOf(freshKey("rollback"))
    yield* store.claim(claim)
    const failed = yield* Effect.either(
      tx.withTransaction(Effect.zipRight(store.complete(scope, claim.key, claim.token, answer), new Boom()))
    )
    expect(Either.isLeft(failed)).toBe(true)
    expect(Option.getOrThrow(yield* store.claim(claimOf(claim.key))).answer).toEqual(Option.none())
    expect(yield* tx.withTransaction(store.complete(scope, claim.key, claim.token, answer))).toBe(true)
    expect(Option.getOrThrow(yield* store.claim(claimOf(claim.key))).answer).toEqual(Option.some(answer))
  }),

  "deleteExpired deletes expired records only, at most limit per call": Effect.gen(function* () {
    const store = yield* IdempotencyStore
    // Far in the future, so records of other cases (on a shared store) are not in the way.
    const base = T0 + 10 * 365 * 86_400_000
    const expired = Array.from({ length: 5 }, (_, i) =>
      claimOf(freshKey(`expired-${i}`), { createdAt: base, expiresAt: base + 1_000 + i })
    )
    const live = claimOf(freshKey("live"), { createdAt: base, expiresAt: base + 10_000 })
    for (const c of [...expired, live]) yield* store.claim(c)
    yield* store.complete(scope, expired[0]!.key, expired[0]!.token, answer)
    const now = base + 5_000
    const first = yield* store.deleteExpired(now, 3)
    expect(first).toBe(3)
    let total = first
    for (let round = 0; round < 10; round++) {
      const n = yield* store.deleteExpired(now, 3)
      expect(n).toBeLessThanOrEqual(3)
      total += n
      if (n === 0) break
    }
    expect(total).toBe(5)
    for (const c of expired) expect(yield* store.claim(claimOf(c.key, { createdAt: now }))).toEqual(Option.none())
    expect(Option.getOrThrow(yield* store.claim(claimOf(live.key))).token).toBe(live.token)
  })
}

/**
 * Registers the `IdempotencyStore` conformance suite as a `describe(name)` block. `makeLayer` is
 * called once per case and provides the store and the `Transactor` of the same database.
 */
export const idempotencyStoreContract = (
  name: string,
  makeLayer: () => Layer.Layer<IdempotencyStore | Transactor, unknown>,
  options: { readonly skip?: ReadonlyArray<SkippedIdempotencyStoreCase> } = {}
): void => {
  registerCases(name, cases, body, makeLayer, skipReasons("idempotencyStoreContract", name, cases, options.skip))
}
