/**
 * The RateLimit header fields of draft-ietf-httpapi-ratelimit-headers (structured fields):
 *
 * ```
 * RateLimit-Policy: "key";q=600;w=60     the policy: quota q per window of w seconds
 * RateLimit: "key";r=599;t=42            where the caller stands: r left, t seconds to reset
 * ```
 *
 * The policy name is `key` (per API key) or `ip` (per client address, requests without a key).
 * Core's `Admission` records the outcome of the limit it checked in a fiber-local slot; the
 * handler wraps every route with {@link withRateLimitHeaders}, so each answer that went through
 * a limit carries the fields, whatever the route answered, and routes need not know about them.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Admission } from "@waybill/core"
import { type Reply, withHeaders } from "../Raw.js"

/** The two header values for one usage record. */
export const rateLimitHeaders = (u: Admission.Usage): Record<string, string> => ({
  "ratelimit-policy": `"${u.policy}";q=${u.limit};w=${u.windowSeconds}`,
  ratelimit: `"${u.policy}";r=${u.remaining};t=${u.resetSeconds}`
})

/**
 * Adds the RateLimit fields to a route's answer when a limit was checked. The usage slot is the
 * request fiber's own: every request runs in a fiber of its own (`createHandler`), which starts
 * with an empty slot, so concurrent requests never see each other's usage and nothing needs
 * restoring afterwards.
 */
export const withRateLimitHeaders = <E, R>(route: Effect.Effect<Reply, E, R>): Effect.Effect<Reply, E, R> =>
  Effect.flatMap(route, (reply) =>
    Effect.withFiberRuntime((fiber) => {
      const usage = fiber.getFiberRef(Admission.currentUsage)
      return Effect.succeed(Option.isSome(usage) ? withHeaders(reply, rateLimitHeaders(usage.value)) : reply)
    })
  )
