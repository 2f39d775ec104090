import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { digits, Entropy } from "../src/Entropy.js"

describe("Entropy", () => {
  it.effect("digits has the requested length", () =>
    Effect.gen(function*() {
      const d = yield* digits(8)
      expect(d).toMatch(/^\d{8}$/)
    }).pipe(Effect.provide(Entropy.webCrypto)))
})
