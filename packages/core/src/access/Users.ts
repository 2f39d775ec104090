/**
 * @module Users
 *
 * The account portal's users (DECISIONS.md "Account portal and sessions"): invitations by a
 * signed-in owner or by an operator (the CLI), one-time links to set a password (invite, 24
 * hours) or a new one (reset, 30 minutes), password changes, the account's list, removal.
 *
 * One-time links carry a 256-bit token; storage keeps its SHA-256, the purpose, an expiry, and
 * the user's password version when it was made, so a link is single use and dies as soon as the
 * password changes by any route. Every password change ends every session of the user; the
 * change hands back a fresh session for the browser that made it.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Mailer, type StorageError, Transactor, Ulid } from "../shared/index.js"
import { AccountNotFound } from "./Accounts.js"
import { AccountStore } from "./AccountStore.js"
import { PasswordHasher } from "./PasswordHasher.js"
import * as PasswordPolicy from "./PasswordPolicy.js"
import { RateLimiter } from "./RateLimiter.js"
import * as Sessions from "./Sessions.js"
import {
  emailKey,
  InvalidEmail,
  isEmail,
  NotAllowed,
  type OneTimeTokenRecord,
  PasswordRejected,
  RecentAuthRequired,
  type Role,
  summary,
  type TokenPurpose,
  TokenInvalid,
  type UserRecord,
  UserExists,
  UserNotFound,
  type Viewer
} from "./User.js"
import { UserStore } from "./UserStore.js"

/** An invitation link works for 24 hours. */
export const INVITE_MS = 24 * 3_600_000
/** A reset link works for 30 minutes. */
export const RESET_MS = 30 * 60_000
/** Reset e-mails per address per hour; more requests get the same answer and no e-mail. */
export const RESETS_PER_HOUR = 5

/** The page a link opens: `${linkBase}/portal/invite/?token=...` or `.../portal/reset/?token=...`. */
export const linkFor = (linkBase: string, purpose: TokenPurpose, token: string): string =>
  `${linkBase.replace(/\/+$/, "")}/portal/${purpose}/?token=${encodeURIComponent(token)}`

const issueToken = Effect.fnUntraced(function* (user: UserRecord, purpose: TokenPurpose, now: number) {
  const token = yield* Sessions.newToken
  const record: OneTimeTokenRecord = {
    hash: yield* Sessions.hashToken(token),
    purpose,
    userId: user.userId,
    customerNo: user.customerNo,
    passwordVersion: user.passwordVersion,
    createdAt: now,
    expiresAt: now + (purpose === "invite" ? INVITE_MS : RESET_MS),
    usedAt: null
  }
  yield* Effect.flatMap(UserStore, (s) => s.insertToken(record))
  return { token, record }
})

/**
 * The user and the link of {@link invite}, in its transaction: a new user, or a new link for one
 * invited to this account before who never signed up.
 */
const inviteUser = Effect.fnUntraced(function* (
  store: Context.Tag.Service<UserStore>,
  input: { readonly customerNo: string; readonly role?: Role },
  email: string,
  inviter: Viewer | undefined,
  now: number
) {
  const existing = yield* store.findUserByEmail(email)
  if (Option.isSome(existing)) {
    const pending = existing.value
    // Invited here before and never signed up: send a new link rather than refuse.
    if (pending.customerNo === input.customerNo && pending.passwordHash === null) {
      const issued = yield* issueToken(pending, "invite", now)
      return { user: pending, token: issued.token, created: false }
    }
    return yield* new UserExists({ email })
  }
  // Without a role given, an account's first user is its owner (someone must manage keys and
  // users); every later one a member.
  const role =
    input.role ?? ((yield* store.listUsers(input.customerNo)).some((u) => u.role === "owner") ? "member" : "owner")
  const user: UserRecord = {
    userId: `usr_${yield* Ulid.make}`,
    customerNo: input.customerNo,
    email,
    role,
    passwordHash: null,
    passwordVersion: 0,
    passwordChangedAt: null,
    invitedBy: inviter?.email ?? null,
    createdAt: now
  }
  if (!(yield* store.insertUser(user))) return yield* new UserExists({ email })
  const issued = yield* issueToken(user, "invite", now)
  return { user, token: issued.token, created: true }
})

/**
 * Invites `email` to the account: a user without a password and a one-time link by e-mail. A
 * signed-in inviter (`invitedBy`) must be an owner of that account and have entered the password
 * in the last 10 minutes; an operator (no `invitedBy`) needs neither. Without a `role`, the
 * account's first user is its owner and every later one a member. Inviting an address that
 * was invited to this account and never set a password sends a new link (an earlier link keeps
 * working until it expires; whichever is used first sets the password and kills the other).
 * If the e-mail cannot be sent, the new user is removed again ({@link MailFailed}).
 */
