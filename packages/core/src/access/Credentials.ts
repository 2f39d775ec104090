/**
 * @module Credentials
 *
 * Which credential a request carries, decided by pure precedence rules (interface section 5,
 * DECISIONS.md), and turning it into a {@link Principal}.
 *
 * An Authorization header, when present, alone decides: it must be `Bearer <token>`; anything
 * else is invalid and NEVER falls back to body, form or query credentials. Without the header,
 * each endpoint has its own ordered list of places to look.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { AccountRecord, ApiKeyRecord, Principal } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import * as ApiKey from "./ApiKey.js"
import * as Sessions from "./Sessions.js"
import type { UserStore } from "./UserStore.js"
import {
  InvalidCredential,
  MissingCredential,
  type StorageError,
  constantTimeEqual,
  KeyRing,
  type KeySecret,
  toHex,
  utf8
} from "../shared/index.js"

/** Where a credential was found; kept for logs and for `Cache-Control: no-store` on query keys. */
export type Source = "header" | "body.token" | "body.key" | "form.key" | "query.key" | "query.apikey" | "query.token"

export type Resolution =
  | { readonly _tag: "None" }
  | { readonly _tag: "Found"; readonly token: Redacted.Redacted<string>; readonly source: Source }
  | { readonly _tag: "Invalid"; readonly reason: "malformed-header" | "duplicate" }
  /** A portal session's token from its cookie (documents metadata only; see {@link orSession}). */
  | { readonly _tag: "Session"; readonly token: Redacted.Redacted<string> }

const NONE: Resolution = { _tag: "None" }

/** RFC 6750 b64token: the only characters a Bearer token may have. */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/** The Authorization header alone: absent -> None; present but not `Bearer <token>` -> Invalid. */
export const fromAuthorization = (header: string | null | undefined): Resolution => {
  if (header === null || header === undefined) return NONE
  const m = BEARER.exec(header)
  return m === null ? { _tag: "Invalid", reason: "malformed-header" } : found(m[1]!, "header")
}

const found = (token: string, source: Source): Resolution => ({ _tag: "Found", token: Redacted.make(token), source })

/** One candidate place: its values as received (a parameter may repeat in forms and queries). */
export interface Candidate {
  readonly source: Exclude<Source, "header">
  readonly values: ReadonlyArray<unknown>
}

/**
 * Applies the precedence: the header if present; otherwise the first candidate holding a value.
 * A candidate given twice is Invalid(duplicate) (a 400 for the caller), because two keys in one
 * request are either a mistake or an attempt to confuse logging and authorization. Non-string
 * and empty values count as absent.
 */
export const resolve = (authorization: string | null | undefined, candidates: ReadonlyArray<Candidate>): Resolution => {
  const header = fromAuthorization(authorization)
  if (header._tag !== "None") return header
  for (const c of candidates) {
    const present = c.values.filter((v): v is string => typeof v === "string" && v.length > 0)
    if (present.length > 1) return { _tag: "Invalid", reason: "duplicate" }
    if (present.length === 1) return found(present[0]!, c.source)
  }
  return NONE
}

/** Create shipments, after the header: body `data.token`, then `data.key`. */
export const bookingPlaces = (data: { readonly token?: unknown; readonly key?: unknown }): ReadonlyArray<Candidate> => [
  { source: "body.token", values: [data.token] },
  { source: "body.key", values: [data.key] }
]

/** Documents metadata, after the header: form `key`, then query `key`, `apikey`, `token`. */
export const documentsPlaces = (
  form: (name: string) => ReadonlyArray<string>,
  query: (name: string) => ReadonlyArray<string>
): ReadonlyArray<Candidate> => [
  { source: "form.key", values: form("key") },
  { source: "query.key", values: query("key") },
  { source: "query.apikey", values: query("apikey") },
  { source: "query.token", values: query("token") }
]

/**
 * The browser session as the last place (interface 5, rule 1; DECISIONS.md): only when the
 * request carries no credential at all. The Authorization header always wins (it is resolved
 * first and never falls back), and so does a key in the form or query: a key is the credential
 * the caller chose, a cookie is one the browser sends by itself. An empty cookie counts as none.
 */
export const orSession = (resolution: Resolution, sessionToken: string | undefined): Resolution =>
  resolution._tag === "None" && sessionToken !== undefined && sessionToken !== ""
    ? { _tag: "Session", token: Redacted.make(sessionToken) }
    : resolution

/**
 * The principal of a live portal session: the session's account, acting under its live key (the
 * test key while the live one is not active), so download tickets are bound to a key's
 * generation like any key's and die when that key is regenerated or disabled. The live key,
 * because a person signed in to the portal stands for the account itself, not for one
 * integration's test traffic; falling back to the test key matches the portal's own links
 * (`Documents.linksFor`). A dead session, an unknown account, or no active key: invalid.
 */
