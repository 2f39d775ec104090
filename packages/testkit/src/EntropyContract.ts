/**
 * @module EntropyContract
 *
 * What every `Entropy` must do, as one suite: fresh bytes on every draw (never a range handed out
 * twice, whatever pooling an implementation does), roughly uniform, any size, and arrays that
 * belong to the caller.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { Entropy } from "@waybill/core"

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/** Runs the suite against the `Entropy` that `layer` provides (a fresh one per build). */
export const entropyContract = (name: string, layer: Layer.Layer<Entropy>): void => {
  describe(`Entropy contract: ${name}`, () => {
    it.effect("hands out fresh, uniform bytes of any size, each array the caller's", () =>
      Effect.gen(function* () {
        const entropy = yield* Entropy
        const seen = new Set<string>()
        let total = 0
        // 3,000 draws of 7 bytes cross a 4 KiB pool several times; a repeat would mean a byte
        // range handed out twice (the chance of a genuine 56-bit collision here is ~1e-10).
        for (let i = 0; i < 3000; i++) {
          const b = yield* entropy.bytes(7)
          expect(b).toHaveLength(7)
          total += b.reduce((a, x) => a + x, 0)
          seen.add(hex(b))
        }
        expect(seen.size).toBe(3000)
        // Not zeros: the mean byte is near 127.5.
        expect(total / 21_000).toBeGreaterThan(110)
        expect(total / 21_000).toBeLessThan(145)
        for (const n of [0, 1, 1024, 1025, 5000]) expect(yield* entropy.bytes(n)).toHaveLength(n)
        const a = yield* entropy.bytes(16)
        a.fill(0)
        expect((yield* entropy.bytes(16)).some((x) => x !== 0)).toBe(true)
      }).pipe(Effect.provide(layer))
    )
  })
}
