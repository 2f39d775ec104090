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
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { AccountRecord, ApiKeyRecord, Principal } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import * as ApiKey from "./ApiKey.js"
import { InvalidCredential, MissingCredential, type StorageError, constantTimeEqual, KeyRing } from "../shared/index.js"

/** Where a credential was found; kept for logs and for `Cache-Control: no-store` on query keys. */
export type Source = "header" | "body.token" | "body.key" | "form.key" | "query.key" | "query.apikey" | "query.token"

export type Resolution =
  | { readonly _tag: "None" }
  | { readonly _tag: "Found"; readonly token: Redacted.Redacted<string>; readonly source: Source }
  | { readonly _tag: "Invalid"; readonly reason: "malformed-header" | "duplicate" }

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

/** Cancel, quote and track, after the header: query `key`. */
export const queryKeyPlaces = (query: (name: string) => ReadonlyArray<string>): ReadonlyArray<Candidate> => [
  { source: "query.key", values: query("key") }
]

/**
 * Turns a resolution into the principal it names. Missing -> MissingCredential; everything else
 * that cannot authenticate -> InvalidCredential (the reason is for logs, never for the client).
 */
export const authenticate = (
  resolution: Resolution
): Effect.Effect<Principal, MissingCredential | InvalidCredential | StorageError, AccountStore | KeyRing> =>
  Effect.gen(function* () {
    if (resolution._tag === "None") return yield* new MissingCredential()
    if (resolution._tag === "Invalid") return yield* new InvalidCredential({ reason: resolution.reason })
    const token = resolution.token
    const mode = ApiKey.parse(Redacted.value(token))
    if (Option.isNone(mode)) return yield* new InvalidCredential({ reason: "malformed-key" })
    // Newest secret first; older ones find keys issued before a rotation of the api-key secret.
    const ring = yield* KeyRing
    const store = yield* AccountStore
    let found: Option.Option<{ readonly key: ApiKeyRecord; readonly account: AccountRecord }> = Option.none()
    let digest = ""
    for (const secret of yield* ring.all("api-key")) {
      digest = yield* ApiKey.hashWith(secret, token)
      found = yield* store.findKeyWithAccount(digest)
      if (Option.isSome(found)) break
    }
    if (
      Option.isNone(found) ||
      !constantTimeEqual(found.value.key.hash, digest) ||
      found.value.key.mode !== mode.value
    ) {
      return yield* new InvalidCredential({ reason: "unknown" })
    }
    const { key, account } = found.value
    if (key.status !== "active") {
      return yield* new InvalidCredential({ reason: key.status === "blank" ? "blank" : "disabled" })
    }
    return { account, key } satisfies Principal
  })

/** The accounts a principal may read: its own first, then the accounts linked to it. */
export const readableAccounts = (
  principal: Principal
): Effect.Effect<ReadonlyArray<string>, StorageError, AccountStore> =>
  Effect.map(
    Effect.flatMap(AccountStore, (store) => store.linkedChildren(principal.account.customerNo)),
    (children) => [principal.account.customerNo, ...children]
  )