const sessionPrincipal = Effect.fnUntraced(function* (token: Redacted.Redacted<string>) {
  const viewer = yield* Sessions.authenticate(token)
  if (Option.isNone(viewer)) return yield* new InvalidCredential({ reason: "session" })
  const customerNo = viewer.value.customerNo
  const store = yield* AccountStore
  const account = yield* store.findAccount(customerNo)
  if (Option.isNone(account)) return yield* new InvalidCredential({ reason: "session" })
  for (const mode of ["live", "test"] as const) {
    const key = yield* store.findKey(customerNo, mode)
    if (Option.isSome(key) && key.value.status === "active") {
      const principal: Principal = {
        account: account.value,
        key: key.value,
        session: { userId: viewer.value.userId }
      }
      yield* FiberRef.set(identified, Option.some(principal))
      return principal
    }
  }
  return yield* new InvalidCredential({ reason: "session" })
})

/** Cancel, quote and track, after the header: query `key`. */
export const queryKeyPlaces = (query: (name: string) => ReadonlyArray<string>): ReadonlyArray<Candidate> => [
  { source: "query.key", values: query("key") }
]

/**
 * The account and key whose full key this fiber presented, once {@link authenticate} matched it,
 * whether or not the call then went on: a disabled key, the IP allowlist or a limit may still
 * refuse it. What the HTTP layer reads after the answer to record the call in the account's
 * activity log (`Activity`); none when no key of an account was presented.
 */
export const identified: FiberRef.FiberRef<Option.Option<Principal>> = FiberRef.unsafeMake<Option.Option<Principal>>(
  Option.none()
)

/**
 * Turns a resolution into the principal it names. Missing -> MissingCredential; everything else
 * that cannot authenticate -> InvalidCredential (the reason is for logs, never for the client).
 */
export const authenticate = (
  resolution: Resolution
): Effect.Effect<
  Principal,
  MissingCredential | InvalidCredential | StorageError,
  AccountStore | KeyRing | UserStore
> => {
  if (resolution._tag === "None") return Effect.fail(new MissingCredential())
  if (resolution._tag === "Invalid") return Effect.fail(new InvalidCredential({ reason: resolution.reason }))
  if (resolution._tag === "Session") return sessionPrincipal(resolution.token)
  const token = resolution.token
  return Effect.flatMap(Effect.context<AccountStore | KeyRing>(), (context) => byKey(context, token))
}

/**
 * {@link authenticate} with its services already in hand (the admission door takes them from
 * the context in one step).
 */
export const authenticateIn = (
  context: Context.Context<AccountStore | KeyRing | UserStore>,
  resolution: Resolution
): Effect.Effect<Principal, MissingCredential | InvalidCredential | StorageError> => {
  return resolution._tag === "Found"
    ? byKey(context, resolution.token)
    : Effect.provide(authenticate(resolution), context)
}

/**
 * The principal of an API key: its mode read from its shape, then its HMAC under each `api-key`
 * secret, newest first, looked up.
 */
const byKey = (
  context: Context.Context<AccountStore | KeyRing>,
  token: Redacted.Redacted<string>
): Effect.Effect<Principal, InvalidCredential | StorageError> => {
  const parsed = ApiKey.parse(Redacted.value(token))
  if (Option.isNone(parsed)) return Effect.fail(new InvalidCredential({ reason: "malformed-key" }))
  const mode = parsed.value
  const ring = Context.get(context, KeyRing)
  const store = Context.get(context, AccountStore)
  const message = utf8(Redacted.value(token))
  // Newest secret first; older ones find keys issued before a rotation of the api-key secret.
  const search = (
    secrets: ReadonlyArray<KeySecret>,
    i: number
  ): Effect.Effect<Principal, InvalidCredential | StorageError> =>
    i === secrets.length
      ? Effect.fail(new InvalidCredential({ reason: "unknown" }))
      : Effect.flatMap(ring.hmac(secrets[i]!, message), (mac) => {
          const digest = toHex(mac)
          return Effect.flatMap(store.findKeyWithAccount(digest), (found) =>
            Option.isNone(found) ? search(secrets, i + 1) : admitted(found.value, digest, mode)
          )
        })
  return Effect.flatMap(ring.all("api-key"), (secrets) => search(secrets, 0))
}

/** A stored key found by its hash: the principal, once the hash and mode agree and the key is active. */
const admitted = (
  found: { readonly key: ApiKeyRecord; readonly account: AccountRecord },
  digest: string,
  mode: ApiKeyRecord["mode"]
): Effect.Effect<Principal, InvalidCredential> => {
  const { key, account } = found
  if (!constantTimeEqual(key.hash, digest) || key.mode !== mode) {
    return Effect.fail(new InvalidCredential({ reason: "unknown" }))
  }
  const principal: Principal = { account, key }
  return Effect.zipRight(
    FiberRef.set(identified, Option.some(principal)),
    key.status === "active"
      ? Effect.succeed(principal)
      : Effect.fail(new InvalidCredential({ reason: key.status === "blank" ? "blank" : "disabled" }))
  )
}

/** The accounts a principal may read: its own first, then the accounts linked to it. */
export const readableAccounts = (
  principal: Principal
): Effect.Effect<ReadonlyArray<string>, StorageError, AccountStore> =>
  Effect.map(
    Effect.flatMap(AccountStore, (store) => store.linkedChildren(principal.account.customerNo)),
    (children) => [principal.account.customerNo, ...children]
  )
