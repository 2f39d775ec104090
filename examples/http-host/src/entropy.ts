/**
 * The host's `Entropy`: Node's CSPRNG (`randomFillSync`), drawn 4 KiB at a time.
 *
 * Each call into the CSPRNG has a fixed cost several times that of copying a few bytes, and a
 * booking asks for random bytes three times (tracking number, event id): drawn one call each,
 * they were 8% of a booking's CPU in `bench/inproc.ts --profile` (docs/benchmarks.md). Every
 * byte is handed out once: the pool only moves forward, and requests larger than a quarter of it
 * go to the CSPRNG directly. Core's `Entropy.webCrypto` stays the portable default.
 */
import { randomFillSync } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Entropy, type EntropyShape } from "@waybill/core"

const POOL_BYTES = 4096

/** A fresh pool per call, so two layers never share (or hand out the same) bytes. */
export const makeNodeEntropy = (): EntropyShape => {
  const pool = new Uint8Array(POOL_BYTES)
  let offset = POOL_BYTES
  return {
    bytes: (n) =>
      Effect.sync(() => {
        if (n > POOL_BYTES / 4) return randomFillSync(new Uint8Array(n))
        if (offset + n > POOL_BYTES) {
          randomFillSync(pool)
          offset = 0
        }
        const out = pool.slice(offset, offset + n)
        offset += n
        return out
      })
  }
}

/** {@link makeNodeEntropy} as a layer: a fresh pool per build. */
export const nodeEntropy: Layer.Layer<Entropy> = Layer.sync(Entropy, makeNodeEntropy)
