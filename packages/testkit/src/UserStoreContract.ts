/**
 * @module UserStoreContract
 *
 * The conformance suite of the `UserStore` port: users (one per e-mail in any case, across
 * accounts; scoped lookups; the optimistic password change), sessions (found with their user,
 * touched forward only, ended one by one or per user), one-time tokens (single use, even
 * under concurrency), sign-in locks (extended, never shortened) and the purge.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type OneTimeTokenRecord, type SessionRecord, type Transactor, type UserRecord, UserStore } from "@waybill/core"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "insert/find roundtrip; e-mail found in any case",
  "one user per e-mail across accounts, whatever the case",
  "findUser and listUsers are scoped by customer number",
  "setPassword is a compare-and-set on the password version",
  "removeUser takes its sessions and tokens along",
  "sessions: found with their user, touched forward only, ended one or all",
  "tokens: single use, also when used concurrently",
  "locks: a later lock extends, an earlier one never shortens",
  "purgeExpired removes idle and old sessions, expired tokens and locks that are over"
] as const

let counter = 0
const unique = () => {
  counter += 1
  return `${Date.now().toString(36)}${counter}`
}

/** A fresh user with a unique id and e-mail. */
export const user = (overrides: Partial<UserRecord> = {}): UserRecord => {
  const n = unique()
  return {
    userId: `usr_test${n}`,
    customerNo: "1234567",
    email: `Person.${n}@Example-Business.com`,
    role: "member",
    passwordHash: "$scrypt$ln=17,r=8,p=1$c2FsdA$aGFzaA",
    passwordVersion: 1,
    passwordChangedAt: 1_800_000_000_000,
    invitedBy: null,
    createdAt: 1_800_000_000_000,
    ...overrides
  }
}

/** A session of `u`. */
export const session = (u: UserRecord, overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  id: `sess${unique()}`,
  userId: u.userId,
  customerNo: u.customerNo,
  csrfToken: `csrf${unique()}`,
  createdAt: 1_800_000_000_000,
  lastSeenAt: 1_800_000_000_000,
  authenticatedAt: 1_800_000_000_000,
  passwordVersion: u.passwordVersion,
  ...overrides
})

/** A one-time token of `u`. */
export const token = (u: UserRecord, overrides: Partial<OneTimeTokenRecord> = {}): OneTimeTokenRecord => ({
  hash: `tok${unique()}`,
  purpose: "invite",
  userId: u.userId,
  customerNo: u.customerNo,
  passwordVersion: u.passwordVersion,
  createdAt: 1_800_000_000_000,
  expiresAt: 1_800_086_400_000,
  usedAt: null,
  ...overrides
})

