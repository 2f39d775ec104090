import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ApiKey from "../src/access/ApiKey.js"
import { Entropy } from "../src/shared/Entropy.js"
import { KeyRing } from "../src/shared/KeyRing.js"

const ring = (byte: number) =>
  KeyRing.fromSecrets({
    "api-key": [{ id: `t${byte}`, material: Redacted.make(new Uint8Array(32).fill(byte)) }],
    ticket: [],
    otp: [],
    webhook: []
  })

describe("ApiKey", () => {
  it.effect("generated keys are well formed, of their mode, and distinct", () =>
    Effect.gen(function* () {
      const live = Redacted.value(yield* ApiKey.generate("live"))
      const test = Redacted.value(yield* ApiKey.generate("test"))
      expect(live).toMatch(/^wb_live_[0-9A-Za-z]{49}$/)
      expect(live.length).toBe(ApiKey.KEY_LENGTH)
      expect(ApiKey.parse(live)).toEqual(Option.some("live"))
      expect(ApiKey.parse(test)).toEqual(Option.some("test"))
      expect(live.slice(8)).not.toBe(test.slice(8))
    }).pipe(Effect.provide(Entropy.webCrypto))
  )

  it.effect("bytes 248 to 255 are skipped, so every base62 character is equally likely", () =>
    Effect.gen(function* () {
      // 62 * 4 = 248: a byte at or above it would make the first characters more likely.
      const bytes = new Uint8Array(64)
      bytes.set([255, 248, 250], 0)
      for (let i = 3; i < 64; i++) bytes[i] = i - 3
      const key = yield* ApiKey.generate("live").pipe(
        Effect.provide(Layer.succeed(Entropy, { bytes: (n) => Effect.succeed(bytes.slice(0, n)) }))
      )
      const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
      expect(Redacted.value(key).slice("wb_live_".length, "wb_live_".length + 43)).toBe(alphabet.slice(0, 43))
    })
  )

  it.effect("any single-character change breaks the checksum", () =>
    Effect.gen(function* () {
      const key = Redacted.value(yield* ApiKey.generate("live"))
      const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
      fc.assert(
        fc.property(fc.integer({ min: 8, max: key.length - 1 }), fc.constantFrom(...alphabet), (i, c) => {
          fc.pre(key[i] !== c)
          const typo = key.slice(0, i) + c + key.slice(i + 1)
          expect(ApiKey.parse(typo)).toEqual(Option.none())
        })
      )
    }).pipe(Effect.provide(Entropy.webCrypto))
  )

  it("arbitrary strings are never accepted as keys", () => {
    fc.assert(fc.property(fc.string(), (s) => Option.isNone(ApiKey.parse(`wb_live_${s}`)) || s.length === 49))
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        expect(() => ApiKey.parse(s)).not.toThrow()
      })
    )
  })

  it("hint reveals only the prefix and four characters", () => {
    expect(ApiKey.hint("wb_live_ABCDEFGHIJ")).toBe("wb_live_ABCD")
  })

  it.effect("hash depends on the key and on the server secret", () =>
    Effect.gen(function* () {
      const key = yield* ApiKey.generate("live").pipe(Effect.provide(Entropy.webCrypto))
      const other = yield* ApiKey.generate("live").pipe(Effect.provide(Entropy.webCrypto))
      const a = yield* ApiKey.hash(key).pipe(Effect.provide(ring(1)))
      const again = yield* ApiKey.hash(key).pipe(Effect.provide(ring(1)))
      const b = yield* ApiKey.hash(key).pipe(Effect.provide(ring(2)))
      const c = yield* ApiKey.hash(other).pipe(Effect.provide(ring(1)))
      expect(a).toMatch(/^[0-9a-f]{64}$/)
      expect(again).toBe(a)
      expect(b).not.toBe(a)
      expect(c).not.toBe(a)
      expect(a).not.toContain(Redacted.value(key))
    })
  )

  it.effect("the plaintext never shows when a key is logged or stringified", () =>
    Effect.gen(function* () {
      const key = yield* ApiKey.generate("test")
      expect(String(key)).not.toContain("wb_test_")
      expect(JSON.stringify({ key })).not.toContain("wb_test_")
    }).pipe(Effect.provide(Layer.merge(Entropy.webCrypto, ring(1))))
  )
})
