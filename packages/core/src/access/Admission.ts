/**
 * @module Admission
 *
 * Whether a request may go on once its credential is known: the account's IP allowlist, then the
 * per-key request limit (keyed requests) or the per-address limit (quote and track without a
 * key). Every keyed endpoint calls {@link admitKey} right after authentication, so an allowlist
 * or a limit can never be forgotten by one route and kept by another.
 *
 * The outcome of the last limit checked is kept in {@link currentUsage}, a fiber-local slot the
 * HTTP handler reads to write `RateLimit-Policy` / `RateLimit` headers on the answer, whatever
 * the route then answers (success, 400, 409, or the 429 itself). Programs run without HTTP
 * (the CLI, tests) simply never read it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AccountRecord, Principal } from "./Account.js"
import * as ClientIp from "./ClientIp.js"
import {
  type InvalidCredential,
  type KeyRing,
  type MissingCredential,
  type RateLimitRule,
  type StorageError,
  WaybillConfig
} from "../shared/index.js"
import type { AccountStore } from "./AccountStore.js"
import type { UserStore } from "./UserStore.js"
import * as Credentials from "./Credentials.js"
import * as IpBlocks from "./IpBlocklist.js"
import { RateLimiter, type RateLimiterShape } from "./RateLimiter.js"
import { Metrics } from "../shared/index.js"

/** The client address is outside the account's IP allowlist (or unknown while one is set). */
export class IpNotAllowed extends Schema.TaggedError<IpNotAllowed>()("IpNotAllowed", {
  customerNo: Schema.String
}) {}

/** Over a request limit; `retryAfterSeconds` is when the window ends. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  policy: Schema.Literal("key", "ip"),
  limit: Schema.Number,
  windowSeconds: Schema.Number,
  retryAfterSeconds: Schema.Number
}) {}

/** Which limit applied: per API key, or per client address (requests without a key). */
export type Policy = "key" | "ip"

/** A limit and where the caller stands against it, as the RateLimit headers report it. */
export interface Usage {
  readonly policy: Policy
  readonly limit: number
  readonly windowSeconds: number
  readonly remaining: number
  /** Seconds until the window ends (at least 1). */
  readonly resetSeconds: number
}

/** The usage of the last limit this fiber checked; none before any check. */
export const currentUsage: FiberRef.FiberRef<Option.Option<Usage>> = FiberRef.unsafeMake<Option.Option<Usage>>(
  Option.none()
)

/**
 * Whether the account accepts requests from `client`. An empty allowlist accepts everyone. With
 * entries, only addresses inside one of them pass; an unknown address, or entries that do not
 * parse as CIDRs, never match (fail closed: an allowlist is a security setting).
 */
export const allowlisted = (
  account: Pick<AccountRecord, "ipAllowlist">,
  client: Option.Option<ClientIp.Address>
): boolean => {
  if (account.ipAllowlist.length === 0) return true
  if (Option.isNone(client)) return false
  return account.ipAllowlist.some((entry) =>
    Option.match(ClientIp.parseCidr(entry), {
      onNone: () => false,
      onSome: (cidr) => ClientIp.contains(cidr, client.value)
    })
  )
}

const KEY_BUCKET = "key:"
const IP_BUCKET = "ip:"

/**
 * Whether a counter key is one of the request limits counted here (per key, per client
 * address), as opposed to abuse or provisioning counters: the ones a host may count in memory
 * (`RateLimits.buffered` with `select: Admission.isRequestBucket`), since a request limit
 * tolerates being a flush interval stale across hosts.
 */
export const isRequestBucket = (key: string): boolean => key.startsWith(KEY_BUCKET) || key.startsWith(IP_BUCKET)

const limit = (
  limiter: RateLimiterShape,
  policy: Policy,
  bucket: string,
  rule: RateLimitRule
): Effect.Effect<void, RateLimited | StorageError> =>
  Effect.flatMap(limiter.hit(bucket, rule.requests, rule.windowSeconds * 1000), (quota) => {
    const resetSeconds = Math.max(1, Math.ceil(quota.resetMs / 1000))
    const usage: Usage = {
      policy,
      limit: quota.limit,
      windowSeconds: rule.windowSeconds,
      remaining: quota.remaining,
      resetSeconds
    }
    const noted = FiberRef.set(currentUsage, Option.some(usage))
    if (quota.allowed) return noted
    return Effect.zipRight(
      Effect.zipRight(noted, Metric.increment(Metrics.refusalsBy.rate_limited)),
      Effect.fail(
        new RateLimited({
          policy,
          limit: quota.limit,
          windowSeconds: rule.windowSeconds,
          retryAfterSeconds: resetSeconds
        })
      )
    )
  })

