import { describe, expect, it } from "vitest"
import * as fc from "effect/FastCheck"
import { decimalNumberFrom, uniformIntFrom } from "../src/shared/Entropy.js"
import * as Ulid from "../src/shared/Ulid.js"

/** The ULID spec's encoding, written the plain way: one 128-bit number, five bits at a time. */
const reference = (timeMs: number, random: Uint8Array): string => {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
  let n = BigInt(timeMs)
  for (let i = 0; i < 10; i++) n = (n << 8n) | BigInt(random[i] ?? 0)
  let out = ""
  for (let i = 0; i < 26; i++) {
    out = alphabet[Number(n & 31n)]! + out
    n >>= 5n
  }
  return out
}

describe("Ulid.encode", () => {
  it("encodes the spec's example time as its first ten characters", () => {
    expect(Ulid.encode(1469918176385, new Uint8Array(10)).slice(0, 10)).toBe("01ARYZ6S41")
  })

  it("matches the 128-bit reference encoding for any time and random bytes (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 48 - 1 }),
        fc.uint8Array({ minLength: 10, maxLength: 10 }),
        (time, random) => {
          expect(Ulid.encode(time, random)).toBe(reference(time, random))
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("reads missing random bytes as zero", () => {
    expect(Ulid.encode(0, new Uint8Array([0xff]))).toBe(reference(0, new Uint8Array([0xff])))
  })

  it("sorts by time: a later millisecond never sorts first (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 48 - 2 }),
        fc.uint8Array({ minLength: 10, maxLength: 10 }),
        fc.uint8Array({ minLength: 10, maxLength: 10 }),
        (time, a, b) => {
          expect(Ulid.encode(time, a) < Ulid.encode(time + 1, b)).toBe(true)
        }
      )
    )
  })
})

describe("Entropy draws from given bytes", () => {
  it("uniformIntFrom is in range, or undefined exactly above the largest multiple of the bound (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 32 }),
        fc.uint8Array({ minLength: 4, maxLength: 4 }),
        (bound, bytes) => {
          const x = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0
          const v = uniformIntFrom(bound, bytes)
          if (x >= Math.floor(2 ** 32 / bound) * bound) expect(v).toBeUndefined()
          else expect(v).toBe(x % bound)
        }
      )
    )
  })

  it("decimalNumberFrom gives n digits, the first not zero (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.uint8Array({ minLength: 4, maxLength: 4 }), (n, bytes) => {
        const v = decimalNumberFrom(n, bytes)
        if (v !== undefined) expect(v).toMatch(new RegExp(`^[1-9]\\d{${n - 1}}$`))
      })
    )
  })
})
