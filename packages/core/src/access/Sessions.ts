/**
 * @module Sessions
 *
 * Browser sessions of the account portal (DECISIONS.md "Account portal and sessions"):
 * server-side rows (revocable), a 256-bit random token from the `Entropy` port handed to the
 * browser once (base64url) and stored only as its SHA-256; a per-session CSRF token; an idle
 * timeout of 30 minutes and an absolute one of 12 hours; `authenticatedAt` for actions that
 * need the password entered in the last 10 minutes.
 *
 * Sign-in is limited through the `RateLimiter` port: 10 failures per sign-in name per 15
 * minutes and 50 per client address per hour, after which that name or address is locked for
 * 15 minutes (the lock is kept in the `UserStore`, so it lasts 15 minutes from the failure that
 * set it, not to the end of a counter's window). Every refusal is one {@link SignInRefused}
 * with one message; a password hash is verified on every attempt, known e-mail or not, locked
 * or not, so response times do not tell either.
 *
 * The pure rules (timeouts, recent authentication, CSRF, same origin, lock thresholds) are
 * plain functions; the use cases are Effect programs over `UserStore`, `PasswordHasher`,
 * `RateLimiter` and `Entropy`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { constantTimeEqual, encodeBase64Url, Entropy, type StorageError, toHex, utf8 } from "../shared/index.js"
import * as ClientIp from "./ClientIp.js"
import { PasswordHasher, type PasswordHasherShape } from "./PasswordHasher.js"
import { RateLimiter } from "./RateLimiter.js"
import { emailKey, type SessionRecord, SignInRefused, type UserRecord, type Viewer } from "./User.js"
import { UserStore } from "./UserStore.js"

export { SignInRefused } from "./User.js"

/** A session ends after 30 minutes without a request. */
export const IDLE_MS = 30 * 60_000
/** A session ends 12 hours after sign-in, used or not. */
export const ABSOLUTE_MS = 12 * 3_600_000
/** Key regeneration, password change and invitations need the password entered this recently. */
export const RECENT_AUTH_MS = 10 * 60_000
/** `lastSeenAt` is written at most this often, so a page view is not a write. */
export const TOUCH_INTERVAL_MS = 60_000
/**
 * The session cookie's name (DECISIONS.md): `__Host-waybill_session` (Secure, HttpOnly,
 * SameSite=Lax, Path=/), or `waybill_session` for plain-HTTP development, where browsers refuse
 * the `__Host-` prefix. The portal writes it; the API's documents endpoint reads it.
 */
export const cookieName = (allowInsecureHttp: boolean): string =>
  allowInsecureHttp ? "waybill_session" : "__Host-waybill_session"

/** Random bytes of a session, CSRF or one-time token (256 bits). */
export const TOKEN_BYTES = 32

/** A failure budget: `limit` failures per fixed `windowMs` window. */
export interface FailureLimit {
  readonly limit: number
  readonly windowMs: number
}

/** The sign-in limits (DECISIONS.md). */
export const SIGN_IN_LIMITS: {
  readonly perAccount: FailureLimit
  readonly perAddress: FailureLimit
  readonly lockoutMs: number
} = {
  perAccount: { limit: 10, windowMs: 15 * 60_000 },
  perAddress: { limit: 50, windowMs: 3_600_000 },
  lockoutMs: 15 * 60_000
}

// ---------------------------------------------------------------------------------------------
// Pure rules
// ---------------------------------------------------------------------------------------------

/** Whether a session is still good at `now`, and if not which timeout ended it. */
export type SessionState = "live" | "idle" | "expired"

/** The state of a session at `now`: the absolute timeout first, then the idle one. */
export const sessionState = (
  session: { readonly createdAt: number; readonly lastSeenAt: number },
  now: number
): SessionState => {
  if (now >= session.createdAt + ABSOLUTE_MS) return "expired"
  if (now >= session.lastSeenAt + IDLE_MS) return "idle"
  return "live"
}

