import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import { Tracing } from "../src/shared/index.js"

const spanName = Effect.map(
  Effect.option(Effect.currentSpan),
  Option.map((span) => span.name)
)

describe("Tracing.traced", () => {
  it.effect("runs the program inside a span of that name when the fiber traces", () =>
    Effect.gen(function* () {
      expect(yield* Tracing.traced("Use.case")(spanName)).toEqual(Option.some("Use.case"))
    })
  )

  it.effect("runs the program as it is, without a span, when tracing is off", () =>
    Effect.gen(function* () {
      const inside = yield* Effect.locally(Tracing.traced("Use.case")(spanName), FiberRef.currentTracerEnabled, false)
      expect(inside).toEqual(Option.none())
      // What it spares: withSpan still makes a (no-op) span with tracing off.
      const withSpan = yield* Effect.locally(
        Effect.withSpan(spanName, "Use.case"),
        FiberRef.currentTracerEnabled,
        false
      )
      expect(Option.isSome(withSpan)).toBe(true)
    })
  )

  it.effect("keeps the program's failure", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Tracing.traced("Use.case")(Effect.fail("nope")))
      expect(exit._tag).toBe("Failure")
    })
  )
})
