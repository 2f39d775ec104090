import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Entropy } from "@waybill/core"
import { nodeEntropy } from "../src/entropy.js"

describe("the host's pooled node:crypto Entropy", () => {
  it.effect("hands out every pooled byte once, across refills and for any size", () =>
    Effect.gen(function* () {
      const entropy = yield* Entropy
      const seen = new Set<string>()
      let total = 0
      // 3,000 draws of 7 bytes cross the 4 KiB pool several times; a repeat would mean a byte
      // range handed out twice (the chance of a genuine 56-bit collision here is ~1e-10).
      for (let i = 0; i < 3000; i++) {
        const b = yield* entropy.bytes(7)
        expect(b).toHaveLength(7)
        total += b.reduce((a, x) => a + x, 0)
        seen.add(Buffer.from(b).toString("hex"))
      }
      expect(seen.size).toBe(3000)
      // Not a pool of zeros: the mean byte is near 127.5.
      expect(total / 21_000).toBeGreaterThan(110)
      expect(total / 21_000).toBeLessThan(145)
      for (const n of [0, 1, 1024, 1025, 5000]) expect(yield* entropy.bytes(n)).toHaveLength(n)
      // A returned array is the caller's: changing it does not touch later draws.
      const a = yield* entropy.bytes(16)
      a.fill(0)
      expect((yield* entropy.bytes(16)).some((x) => x !== 0)).toBe(true)
    }).pipe(Effect.provide(nodeEntropy))
  )
})
