/**
 * @module WebhookTransport
 *
 * One HTTP attempt of a webhook delivery. The adapter (`@waybill/webhook-fetch`) owns the
 * network rules: DNS checked whenever a connection opens and after 60 s of reuse, connections
 * pinned to the checked address, no redirects, size and time limits. Core only sees what the attempt gave, so the dispatcher's
 * retry logic is tested with a recording transport.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What one attempt gave; transport failures are values, never errors, so each is logged. */
export type WebhookResponse =
  | {
      readonly _tag: "Answered"
      readonly status: number
      readonly retryAfter: string | undefined
      readonly durationMs: number
      /** The first bytes of the answer's body, as text. */
      readonly head: string
    }
  | {
      readonly _tag: "NoAnswer"
      /** `timeout`, `refused` (the SSRF guard), `network`, `too-large`. */
      readonly reason: "timeout" | "refused" | "network" | "too-large"
      readonly durationMs: number
      readonly message: string
    }

export interface WebhookTransportShape {
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse>
}

export class WebhookTransport extends Context.Tag("@waybill/core/WebhookTransport")<
  WebhookTransport,
  WebhookTransportShape
>() {}
