/**
 * @module User
 *
 * The people who sign in to the account portal (DECISIONS.md "Account portal and sessions").
 * A user belongs to one account (customer number); the e-mail address is the sign-in name,
 * compared without regard to case and unique across every account, so one sign-in name is one
 * user. Roles: `owner` (manages users and keys; the primary user from provisioning) and
 * `member`. The records, the signed-in {@link Viewer} and the errors the identity use cases
 * (`Sessions`, `Users`) fail with live here.
 */
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** What a user may do: `owner` manages users and keys, `member` everything else. */
export type Role = "owner" | "member"

/** The roles, for parsing (`--role`, a form field). */
export const roles: ReadonlyArray<Role> = ["owner", "member"]

/** Whether `value` names a {@link Role}. */
export const isRole = (value: unknown): value is Role => value === "owner" || value === "member"

/** A signed-in user, as every portal page receives it. */
export interface Viewer {
  readonly userId: string
  readonly customerNo: string
  readonly email: string
  readonly role: Role
  /** The stored hash of the session token, never the token. */
  readonly sessionId: string
  readonly csrfToken: Redacted.Redacted<string>
  /** Epoch ms: last time the password was entered. */
  readonly authenticatedAt: number
  /** Epoch ms: session start. */
  readonly createdAt: number
}

/** A user as stored. */
export interface UserRecord {
  /** `usr_` + ULID. */
  readonly userId: string
  readonly customerNo: string
  /** As entered (trimmed); compared through {@link emailKey}. */
  readonly email: string
  readonly role: Role
  /** The `PasswordHasher`'s hash; null for an invited user who has not set a password yet. */
  readonly passwordHash: string | null
  /**
   * Bumped by every password change. Sessions and one-time tokens remember the version they
   * were made under; a different one makes them dead.
   */
  readonly passwordVersion: number
  /** Epoch ms of the last password change; null before the first. */
  readonly passwordChangedAt: number | null
  /** E-mail of the user who invited this one; null for the primary user or an operator's invite. */
  readonly invitedBy: string | null
  readonly createdAt: number
}

/** A user as a list of the account's users shows it (no hash). */
export interface UserSummary {
  readonly userId: string
  readonly email: string
  readonly role: Role
  /** False while an invited user has not set a password. */
  readonly active: boolean
  readonly invitedBy: string | null
  readonly createdAt: number
  readonly passwordChangedAt: number | null
}

/** The summary of a record. */
export const summary = (user: UserRecord): UserSummary => ({
  userId: user.userId,
  email: user.email,
  role: user.role,
  active: user.passwordHash !== null,
  invitedBy: user.invitedBy,
  createdAt: user.createdAt,
  passwordChangedAt: user.passwordChangedAt
})

/** A browser session as stored; `id` is the SHA-256 (hex) of the token, the token is never kept. */
export interface SessionRecord {
  readonly id: string
  readonly userId: string
  readonly customerNo: string
  /** The per-session CSRF token (random, compared in constant time). */
  readonly csrfToken: string
  readonly createdAt: number
  readonly lastSeenAt: number
  readonly authenticatedAt: number
  /** The user's `passwordVersion` when the session began. */
  readonly passwordVersion: number
}

/** What a one-time link is for. */
export type TokenPurpose = "invite" | "reset"

/** A one-time link token as stored; `hash` is the SHA-256 (hex) of the token. */
export interface OneTimeTokenRecord {
  readonly hash: string
  readonly purpose: TokenPurpose
  readonly userId: string
  readonly customerNo: string
  /** The user's `passwordVersion` when the token was made: a password change kills it. */
  readonly passwordVersion: number
  readonly createdAt: number
  readonly expiresAt: number
  /** Set when it was used (single use); null until then. */
  readonly usedAt: number | null
}

/**
 * The form every e-mail comparison uses: trimmed, NFKC, lowercase. Sign-in names are
 * case-insensitive; storage keeps it next to the address as entered and makes it unique.
 */
export const emailKey = (email: string): string => email.trim().normalize("NFKC").toLowerCase()

/** A plausible e-mail address (one `@`, something on both sides, a dot in the domain, no spaces). */
export const isEmail = (email: string): boolean =>
  email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The one generic answer to a failed sign-in. */
export const SIGN_IN_REFUSED_MESSAGE = "E-mail or password is incorrect."

/**
 * A sign-in (or a password confirmation) was refused. The message is the same for a wrong
 * e-mail, a wrong password and a lockout, so nobody learns which addresses have users;
 * `reason` is for logs only and must never reach a client.
 */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  reason: Schema.Literal("unknown-email", "wrong-password", "no-password", "locked"),
  message: Schema.optionalWith(Schema.String, { default: () => SIGN_IN_REFUSED_MESSAGE })
}) {}

/** The e-mail address already signs in (to this account or another). */
export class UserExists extends Schema.TaggedError<UserExists>()("UserExists", {
  email: Schema.String
}) {}

/** No such user in this account. */
export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", {
  userId: Schema.String
}) {}

/** The action needs the password entered in the last 10 minutes (`Sessions.RECENT_AUTH_MS`). */
export class RecentAuthRequired extends Schema.TaggedError<RecentAuthRequired>()("RecentAuthRequired", {}) {}

/** The signed-in user may not do this (`reason` says why, for the page). */
export class NotAllowed extends Schema.TaggedError<NotAllowed>()("NotAllowed", {
  reason: Schema.Literal("not-owner", "self", "last-owner", "other-account"),
  message: Schema.String
}) {}

/** The address to invite is not a plausible e-mail address. */
export class InvalidEmail extends Schema.TaggedError<InvalidEmail>()("InvalidEmail", {
  message: Schema.String
}) {}

/** A one-time link token is unknown, used, expired, or dead since a password change. */
export class TokenInvalid extends Schema.TaggedError<TokenInvalid>()("TokenInvalid", {}) {}

/** The new password breaks the policy; `message` is `PasswordPolicy.describe`'s. */
export class PasswordRejected extends Schema.TaggedError<PasswordRejected>()("PasswordRejected", {
  problem: Schema.Literal("too-short", "too-long", "common", "contains-email"),
  message: Schema.String
}) {}