/** Whether `lastSeenAt` is old enough to be written again (at most once a minute). */
export const needsTouch = (lastSeenAt: number, now: number): boolean => now - lastSeenAt >= TOUCH_INTERVAL_MS

/** Whether the viewer entered the password in the last 10 minutes. */
export const isRecent = (viewer: Pick<Viewer, "authenticatedAt">, now: number): boolean =>
  now >= viewer.authenticatedAt && now - viewer.authenticatedAt < RECENT_AUTH_MS

/** Whether a submitted form's CSRF token is the session's (constant time; a missing one never is). */
export const checkCsrf = (viewer: Pick<Viewer, "csrfToken">, submitted: string | undefined): boolean => {
  const expected = Redacted.value(viewer.csrfToken)
  return submitted !== undefined && submitted !== "" && expected !== "" && constantTimeEqual(expected, submitted)
}

const originOf = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a state-changing request comes from the portal's own origin (`expected`: the portal's
 * base URL or origin). The `Origin` header decides when present (`null`, sent by sandboxed and
 * privacy-sensitive contexts, is refused); otherwise the `Referer`'s origin. A request with
 * neither is refused: every browser that runs the portal sends `Origin` on a POST.
 */
export const sameOrigin = (input: {
  readonly origin: string | null
  readonly referer: string | null
  readonly expected: string
}): boolean => {
  const expected = originOf(input.expected)
  if (expected === undefined) return false
  if (input.origin !== null && input.origin !== "") return originOf(input.origin) === expected
  if (input.referer !== null && input.referer !== "") return originOf(input.referer) === expected
  return false
}

/** Whether the failure just counted (the `count`-th in its window) locks its name or address. */
export const locks = (count: number, limit: FailureLimit): boolean => count >= limit.limit

/** The rate-limiter and lock key of a sign-in name. */
export const accountKey = (email: string): string => `portal:signin:acct:${emailKey(email)}`

/**
 * The rate-limiter and lock key of a client address (an IPv6 address by its /64); none when the
 * address is unknown or not an address, so such clients never share one bucket that any of
 * them could fill for all.
 */
export const addressKey = (clientIp: string): string | undefined =>
  Option.match(ClientIp.parse(clientIp.trim()), {
    onNone: () => undefined,
    onSome: (ip) => `portal:signin:ip:${ClientIp.blockKey(ip)}`
  })

/** The viewer a stored session and its user make. */
export const viewerOf = (session: SessionRecord, user: UserRecord): Viewer => ({
  userId: user.userId,
  customerNo: user.customerNo,
  email: user.email,
  role: user.role,
  sessionId: session.id,
  csrfToken: Redacted.make(session.csrfToken),
  authenticatedAt: session.authenticatedAt,
  createdAt: session.createdAt
})

/** A token as the browser holds it: 43 base64url characters (256 bits). */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

/** Whether `token` has the shape of a token this module hands out (anything else is not looked up). */
export const isTokenShaped = (token: string): boolean => TOKEN_SHAPE.test(token)

// ---------------------------------------------------------------------------------------------
// Effects
// ---------------------------------------------------------------------------------------------

/** SHA-256 of a token, hex: what storage keeps (sessions, one-time links). */
export const hashToken = (token: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", utf8(token))),
    (digest) => toHex(new Uint8Array(digest))
  )

/** A fresh 256-bit random token, base64url. */
export const newToken: Effect.Effect<string, never, Entropy> = Effect.flatMap(Entropy, (e) =>
  Effect.map(e.bytes(TOKEN_BYTES), encodeBase64Url)
)

// A real hash of a throwaway password per hasher, verified against when the e-mail is unknown,
// so an unknown address costs the same time as a wrong password.
const dummyHashes = new WeakMap<PasswordHasherShape, Promise<string>>()
const dummyHash = (hasher: PasswordHasherShape): Effect.Effect<string> =>
  Effect.promise(() => {
    let hash = dummyHashes.get(hasher)
    if (hash === undefined) {
      hash = Effect.runPromise(hasher.hash(Redacted.make("waybill timing equaliser, never a password")))
      dummyHashes.set(hasher, hash)
    }
    return hash
  })

