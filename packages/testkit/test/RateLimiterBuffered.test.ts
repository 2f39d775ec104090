import * as Layer from "effect/Layer"
import { RateLimiter, RateLimits } from "@waybill/core"
import { rateLimiterContract } from "../src/index.js"

// core's buffered limiter over its in-process store; the SQL store runs the same in
// @waybill/storage-kysely. Per instance a buffered limiter is exact, so the whole suite applies.
rateLimiterContract("RateLimits.bufferedLayer over memory", () =>
  RateLimits.bufferedLayer().pipe(Layer.provide(RateLimits.memory))
)

// A flush due at nearly every hit (the cases move the clock), so flushes interleave with them.
rateLimiterContract("RateLimits.bufferedLayer over memory, flushMs 1", () =>
  RateLimits.bufferedLayer({ flushMs: 1 }).pipe(Layer.provide(RateLimits.memory))
)

// Without the background fiber: flushes only when a hit finds one due.
rateLimiterContract("RateLimits.buffered over memory", () =>
  Layer.sync(RateLimiter, () => RateLimits.buffered(RateLimits.makeMemory()))
)
