/**
 * @module Options
 *
 * What a host passes to `createHandler`, and what the handler's programs require.
 */
import type * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type { ActivityRecorderOptions } from "./ActivityRecorder.js"
import type { Booking, Documents, Operations, Provisioning, RateLimiter } from "@waybill/core"
import type { IdempotencyStore, Webhooks } from "@waybill/core"

/** Options a host passes; nothing here is read from the environment. */
export interface HandlerOptions {
  /** Public base URL (used in links the API returns). Defaults to the request's origin. */
  readonly baseUrl?: string
  /**
   * Base URL of links sent by e-mail (verification links). Defaults to `baseUrl`, and never to
   * anything from the request: a forged Host header must not reach a genuine e-mail. Without
   * either, provisioning answers 503.
   */
  readonly emailLinkBaseUrl?: string
  /** Guards `/ops/v1`; without it the operator API answers 404. */
  readonly operatorToken?: Redacted.Redacted<string>
  /**
   * Proxies (addresses or CIDRs) whose `X-Forwarded-For` is believed. Anyone else's header is
   * ignored, so a client cannot pick the address it is counted and blocked by.
   */
  readonly trustedProxies?: ReadonlyArray<string>
  /**
   * Lets the documents endpoint answer over plain HTTP (development only). Without it a request
   * that did not arrive over HTTPS (the URL scheme, or a trusted proxy's `X-Forwarded-Proto`)
   * gets a 400, because the answer carries download links that act as bearer credentials.
   */
  readonly allowInsecureHttp?: boolean
  /**
   * Private addresses or CIDRs webhook endpoints added through `/ops/v1` may use anyway (tests,
   * on-premises receivers); everything else must be public unicast.
   */
  readonly webhookAllowPrivate?: ReadonlyArray<string>
  /**
   * What `GET /readyz` reports: the host's checks (database reachable and migrated, mail and
   * blob stores configured, not shutting down). Any check not `ok`, or a hook that rejects, is a
   * 503. Without it, `/readyz` is ready whenever the handler's layer is built. Details reach
   * unauthenticated callers: they must name what failed, never hold a secret.
   */
  readonly readiness?: () => Promise<ReadonlyArray<ReadinessCheck>>
  /**
   * Serves `GET /metrics` (behind the operator token, like `/ops/v1`): the host renders its
   * metrics, e.g. `@waybill/metrics-prometheus`. Without it, `/metrics` answers 404.
   */
  readonly metrics?: () => Promise<MetricsPage>
  /**
   * The host's layer provides an Effect tracer (e.g. `@effect/opentelemetry`): each request gets
   * a server span named after its route, whose parent is an incoming `traceparent`. Off by
   * default, and then tracing is disabled for the request's fiber, so spans cost nothing.
   */
  readonly tracing?: boolean
  /**
   * The account activity log's recorder (used when the layer provides an `ActivityStore`):
   * batch timing and size and the buffer's bound, or `false` to record nothing in this process.
   */
  readonly activity?: ActivityRecorderOptions | false
  /**
   * Builds the layer through this memo map, so services another runtime built from the same
   * layer objects through the same map (`createPortal`'s, given the same `memoMap`) are shared,
   * not built twice: one storage engine's stores, one rate limiter, one set of caches. Shared
   * services are released when the last runtime using them is disposed. Make one with
   * `Effect.runSync(Layer.makeMemoMap)`.
   */
  readonly memoMap?: Layer.MemoMap
}

/** One readiness check's result. */
export interface ReadinessCheck {
  /** A short name: `database`, `migrations`, `mail`, `blobs`, `draining`... */
  readonly name: string
  readonly ok: boolean
  /** Why it failed, in words safe to show anyone. */
  readonly detail?: string
}

/** A rendered metrics page. */
export interface MetricsPage {
  /** E.g. `text/plain; version=0.0.4; charset=utf-8` for Prometheus text. */
  readonly contentType: string
  readonly body: string
}

/** What the server adapter knows about the connection. */
export interface ConnectionInfo {
  readonly remoteAddress?: string
}

/**
 * Everything the handler's programs need; a host builds it from adapters. `CancelProvider` is
 * optional (only accounts in `provider` cancel mode use it).
 */
export type HandlerRequirements =
  | Booking.BookingRequirements
  | Operations.OperationsRequirements
  | Documents.DocumentsRequirements
  | Provisioning.ProvisioningRequirements
  | RateLimiter
  | Webhooks.WebhooksRequirements
  | IdempotencyStore
