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

/** Bytes drawn from the CSPRNG at a time by {@link pooledWebCrypto}. */
const POOL_BYTES = 4096

/**
 * The platform CSPRNG, drawn in 4 KiB blocks: each call of `crypto.getRandomValues` has a fixed
 * cost several times that of copying a few bytes, and a booking asks for random bytes three
 * times (tracking number, event id). Every byte is handed out once: the pool only moves
 * forward, and requests larger than a quarter of it go to the CSPRNG directly. (Node's own
 * `randomUUID` caches its entropy the same way.)
 */
const pooledWebCrypto = (): EntropyShape => {
  const pool = new Uint8Array(POOL_BYTES)
  let offset = POOL_BYTES
  return {
    bytes: (n) =>
      Effect.sync(() => {
        if (n > POOL_BYTES / 4) return globalThis.crypto.getRandomValues(new Uint8Array(n))
        if (offset + n > POOL_BYTES) {
          globalThis.crypto.getRandomValues(pool)
          offset = 0
        }
        const out = pool.slice(offset, offset + n)
        offset += n
        return out
      })
  }
}

export class Entropy extends Context.Tag("@waybill/core/Entropy")<Entropy, EntropyShape>() {
  /**
   * The platform CSPRNG (`crypto.getRandomValues`, a Web standard available in Node, Deno, Bun,
   * browsers), drawn in blocks of 4 KiB (a fresh pool per build of the layer).
   */
  static readonly webCrypto: Layer.Layer<Entropy> = Layer.sync(Entropy, pooledWebCrypto)
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
