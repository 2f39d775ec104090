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

/** Uniform integer in [0, bound) from the port, without modulo bias. */
export const uniformInt = (bound: number): Effect.Effect<number, never, Entropy> =>
  Effect.flatMap(Entropy, (entropy) => uniformIntWith(entropy, bound))

/**
 * Rejection sampling over 32-bit draws: a draw at or above the largest multiple of `bound` is
 * drawn again (for the bounds used here, about one draw in forty-five at worst).
 */
const uniformIntWith = (entropy: EntropyShape, bound: number): Effect.Effect<number> =>
  Effect.flatMap(entropy.bytes(4), (b) => {
    const x = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0
    const limit = Math.floor(0x1_0000_0000 / bound) * bound
    return x < limit ? Effect.succeed(x % bound) : uniformIntWith(entropy, bound)
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