export const invite = Effect.fn("Users.invite")(function* (input: {
  readonly customerNo: string
  readonly email: string
  readonly role?: Role
  readonly invitedBy?: Viewer
  /** The host's configured public base URL (never a request's Host header). */
  readonly linkBase: string
}) {
  const now = yield* Clock.currentTimeMillis
  const inviter = input.invitedBy
  if (inviter !== undefined) {
    if (inviter.customerNo !== input.customerNo)
      return yield* new NotAllowed({
        reason: "other-account",
        message: "You can invite users to your own account only."
      })
    if (inviter.role !== "owner")
      return yield* new NotAllowed({ reason: "not-owner", message: "Only an owner of the account can invite users." })
    if (!Sessions.isRecent(inviter, now)) return yield* new RecentAuthRequired()
  }
  const email = input.email.trim()
  if (!isEmail(email)) return yield* new InvalidEmail({ message: "Enter a valid e-mail address." })
  const account = yield* Effect.flatMap(AccountStore, (s) => s.findAccount(input.customerNo))
  if (Option.isNone(account)) return yield* new AccountNotFound({ customerNo: input.customerNo })
  const store = yield* UserStore
  const tx = yield* Transactor
  const { user, token, created } = yield* tx.withTransaction(inviteUser(store, input, email, inviter, now))
  const mailer = yield* Mailer
  yield* mailer
    .send({
      _tag: "Invite",
      to: user.email,
      accountName: account.value.name.trim() === "" ? input.customerNo : account.value.name,
      ...(inviter === undefined ? {} : { invitedBy: inviter.email }),
      link: Redacted.make(linkFor(input.linkBase, "invite", token)),
      expiresAt: now + INVITE_MS
    })
    .pipe(Effect.tapError(() => (created ? store.removeUser(user.customerNo, user.userId) : Effect.void)))
  return { userId: user.userId, role: user.role }
})

/** The token's record and user if the link is still good for `purpose`. */
const liveToken = Effect.fnUntraced(function* (raw: string, purpose: TokenPurpose) {
  if (!Sessions.isTokenShaped(raw)) return Option.none()
  const store = yield* UserStore
  const now = yield* Clock.currentTimeMillis
  const found = yield* store.findToken(yield* Sessions.hashToken(raw))
  if (Option.isNone(found)) return Option.none()
  const record = found.value
  if (record.purpose !== purpose || record.usedAt !== null || now >= record.expiresAt) return Option.none()
  const user = yield* store.findUser(record.customerNo, record.userId)
  if (Option.isNone(user) || user.value.passwordVersion !== record.passwordVersion) return Option.none()
  return Option.some({ record, user: user.value })
})

/** The address a one-time link is for, if it still works (the page's GET; nothing is used up). */
export const inspectToken = Effect.fn("Users.inspectToken")(function* (
  token: Redacted.Redacted<string>,
  purpose: TokenPurpose
) {
  const live = yield* liveToken(Redacted.value(token), purpose)
  return Option.map(live, ({ user }) => ({ email: user.email }))
})

const checkPassword = (password: Redacted.Redacted<string>, email: string) => {
  const problem = PasswordPolicy.check(Redacted.value(password), { ...PasswordPolicy.PORTAL, email })
  return problem === undefined
    ? Effect.void
    : Effect.fail(new PasswordRejected({ problem, message: PasswordPolicy.describe(problem, PasswordPolicy.PORTAL) }))
}

/**
 * The writes of {@link replacePassword}, in its transaction: the new password if `beforeChange`
 * allows it and the version is still the user's, and the end of the user's sessions.
 */
const writePassword = Effect.fnUntraced(function* (
  store: Context.Tag.Service<UserStore>,
  user: UserRecord,
  hash: string,
  beforeChange: Effect.Effect<boolean, StorageError>,
  now: number
) {
  if (!(yield* beforeChange)) return false
  const set = yield* store.setPassword({
    customerNo: user.customerNo,
    userId: user.userId,
    passwordHash: hash,
    expectedVersion: user.passwordVersion,
    changedAt: now
  })
  if (set) yield* store.deleteUserSessions(user.customerNo, user.userId)
  return set
})

/**
 * Sets the user's password if its version is still `expectedVersion`, ends every session of the
 * user, and starts a new one for the caller. False (nothing changed) when the version moved.
 */
const replacePassword = Effect.fnUntraced(function* (
  user: UserRecord,
  hash: string,
  beforeChange: Effect.Effect<boolean, StorageError> = Effect.succeed(true)
) {
  const store = yield* UserStore
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  const changed = yield* tx.withTransaction(writePassword(store, user, hash, beforeChange, now))
  if (!changed) return Option.none()
  const updated: UserRecord = {
    ...user,
    passwordHash: hash,
    passwordVersion: user.passwordVersion + 1,
    passwordChangedAt: now
  }
  return Option.some(yield* Sessions.startSession(updated))
})

