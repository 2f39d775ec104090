/**
 * @module UserStore
 *
 * Portal users, their server-side sessions, one-time link tokens (invite, reset) and sign-in
 * lockouts, as one port (`@waybill/storage-kysely` provides it; `userStoreContract` in
 * `@waybill/testkit` is its conformance suite). Every query about users is scoped by customer
 * number except the two that must find a user from outside an account: the sign-in name
 * ({@link UserStoreShape.findUserByEmail}) and a session or token hash (unguessable, 256 bits).
 * Secrets are stored only hashed: sessions and tokens by the SHA-256 of the token, passwords
 * as the `PasswordHasher`'s hash.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { StorageError } from "../shared/index.js"
import type { OneTimeTokenRecord, SessionRecord, UserRecord } from "./User.js"

export interface UserStoreShape {
  /** Inserts a user; false (nothing written) when the e-mail, in any case, already has a user. */
  readonly insertUser: (user: UserRecord) => Effect.Effect<boolean, StorageError>
  /** The user of the sign-in name (compared through `User.emailKey`), in whatever account. */
  readonly findUserByEmail: (email: string) => Effect.Effect<Option.Option<UserRecord>, StorageError>
  /** A user of one account. */
  readonly findUser: (customerNo: string, userId: string) => Effect.Effect<Option.Option<UserRecord>, StorageError>
  /** The account's users, oldest first. */
  readonly listUsers: (customerNo: string) => Effect.Effect<ReadonlyArray<UserRecord>, StorageError>
  /**
   * Sets the password hash if the stored `passwordVersion` is still `expectedVersion`, bumping
   * it by one and recording `changedAt`; false when another change got there first.
   */
  readonly setPassword: (input: {
    readonly customerNo: string
    readonly userId: string
    readonly passwordHash: string
    readonly expectedVersion: number
    readonly changedAt: number
  }) => Effect.Effect<boolean, StorageError>
  /** Removes a user with its sessions and tokens; false when there was none. */
  readonly removeUser: (customerNo: string, userId: string) => Effect.Effect<boolean, StorageError>

  readonly insertSession: (session: SessionRecord) => Effect.Effect<void, StorageError>
  /** A session and its user, by the session id (the token's hash). */
  readonly findSession: (
    id: string
  ) => Effect.Effect<Option.Option<{ readonly session: SessionRecord; readonly user: UserRecord }>, StorageError>
  /** Moves `lastSeenAt` (and `authenticatedAt` when given) forward; never backwards. */
  readonly touchSession: (
    id: string,
    at: { readonly lastSeenAt: number; readonly authenticatedAt?: number }
  ) => Effect.Effect<void, StorageError>
  readonly deleteSession: (id: string) => Effect.Effect<void, StorageError>
  /** Ends every session of a user, but `keep` (the one that made a password change); how many ended. */
  readonly deleteUserSessions: (
    customerNo: string,
    userId: string,
    keep?: string
  ) => Effect.Effect<number, StorageError>

  readonly insertToken: (token: OneTimeTokenRecord) => Effect.Effect<void, StorageError>
  readonly findToken: (hash: string) => Effect.Effect<Option.Option<OneTimeTokenRecord>, StorageError>
  /** Marks a token used if it was not; false when it already was (or is unknown): single use under concurrency. */
  readonly useToken: (hash: string, at: number) => Effect.Effect<boolean, StorageError>

  /** Records that sign-in for `key` is locked until `until` (a later lock extends, an earlier never shortens). */
  readonly lock: (key: string, until: number) => Effect.Effect<void, StorageError>
  /** Until when `key` is locked, if a lock was recorded (it may be over: compare with now). */
  readonly lockedUntil: (key: string) => Effect.Effect<Option.Option<number>, StorageError>

  /**
   * Deletes sessions last seen before `idleBefore` or begun before `begunBefore`, tokens expired
   * before `now`, and locks over by `now`. How many rows went.
   */
  readonly purgeExpired: (input: {
    readonly now: number
    readonly idleBefore: number
    readonly begunBefore: number
  }) => Effect.Effect<number, StorageError>
}

/** Portal users, sessions, one-time tokens and sign-in locks. */
export class UserStore extends Context.Tag("@waybill/core/UserStore")<UserStore, UserStoreShape>() {}
