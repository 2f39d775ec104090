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
  Effect.flatMap(Entropy, (entropy) =>
    Effect.iterate(
      { value: -1 },
      {
        while: (s) => s.value < 0,
        body: () =>
          Effect.map(entropy.bytes(4), (b) => {
            const x = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0
            const limit = Math.floor(0x1_0000_0000 / bound) * bound
            return { value: x < limit ? x % bound : -1 }
          })
      }
    )
  ).pipe(Effect.map((s) => s.value))

/** `n` decimal digits, leading zeros allowed. */
export const digits = (n: number): Effect.Effect<string, never, Entropy> =>
  Effect.map(uniformInt(10 ** n), (v) => v.toString().padStart(n, "0"))
