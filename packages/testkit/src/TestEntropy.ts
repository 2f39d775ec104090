/**
 * @module TestEntropy
 *
 * Deterministic stand-ins for the `Entropy` port. Tracking numbers, customer numbers, key
 * material and event ids all come from `Entropy`, so a seeded stream makes a whole use-case run
 * reproducible, and an exact byte sequence lets a test force one outcome (a colliding tracking
 * number, a rejection-sampling retry) without mocking the generator that consumes it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Entropy, type EntropyShape } from "@waybill/core"

/**
 * A splitmix32 stream from `seed`: fast, full-period over 2^32 states, and well mixed even for
 * small consecutive seeds (0, 1, 2 ...), which is what tests tend to pick. Not cryptographic.
 */
export const make = (seed: number): EntropyShape => {
  let state = seed | 0
  let word = 0
  let left = 0
  const nextByte = (): number => {
    if (left === 0) {
      state = (state + 0x9e3779b9) | 0
      let t = state ^ (state >>> 16)
      t = Math.imul(t, 0x21f0aaad)
      t ^= t >>> 15
      t = Math.imul(t, 0x735a2d97)
      word = (t ^ (t >>> 15)) >>> 0
      left = 4
    }
    left--
    const b = word & 0xff
    word >>>= 8
    return b
  }
  return {
    bytes: (n) =>
      Effect.sync(() => {
        const out = new Uint8Array(n)
        for (let i = 0; i < n; i++) out[i] = nextByte()
        return out
      })
  }
}

/**
 * `Entropy` from a seeded stream. Each build of the layer restarts the stream, so every test
 * that provides `layer(seed)` sees the same bytes.
 */
export const layer = (seed: number): Layer.Layer<Entropy> => Layer.sync(Entropy, () => make(seed))

/**
 * `Entropy` that hands out exactly `bytes`, in order, across calls. Asking for more than were
 * given is a defect naming the shortfall: a test that under-counts what a program draws should
 * fail loudly, not continue on invented randomness.
 */
export const sequenceEntropy = (bytes: ArrayLike<number>): Layer.Layer<Entropy> =>
  Layer.sync(Entropy, () => {
    const source = Uint8Array.from(bytes)
    let offset = 0
    return {
      bytes: (n) =>
        Effect.suspend(() => {
          if (offset + n > source.length) {
            return Effect.dieMessage(
              `sequenceEntropy: asked for ${n} bytes at offset ${offset}, only ${source.length - offset} left`
            )
          }
          const out = source.slice(offset, offset + n)
          offset += n
          return Effect.succeed(out)
        })
    }
  })