/** Starts a session for `user` (sign-in, a set password): a new token, a new CSRF token. */
export const startSession = Effect.fn("Sessions.startSession")(function* (user: UserRecord) {
  const store = yield* UserStore
  const now = yield* Clock.currentTimeMillis
  const token = yield* newToken
  const session: SessionRecord = {
    id: yield* hashToken(token),
    userId: user.userId,
    customerNo: user.customerNo,
    csrfToken: yield* newToken,
    createdAt: now,
    lastSeenAt: now,
    authenticatedAt: now,
    passwordVersion: user.passwordVersion
  }
  yield* store.insertSession(session)
  return { token: Redacted.make(token), viewer: viewerOf(session, user) }
})

const lockedAt = (keys: ReadonlyArray<string | undefined>, now: number) =>
  Effect.flatMap(UserStore, (store) =>
    Effect.map(
      Effect.forEach(
        keys.filter((k): k is string => k !== undefined),
        (key) => store.lockedUntil(key)
      ),
      (locks) => locks.some((until) => Option.isSome(until) && until.value > now)
    )
  )

/** Counts a failure against the name (and the address), locking whichever ran out of budget. */
const recordFailure = Effect.fnUntraced(function* (account: string, address: string | undefined, now: number) {
  const limiter = yield* RateLimiter
  const store = yield* UserStore
  const counted = [{ key: account, limit: SIGN_IN_LIMITS.perAccount }] as Array<{
    key: string
    limit: FailureLimit
  }>
  if (address !== undefined) counted.push({ key: address, limit: SIGN_IN_LIMITS.perAddress })
  for (const { key, limit } of counted) {
    const quota = yield* limiter.hit(key, limit.limit, limit.windowMs)
    if (locks(quota.count, limit)) yield* store.lock(key, now + SIGN_IN_LIMITS.lockoutMs)
  }
})

const refuse = (reason: SignInRefused["reason"]) =>
  Effect.zipRight(
    Effect.logInfo("portal: sign-in refused").pipe(Effect.annotateLogs("reason", reason)),
    Effect.fail(new SignInRefused({ reason }))
  )

/**
 * Signs in with e-mail and password: a new session (a new token, whatever the browser held
 * before). Refused alike ({@link SignInRefused}) for an unknown e-mail, a user without a
 * password yet, a wrong password, and a locked name or address.
 */
export const signIn = Effect.fn("Sessions.signIn")(function* (input: {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly clientIp: string
}) {
  const store = yield* UserStore
  const hasher = yield* PasswordHasher
  const now = yield* Clock.currentTimeMillis
  const account = accountKey(input.email)
  const address = addressKey(input.clientIp)
  const locked = yield* lockedAt([account, address], now)
  const user = locked ? Option.none<UserRecord>() : yield* store.findUserByEmail(input.email)
  const stored = Option.flatMap(user, (u) => Option.fromNullable(u.passwordHash))
  const verified = yield* hasher.verify(input.password, Option.isSome(stored) ? stored.value : yield* dummyHash(hasher))
  if (locked) return yield* refuse("locked")
  if (Option.isNone(user) || Option.isNone(stored) || !verified) {
    yield* recordFailure(account, address, now)
    return yield* refuse(
      Option.isNone(user) ? "unknown-email" : Option.isNone(stored) ? "no-password" : "wrong-password"
    )
  }
  // A success forgives the name's earlier failures (not the address's: one address, many names).
  yield* Effect.flatMap(RateLimiter, (limiter) => limiter.reset(account))
  return yield* startSession(user.value)
})

/**
 * The viewer of a session token, if the session is live: known, within both timeouts, and made
 * under the user's current password. A dead session is deleted. `lastSeenAt` is written at most
 * once a minute.
 */
