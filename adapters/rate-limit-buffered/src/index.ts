/**
 * @module @waybill/rate-limit-buffered
 *
 * A buffered `RateLimiter`: local counts in front of a shared store, flushed in batches.
 */
export * as RateLimitBuffered from "./RateLimitBuffered.js"
