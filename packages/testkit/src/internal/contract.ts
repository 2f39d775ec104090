/**
 * What every conformance suite of this package shares: checking the cases an implementation
 * asks to skip (known names, a reason each), and registering one `it.effect` per case with a
 * fresh layer, skipped cases reported with their reason so a gap stays visible in every run.
 */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

/** The skip list of `contract(name)`, by case; throws on an unknown case or an empty reason. */
export const skipReasons = <C extends string>(
  contract: string,
  name: string,
  cases: ReadonlyArray<C>,
  skip: ReadonlyArray<{ readonly case: C; readonly reason: string }> = []
): ReadonlyMap<C, string> => {
  const skipped = new Map<C, string>()
  for (const entry of skip) {
    if (!cases.includes(entry.case)) {
      throw new Error(`${contract}(${name}): unknown case to skip: ${JSON.stringify(entry.case)}`)
    }
    if (entry.reason.trim() === "") {
      throw new Error(`${contract}(${name}): skipping ${JSON.stringify(entry.case)} needs a reason`)
    }
    skipped.set(entry.case, entry.reason.trim())
  }
  return skipped
}

/** Registers `describe(name)` with one case per entry of `cases`, each over a new `makeLayer()`. */
export const registerCases = <C extends string, R>(
  name: string,
  cases: ReadonlyArray<C>,
  body: { readonly [K in C]: Effect.Effect<void, unknown, R> },
  makeLayer: () => Layer.Layer<R, unknown>,
  skipped: ReadonlyMap<C, string>
): void => {
  describe(name, () => {
    for (const c of cases) {
      const reason = skipped.get(c)
      if (reason !== undefined) it.effect.skip(`${c} (skipped: ${reason})`, () => Effect.provide(body[c], makeLayer()))
      else it.effect(c, () => Effect.provide(body[c], makeLayer()))
    }
  })
}