export const authenticate = Effect.fn("Sessions.authenticate")(function* (token: Redacted.Redacted<string>) {
  const raw = Redacted.value(token)
  if (!isTokenShaped(raw)) return Option.none<Viewer>()
  const store = yield* UserStore
  const id = yield* hashToken(raw)
  const found = yield* store.findSession(id)
  if (Option.isNone(found)) return Option.none<Viewer>()
  const { session, user } = found.value
  const now = yield* Clock.currentTimeMillis
  if (
    sessionState(session, now) !== "live" ||
    session.passwordVersion !== user.passwordVersion ||
    session.customerNo !== user.customerNo ||
    user.passwordHash === null
  ) {
    yield* store.deleteSession(id)
    return Option.none<Viewer>()
  }
  if (needsTouch(session.lastSeenAt, now)) yield* store.touchSession(id, { lastSeenAt: now })
  return Option.some(viewerOf(session, user))
})

/** Ends the session of `token` (nothing happens for an unknown one). */
export const signOut = Effect.fn("Sessions.signOut")(function* (token: Redacted.Redacted<string>) {
  const raw = Redacted.value(token)
  if (!isTokenShaped(raw)) return
  const store = yield* UserStore
  yield* store.deleteSession(yield* hashToken(raw))
})

/**
 * Checks the signed-in user's password again (before regenerating a key, inviting a user):
 * the viewer with `authenticatedAt` now. A wrong password counts against the sign-in name like
 * a failed sign-in, and a locked name is refused.
 */
export const confirmPassword = Effect.fn("Sessions.confirmPassword")(function* (
  viewer: Viewer,
  password: Redacted.Redacted<string>
) {
  const user = yield* verifyUser(viewer, password)
  const now = yield* Clock.currentTimeMillis
  yield* Effect.flatMap(UserStore, (store) =>
    store.touchSession(viewer.sessionId, { lastSeenAt: now, authenticatedAt: now })
  )
  return { ...viewer, email: user.email, role: user.role, authenticatedAt: now } satisfies Viewer
})

/**
 * The viewer's user if `password` is theirs (a hash is verified in every case); else
 * {@link SignInRefused}, the failure counted against the sign-in name.
 */
export const verifyUser: (
  viewer: Viewer,
  password: Redacted.Redacted<string>
) => Effect.Effect<UserRecord, SignInRefused | StorageError, UserStore | PasswordHasher | RateLimiter> =
  Effect.fnUntraced(function* (viewer: Viewer, password: Redacted.Redacted<string>) {
    const store = yield* UserStore
    const hasher = yield* PasswordHasher
    const now = yield* Clock.currentTimeMillis
    const account = accountKey(viewer.email)
    const locked = yield* lockedAt([account], now)
    const user = yield* store.findUser(viewer.customerNo, viewer.userId)
    const stored = Option.flatMap(user, (u) => Option.fromNullable(u.passwordHash))
    const verified = yield* hasher.verify(password, Option.isSome(stored) ? stored.value : yield* dummyHash(hasher))
    if (locked) return yield* refuse("locked")
    if (Option.isNone(user) || Option.isNone(stored) || !verified) {
      yield* recordFailure(account, undefined, now)
      return yield* refuse(
        Option.isNone(user) ? "unknown-email" : Option.isNone(stored) ? "no-password" : "wrong-password"
      )
    }
    return user.value
  })

/**
 * Deletes what can no longer be used: sessions past either timeout, expired one-time links and
 * locks that are over. For a host's periodic cleanup; how many rows went.
 */
export const purgeExpired = Effect.fn("Sessions.purgeExpired")(function* () {
  const now = yield* Clock.currentTimeMillis
  return yield* Effect.flatMap(UserStore, (store) =>
    // `+ 1`: a session is over at exactly its timeout (`sessionState`), and the store deletes by `<`.
    store.purgeExpired({ now, idleBefore: now - IDLE_MS + 1, begunBefore: now - ABSOLUTE_MS + 1 })
  )
})
