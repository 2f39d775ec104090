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
 * handler reads it once the route has answered and adds the fields, so each answer that went
 * through a limit carries them, whatever the route answered, and routes need not know about them.
 */
import type { Admission } from "@waybill/core"

/**
 * The two header fields of one usage record, with the answer's `x-request-id`. One object
 * literal: spreading the two fields into a new object and adding the id made V8 build a new
 * hidden class for every answer (about 4,000 a second under the booking bench, see
 * docs/benchmarks.md).
 */
export const rateLimitHeaders = (u: Admission.Usage, requestId: string): Record<string, string> => ({
  "ratelimit-policy": `"${u.policy}";q=${u.limit};w=${u.windowSeconds}`,
  ratelimit: `"${u.policy}";r=${u.remaining};t=${u.resetSeconds}`,
  "x-request-id": requestId
})
