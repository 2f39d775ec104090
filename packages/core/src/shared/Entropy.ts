/**
 * @module Entropy
 *
 * Cryptographic randomness as a port, so tracking numbers, key material and ids are
 * unpredictable in production and reproducible in tests (see `@waybill/testkit`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface EntropyShape {
  readonly bytes: (n: number) => Effect.Effect<Uint8Array>
}

export class Entropy extends Context.Tag("@waybill/core/Entropy")<Entropy, EntropyShape>() {
  /**
   * The platform CSPRNG (`crypto.getRandomValues`, a Web standard available in Node, Deno, Bun,
   * browsers). A host may provide another source of the same quality.
   */
  static readonly webCrypto: Layer.Layer<Entropy> = Layer.succeed(Entropy, {
    bytes: (n) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(n)))
  })
}

/**
 * The uniform integer in [0, bound) that four random bytes stand for (big-endian), or
 * `undefined` when they fall at or above the largest multiple of `bound` and must be drawn
 * again (rejection sampling: no modulo bias; for the bounds used here, about one draw in
 * forty-five at worst). `bound` at most 2^32.
 */
export const uniformIntFrom = (bound: number, bytes: Uint8Array): number | undefined => {
  const x = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0
  const limit = Math.floor(0x1_0000_0000 / bound) * bound
  return x < limit ? x % bound : undefined
}

/**
 * The `n`-digit decimal number (first digit not zero) that four random bytes stand for, as
 * {@link decimalNumber} draws it, or `undefined` when they must be drawn again.
 */
export const decimalNumberFrom = (n: number, bytes: Uint8Array): string | undefined => {
  const v = uniformIntFrom(9 * 10 ** (n - 1), bytes)
  return v === undefined ? undefined : String(10 ** (n - 1) + v)
}

/** Uniform integer in [0, bound) from the port, without modulo bias. */
export const uniformInt = (bound: number): Effect.Effect<number, never, Entropy> =>
  Effect.flatMap(Entropy, (entropy) => uniformIntWith(entropy, bound))

/** {@link uniformIntFrom} over 32-bit draws, drawing again until one is in range. */
const uniformIntWith = (entropy: EntropyShape, bound: number): Effect.Effect<number> =>
  Effect.flatMap(entropy.bytes(4), (b) => {
    const v = uniformIntFrom(bound, b)
    return v === undefined ? uniformIntWith(entropy, bound) : Effect.succeed(v)
  })

/** `n` decimal digits, leading zeros allowed. */
export const digits = (n: number): Effect.Effect<string, never, Entropy> =>
  Effect.map(uniformInt(10 ** n), (v) => v.toString().padStart(n, "0"))

/**
 * An `n`-digit decimal number whose first digit is not zero (tracking and customer numbers),
 * uniform over all of them, from one draw.
 */
export const decimalNumber = (n: number): Effect.Effect<string, never, Entropy> =>
  Effect.map(uniformInt(9 * 10 ** (n - 1)), (v) => String(10 ** (n - 1) + v))