const completeWithToken = Effect.fnUntraced(function* (
  token: Redacted.Redacted<string>,
  password: Redacted.Redacted<string>,
  purpose: TokenPurpose
) {
  const raw = Redacted.value(token)
  const live = yield* liveToken(raw, purpose)
  if (Option.isNone(live)) return yield* new TokenInvalid()
  const { record, user } = live.value
  yield* checkPassword(password, user.email)
  const hash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(password))
  const store = yield* UserStore
  const now = yield* Clock.currentTimeMillis
  const session = yield* replacePassword(user, hash, store.useToken(record.hash, now))
  if (Option.isNone(session)) return yield* new TokenInvalid()
  // The name's failed sign-ins are forgiven: the owner of the mailbox just proved it.
  yield* Effect.flatMap(RateLimiter, (l) => l.reset(Sessions.accountKey(user.email)))
  return session.value
})

/** Sets the invited user's password from the invitation link: signed in at once. */
export const acceptInvite = Effect.fn("Users.acceptInvite")(function* (
  token: Redacted.Redacted<string>,
  password: Redacted.Redacted<string>
) {
  return yield* completeWithToken(token, password, "invite")
})

/**
 * Mails a reset link to the user of `email`, if there is one. The answer is the same whether or
 * not the address has a user (and whether or not the e-mail went out); at most
 * {@link RESETS_PER_HOUR} e-mails an hour go to one address.
 */
export const requestReset = Effect.fn("Users.requestReset")(function* (input: {
  readonly email: string
  readonly linkBase: string
}) {
  const store = yield* UserStore
  const user = yield* store.findUserByEmail(input.email)
  if (Option.isNone(user)) return
  const quota = yield* Effect.flatMap(RateLimiter, (l) =>
    l.hit(`portal:reset:${emailKey(user.value.email)}`, RESETS_PER_HOUR, 3_600_000)
  )
  if (!quota.allowed) return
  const now = yield* Clock.currentTimeMillis
  const { token } = yield* issueToken(user.value, "reset", now)
  const mailer = yield* Mailer
  yield* mailer
    .send({
      _tag: "PasswordReset",
      to: user.value.email,
      link: Redacted.make(linkFor(input.linkBase, "reset", token)),
      expiresAt: now + RESET_MS
    })
    .pipe(Effect.catchAll((e) => Effect.logWarning("portal: reset e-mail not sent", e._tag)))
})

/** Sets a new password from a reset link: every session ends, and a new one starts. */
export const completeReset = Effect.fn("Users.completeReset")(function* (
  token: Redacted.Redacted<string>,
  password: Redacted.Redacted<string>
) {
  return yield* completeWithToken(token, password, "reset")
})

/**
 * Changes the signed-in user's password (the current one is asked for, so no recent
 * authentication is needed on top): every session of the user ends, this browser's included,
 * and a new session is returned for it.
 */
export const changePassword = Effect.fn("Users.changePassword")(function* (
  viewer: Viewer,
  current: Redacted.Redacted<string>,
  next: Redacted.Redacted<string>
) {
  const user = yield* Sessions.verifyUser(viewer, current)
  yield* checkPassword(next, user.email)
  const hash = yield* Effect.flatMap(PasswordHasher, (h) => h.hash(next))
  const session = yield* replacePassword(user, hash)
  // Changed concurrently by another route: this request's view of the password is stale.
  if (Option.isNone(session)) return yield* new Sessions.SignInRefused({ reason: "wrong-password" })
  return session.value
})

/** The account's users, oldest first. */
export const list = Effect.fn("Users.list")(function* (customerNo: string) {
  const users = yield* Effect.flatMap(UserStore, (s) => s.listUsers(customerNo))
  return users.map(summary)
})

/** The checks and the removal of {@link remove}, in its transaction, on the users as stored now. */
const removeUser = Effect.fnUntraced(function* (store: Context.Tag.Service<UserStore>, viewer: Viewer, userId: string) {
  const users = yield* store.listUsers(viewer.customerNo)
  // The role as stored now, not as the session saw it at sign-in.
  if (users.find((u) => u.userId === viewer.userId)?.role !== "owner")
    return yield* new NotAllowed({ reason: "not-owner", message: "Only an owner of the account can remove users." })
  const target = users.find((u) => u.userId === userId)
  if (target === undefined) return yield* new UserNotFound({ userId })
  const owners = users.filter((u) => u.role === "owner" && u.userId !== userId)
  if (target.role === "owner" && owners.length === 0)
    return yield* new NotAllowed({ reason: "last-owner", message: "An account keeps at least one owner." })
  yield* store.removeUser(viewer.customerNo, userId)
})

/** Removes a user of the viewer's account: owners only, never yourself, never the last owner. */
export const remove = Effect.fn("Users.remove")(function* (viewer: Viewer, userId: string) {
  if (viewer.role !== "owner")
    return yield* new NotAllowed({ reason: "not-owner", message: "Only an owner of the account can remove users." })
  if (userId === viewer.userId) return yield* new NotAllowed({ reason: "self", message: "You cannot remove yourself." })
  const store = yield* UserStore
  const tx = yield* Transactor
  yield* tx.withTransaction(removeUser(store, viewer, userId))
})
