/**
 * @module Options
 *
 * What a host passes to `createHandler`, and what the handler's programs require.
 */
import type * as Redacted from "effect/Redacted"
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
