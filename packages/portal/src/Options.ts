/**
 * @module Options
 *
 * What a host passes to `createPortal`.
 */
import type * as Layer from "effect/Layer"
import type { ViewerResolver } from "./internal/session.js"

export interface PortalOptions {
  /**
   * The origin browsers reach the portal at (`https://waybill.example.com`), from the host's
   * public base URL: every form POST must come from it (`Origin`, else `Referer`), or it is
   * refused with 403. Never taken from a request's Host field.
   */
  readonly publicOrigin: string
  /** Where the portal is mounted: `/portal` (the default); no final slash. */
  readonly basePath?: string
  /**
   * Plain-HTTP development: cookies without `Secure` and without the `__Host-` prefix
   * (`waybill_session` instead of `__Host-waybill_session`), which browsers refuse over HTTP.
   */
  readonly allowInsecureHttp?: boolean
  /**
   * Proxies (addresses or CIDRs) whose `X-Forwarded-For` is believed, by the rules of the API
   * handler (core `ClientIp`): the client address limits sign-in attempts.
   */
  readonly trustedProxies?: ReadonlyArray<string>
  /**
   * Who is signed in: sign-in, session lookup and sign-out. Without one, nobody can sign in
   * (every attempt gets the generic refusal).
   */
  readonly resolver?: ViewerResolver
  /**
   * Private addresses or CIDRs webhook endpoint URLs may point to anyway (the API handler's
   * `webhookAllowPrivate`; tests use it for a loopback receiver). Without it, only public
   * addresses are accepted.
   */
  readonly webhookAllowPrivate?: ReadonlyArray<string>
  /**
   * Builds the layer through this memo map: give the same map (and the same layer) to
   * `@waybill/http`'s `createHandler`, and the API and the portal share one set of services
   * (stores, rate limiter) instead of building the layer twice. Make one with
   * `Effect.runSync(Layer.makeMemoMap)`.
   */
  readonly memoMap?: Layer.MemoMap
}
