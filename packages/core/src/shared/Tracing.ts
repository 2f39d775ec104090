/**
 * @module Tracing
 *
 * Spans for the use cases on the request path. A use case is traced when the fiber traces: the
 * HTTP handler turns tracing off for the whole request unless the host asked for it
 * (`tracing: true`). With tracing off, `Effect.withSpan` still builds a no-op span, captures a
 * stack trace for it and wraps the program in an exit handler (about 25 runtime steps, more
 * than a booking's SQL statements take); {@link traced} reads the switch first and, when it is
 * off, runs the program as it is.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

/**
 * `self` inside a span named `name` when the fiber traces, else `self` alone: the switch is read
 * in the one step that then runs either.
 */
export const traced =
  (name: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime<A, E, R>((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(self, name) : self
    )