/**
 * Admits an authenticated request: the account's IP allowlist, then the per-key limit
 * (`limits.perKey`; a live and a test key count apart, and a portal session per user).
 */
export const admitKey = (
  principal: Principal,
  client: Option.Option<ClientIp.Address>
): Effect.Effect<void, IpNotAllowed | RateLimited | StorageError, RateLimiter | WaybillConfig> =>
  Effect.flatMap(Effect.context<RateLimiter | WaybillConfig>(), (context) => admitKeyIn(context, principal, client))

/** {@link admitKey} with its services already in hand. */
const admitKeyIn = (
  context: Context.Context<RateLimiter | WaybillConfig>,
  principal: Principal,
  client: Option.Option<ClientIp.Address>
): Effect.Effect<void, IpNotAllowed | RateLimited | StorageError> => {
  if (!allowlisted(principal.account, client)) {
    return Effect.fail(new IpNotAllowed({ customerNo: principal.account.customerNo }))
  }
  // A browser session counts on its own (per user), not against the key it acts under: a person
  // reading documents in a browser cannot use up an integration's budget, nor the reverse.
  const bucket = principal.session === undefined ? principal.key.id : `session:${principal.session.userId}`
  const rule = Context.get(context, WaybillConfig).limits.perKey
  return limit(Context.get(context, RateLimiter), "key", `${KEY_BUCKET}${bucket}`, rule)
}

/**
 * Admits a request without a key (quote, track) by its client address (`limits.perClient`,
 * IPv6 by /64). A request whose address is unknown (a host that passes none) is not limited.
 */
export const admitClient = (
  client: Option.Option<ClientIp.Address>
): Effect.Effect<void, RateLimited | StorageError, RateLimiter | WaybillConfig> =>
  Option.isNone(client)
    ? Effect.void
    : Effect.flatMap(Effect.context<RateLimiter | WaybillConfig>(), (context) =>
        limit(
          Context.get(context, RateLimiter),
          "ip",
          `${IP_BUCKET}${ClientIp.blockKey(client.value)}`,
          Context.get(context, WaybillConfig).limits.perClient
        )
      )

/** Why the door refuses: a blocked address, the credential, the allowlist, a limit, or storage. */
export type AdmitError =
  | IpBlocks.IpBlocked
  | MissingCredential
  | InvalidCredential
  | IpNotAllowed
  | RateLimited
  | StorageError

/** What the door reads: blocks, keys, secrets, counters and limits. */
export type AdmitRequirements = IpBlocks.IpBlocklist | AccountStore | KeyRing | RateLimiter | WaybillConfig | UserStore

/** What the door is given: the client address and the credential the precedence rules found. */
export interface AdmitInput {
  readonly client: Option.Option<ClientIp.Address>
  readonly resolution: Credentials.Resolution
}

/**
 * The one door of every keyed endpoint (booking, cancel, documents), run once per request before
 * the use case: a blocked address is refused first; then the credential the precedence rules
 * found (`Credentials`) is authenticated (none is `MissingCredential`), and admitted by the
 * account's IP allowlist and the per-key limit. Use cases receive the principal, never the raw
 * request.
 */
export const admit = (input: AdmitInput): Effect.Effect<Principal, AdmitError, AdmitRequirements> =>
  // Every service the door reads, from the context in one step.
  Effect.flatMap(Effect.context<AdmitRequirements>(), (context) =>
    Effect.flatMap(IpBlocks.checkIn(Context.get(context, IpBlocks.IpBlocklist), input.client), () =>
      Effect.flatMap(Credentials.authenticateIn(context, input.resolution), (principal) =>
        Effect.as(admitKeyIn(context, principal, input.client), principal)
      )
    )
  )

/**
 * {@link admit} for endpoints where the key is optional (quote, track: interface 5): no
 * credential at all is an anonymous request, limited by address; a credential must
 * authenticate. An invalid key never falls back to anonymous.
 */
export const admitOptional = (
  input: AdmitInput
): Effect.Effect<Option.Option<Principal>, AdmitError, AdmitRequirements> =>
  input.resolution._tag !== "None"
    ? Effect.map(admit(input), Option.some)
    : Effect.as(Effect.zipRight(IpBlocks.check(input.client), admitClient(input.client)), Option.none<Principal>())
