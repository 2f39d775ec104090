/**
 * @module session
 *
 * The portal's one seam to core's sessions. Everything the pipeline knows about users, sessions
 * and CSRF goes through this module: a {@link ViewerResolver} (sign in, authenticate a session
 * token, sign out) and the two CSRF rules ({@link checkCsrf}, {@link sameOrigin}), which are
 * core's `Sessions.checkCsrf` / `Sessions.sameOrigin`. The error tags are the ones
 * core uses (`SignInRefused`, `StorageError`), so core's `Sessions` functions fit the resolver as
 * they are.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Accounts, Activity, Documents, Provisioning, Sessions, Shipments, Users, Webhooks } from "@waybill/core"
import type { Viewer } from "./viewer.js"

export type { Role, Viewer } from "./viewer.js"

/**
 * The services the portal's programs require from the layer given to `createPortal`. Every page
 * that calls a core use case adds that use case's requirements here.
 */
export type PortalRequirements =
  | Effect.Effect.Context<ReturnType<typeof Sessions.signIn>>
  | Effect.Effect.Context<ReturnType<typeof Sessions.authenticate>>
  | Effect.Effect.Context<ReturnType<typeof Sessions.signOut>>
  | Effect.Effect.Context<ReturnType<typeof Shipments.search>>
  | Effect.Effect.Context<ReturnType<typeof Shipments.detail>>
  | Effect.Effect.Context<ReturnType<typeof Shipments.cancel>>
  | Effect.Effect.Context<ReturnType<typeof Documents.linksOf>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.list>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.get>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.add>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.update>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.setEnabled>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.delete>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.rotateSecret>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.log>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.resend>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.recover>>
  | Effect.Effect.Context<ReturnType<typeof Webhooks.account.sendTest>>
  | Effect.Effect.Context<ReturnType<typeof Users.inspectToken>>
  | Effect.Effect.Context<ReturnType<typeof Users.acceptInvite>>
  | Effect.Effect.Context<ReturnType<typeof Users.requestReset>>
  | Effect.Effect.Context<ReturnType<typeof Users.completeReset>>
  | Effect.Effect.Context<ReturnType<typeof Users.changePassword>>
  | Effect.Effect.Context<ReturnType<typeof Sessions.confirmPassword>>
  | Effect.Effect.Context<ReturnType<typeof Accounts.keySlots>>
  | Effect.Effect.Context<ReturnType<typeof Accounts.regenerateKey>>
  | Effect.Effect.Context<ReturnType<typeof Accounts.changeKeyStatus>>
  | Effect.Effect.Context<ReturnType<typeof Accounts.showAccount>>
  | Effect.Effect.Context<ReturnType<typeof Accounts.setIpAllowlist>>
  | Effect.Effect.Context<ReturnType<typeof Activity.list>>
  | Effect.Effect.Context<ReturnType<typeof Provisioning.accountProfile>>
  | Effect.Effect.Context<ReturnType<typeof Users.list>>
  | Effect.Effect.Context<ReturnType<typeof Users.invite>>
  | Effect.Effect.Context<ReturnType<typeof Users.remove>>

/** The store could not answer (core's `StorageError`): the page answers 503. */
export interface StorageFailure {
  readonly _tag: "StorageError"
}

/**
 * A sign-in refused: wrong e-mail or password, or too many attempts (core's `SignInRefused`).
 * The page shows one generic message whatever the reason, so no account can be enumerated.
 */
export interface SignInRefused {
  readonly _tag: "SignInRefused"
}

export interface SignInInput {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  /** The client address (through the trusted proxies), for the per-address sign-in limit. */
  readonly clientIp: string
}

/** A new session: its token goes into the session cookie, never anywhere else. */
export interface SignedIn {
  readonly token: Redacted.Redacted<string>
  readonly viewer: Viewer
}

/**
 * Who is signed in. Implemented by core's `Sessions` (`signIn`, `authenticate`, `signOut`);
 * tests give their own.
 */
export interface ViewerResolver {
  /** The session's viewer, or none when the token is unknown, expired (idle or absolute) or ended. */
  readonly authenticate: (
    token: Redacted.Redacted<string>
  ) => Effect.Effect<Option.Option<Viewer>, StorageFailure, PortalRequirements>
  /** Checks the password and starts a new session (a new token: sessions are rotated at sign-in). */
  readonly signIn: (input: SignInInput) => Effect.Effect<SignedIn, SignInRefused | StorageFailure, PortalRequirements>
  /** Ends the session of the token (nothing happens for an unknown one). */
  readonly signOut: (token: Redacted.Redacted<string>) => Effect.Effect<void, StorageFailure, PortalRequirements>
}

/**
 * Core's sessions (`Sessions.signIn`, `authenticate`, `signOut`): the resolver every portal runs
 * with unless its options give another (tests do).
 */
export const coreSessions: ViewerResolver = {
  authenticate: Sessions.authenticate,
  signIn: Sessions.signIn,
  signOut: Sessions.signOut
}

/**
 * The two CSRF rules every POST passes: core's `Sessions.checkCsrf` (the session's token,
 * compared in constant time; a missing or empty one never) and `Sessions.sameOrigin` (the
 * `Origin` field, else the `Referer`'s origin, must be the portal's).
 */
export const { checkCsrf, sameOrigin } = Sessions