/** Runs the suite against the layer `makeLayer` builds (fresh per case). */
export const userStoreContract = <E>(name: string, makeLayer: () => Layer.Layer<UserStore | Transactor, E>): void => {
  describe(name, () => {
    const run = <A, E2>(program: Effect.Effect<A, E2, UserStore | Transactor>) => Effect.provide(program, makeLayer())

    it.effect(cases[0], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user({ role: "owner", invitedBy: "boss@example-business.com" })
          const invited = user({ passwordHash: null, passwordVersion: 0, passwordChangedAt: null })
          expect(yield* store.insertUser(u)).toBe(true)
          expect(yield* store.insertUser(invited)).toBe(true)
          expect(Option.getOrThrow(yield* store.findUserByEmail(u.email))).toEqual(u)
          expect(Option.getOrThrow(yield* store.findUserByEmail(` ${u.email.toUpperCase()} `))).toEqual(u)
          expect(Option.getOrThrow(yield* store.findUserByEmail(invited.email.toLowerCase()))).toEqual(invited)
          expect(Option.isNone(yield* store.findUserByEmail("nobody@example-business.com"))).toBe(true)
        })
      )
    )

    it.effect(cases[1], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user()
          expect(yield* store.insertUser(u)).toBe(true)
          expect(yield* store.insertUser(user({ email: u.email.toUpperCase(), customerNo: "7654321" }))).toBe(false)
          expect(yield* store.insertUser(user({ email: u.email.toLowerCase() }))).toBe(false)
          expect(yield* store.listUsers("7654321")).toEqual([])
          expect(Option.getOrThrow(yield* store.findUserByEmail(u.email)).userId).toBe(u.userId)
        })
      )
    )

    it.effect(cases[2], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const a1 = user({ customerNo: "1111111", createdAt: 1_800_000_000_000 })
          const a2 = user({ customerNo: "1111111", createdAt: 1_800_000_001_000 })
          const b1 = user({ customerNo: "2222222" })
          for (const u of [a2, b1, a1]) yield* store.insertUser(u)
          expect((yield* store.listUsers("1111111")).map((u) => u.userId)).toEqual([a1.userId, a2.userId])
          expect((yield* store.listUsers("2222222")).map((u) => u.userId)).toEqual([b1.userId])
          expect(Option.isSome(yield* store.findUser("1111111", a1.userId))).toBe(true)
          // Another account's customer number never finds the user.
          expect(Option.isNone(yield* store.findUser("2222222", a1.userId))).toBe(true)
          expect(yield* store.removeUser("2222222", a1.userId)).toBe(false)
          expect(Option.isSome(yield* store.findUser("1111111", a1.userId))).toBe(true)
        })
      )
    )

    it.effect(cases[3], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user({ passwordHash: null, passwordVersion: 0, passwordChangedAt: null })
          yield* store.insertUser(u)
          const change = {
            customerNo: u.customerNo,
            userId: u.userId,
            passwordHash: "$new",
            changedAt: 1_800_000_500_000
          }
          expect(yield* store.setPassword({ ...change, expectedVersion: 0 })).toBe(true)
          expect(yield* store.setPassword({ ...change, passwordHash: "$stale", expectedVersion: 0 })).toBe(false)
          expect(yield* store.setPassword({ ...change, customerNo: "9999999", expectedVersion: 1 })).toBe(false)
          const stored = Option.getOrThrow(yield* store.findUser(u.customerNo, u.userId))
          expect(stored).toEqual({
            ...u,
            passwordHash: "$new",
            passwordVersion: 1,
            passwordChangedAt: 1_800_000_500_000
          })
          const results = yield* Effect.all(
            Array.from({ length: 6 }, (_, i) =>
              store.setPassword({ ...change, passwordHash: `$race${i}`, expectedVersion: 1 })
            ),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Boolean)).toHaveLength(1)
          expect(Option.getOrThrow(yield* store.findUser(u.customerNo, u.userId)).passwordVersion).toBe(2)
        })
      )
    )

    it.effect(cases[4], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user()
          const other = user()
          yield* store.insertUser(u)
          yield* store.insertUser(other)
          const s = session(u)
          const t = token(u)
          const kept = session(other)
          yield* store.insertSession(s)
          yield* store.insertSession(kept)
          yield* store.insertToken(t)
          expect(yield* store.removeUser(u.customerNo, u.userId)).toBe(true)
          expect(yield* store.removeUser(u.customerNo, u.userId)).toBe(false)
          expect(Option.isNone(yield* store.findUserByEmail(u.email))).toBe(true)
          expect(Option.isNone(yield* store.findSession(s.id))).toBe(true)
          expect(Option.isNone(yield* store.findToken(t.hash))).toBe(true)
          expect(Option.isSome(yield* store.findSession(kept.id))).toBe(true)
          // The address is free again.
          expect(yield* store.insertUser(user({ email: u.email }))).toBe(true)
        })
      )
    )

    it.effect(cases[5], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user()
          yield* store.insertUser(u)
          const s1 = session(u)
          const s2 = session(u)
          const s3 = session(u)
          for (const s of [s1, s2, s3]) yield* store.insertSession(s)
          expect(Option.getOrThrow(yield* store.findSession(s1.id))).toEqual({ session: s1, user: u })
          expect(Option.isNone(yield* store.findSession("unknown"))).toBe(true)
          yield* store.touchSession(s1.id, { lastSeenAt: 1_800_000_060_000 })
          yield* store.touchSession(s1.id, { lastSeenAt: 1_800_000_030_000 })
          expect(Option.getOrThrow(yield* store.findSession(s1.id)).session.lastSeenAt).toBe(1_800_000_060_000)
          yield* store.touchSession(s1.id, { lastSeenAt: 1_800_000_120_000, authenticatedAt: 1_800_000_120_000 })
          const touched = Option.getOrThrow(yield* store.findSession(s1.id)).session
          expect([touched.lastSeenAt, touched.authenticatedAt]).toEqual([1_800_000_120_000, 1_800_000_120_000])
          yield* store.deleteSession(s2.id)
          expect(Option.isNone(yield* store.findSession(s2.id))).toBe(true)
          yield* store.insertSession(s2)
          expect(yield* store.deleteUserSessions(u.customerNo, u.userId, s3.id)).toBe(2)
          expect(Option.isSome(yield* store.findSession(s3.id))).toBe(true)
          expect(yield* store.deleteUserSessions("9999999", u.userId)).toBe(0)
          expect(yield* store.deleteUserSessions(u.customerNo, u.userId)).toBe(1)
          expect(Option.isNone(yield* store.findSession(s3.id))).toBe(true)
        })
      )
    )

    it.effect(cases[6], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user()
          yield* store.insertUser(u)
          const t = token(u, { purpose: "reset", expiresAt: 1_800_001_800_000 })
          yield* store.insertToken(t)
          expect(Option.getOrThrow(yield* store.findToken(t.hash))).toEqual(t)
          expect(yield* store.useToken(t.hash, 1_800_000_100_000)).toBe(true)
          expect(yield* store.useToken(t.hash, 1_800_000_200_000)).toBe(false)
          expect(Option.getOrThrow(yield* store.findToken(t.hash)).usedAt).toBe(1_800_000_100_000)
          expect(yield* store.useToken("unknown", 1_800_000_100_000)).toBe(false)
          const raced = token(u)
          yield* store.insertToken(raced)
          const results = yield* Effect.all(
            Array.from({ length: 8 }, () => store.useToken(raced.hash, 1_800_000_300_000)),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Boolean)).toHaveLength(1)
        })
      )
    )

    it.effect(cases[7], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const key = `lock${unique()}`
          expect(Option.isNone(yield* store.lockedUntil(key))).toBe(true)
          yield* store.lock(key, 1_800_000_900_000)
          yield* store.lock(key, 1_800_000_500_000)
          expect(yield* store.lockedUntil(key)).toEqual(Option.some(1_800_000_900_000))
          yield* store.lock(key, 1_800_001_000_000)
          expect(yield* store.lockedUntil(key)).toEqual(Option.some(1_800_001_000_000))
        })
      )
    )

    it.effect(cases[8], () =>
      run(
        Effect.gen(function* () {
          const store = yield* UserStore
          const u = user()
          yield* store.insertUser(u)
          const now = 1_800_100_000_000
          const idle = session(u, { createdAt: now - 3_600_000, lastSeenAt: now - 3_600_000 })
          const old = session(u, { createdAt: now - 13 * 3_600_000, lastSeenAt: now - 60_000 })
          const live = session(u, { createdAt: now - 3_600_000, lastSeenAt: now - 60_000 })
          for (const s of [idle, old, live]) yield* store.insertSession(s)
          const expired = token(u, { expiresAt: now - 1 })
          const valid = token(u, { expiresAt: now + 60_000 })
          yield* store.insertToken(expired)
          yield* store.insertToken(valid)
          const over = `lock${unique()}`
          const held = `lock${unique()}`
          yield* store.lock(over, now - 1)
          yield* store.lock(held, now + 60_000)
          const n = yield* store.purgeExpired({ now, idleBefore: now - 30 * 60_000, begunBefore: now - 12 * 3_600_000 })
          expect(n).toBe(4)
          expect(Option.isSome(yield* store.findSession(live.id))).toBe(true)
          expect(Option.isNone(yield* store.findSession(idle.id))).toBe(true)
          expect(Option.isNone(yield* store.findSession(old.id))).toBe(true)
          expect(Option.isNone(yield* store.findToken(expired.hash))).toBe(true)
          expect(Option.isSome(yield* store.findToken(valid.hash))).toBe(true)
          expect(Option.isNone(yield* store.lockedUntil(over))).toBe(true)
          expect(Option.isSome(yield* store.lockedUntil(held))).toBe(true)
        })
      )
    )
  })
}
