import { createCipheriv, createDecipheriv } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import { type Aes256Block, KeyRing, type KeySecret, type SecretPurpose } from "../src/shared/KeyRing.js"

const secret: KeySecret = { id: "k", material: Redacted.make(new Uint8Array(48).map((_, i) => i * 7)) }
const secrets: Record<SecretPurpose, ReadonlyArray<KeySecret>> = {
  "api-key": [secret],
  ticket: [secret],
  otp: [secret],
  webhook: [secret]
}
const nodeBlock: Aes256Block = {
  encipher: (key, first, count) => createCipheriv("aes-256-ctr", key, first).update(new Uint8Array(16 * count)),
  decipher: (key, block) => {
    const d = createDecipheriv("aes-256-ecb", key, null).setAutoPadding(false)
    return Buffer.concat([d.update(block), d.final()])
  }
}

/** AES-256 of one block under the secret's first 32 bytes, straight from `node:crypto`. */
const aes = (block: Uint8Array) => {
  const c = createCipheriv("aes-256-ecb", Redacted.value(secret.material).subarray(0, 32), null).setAutoPadding(false)
  return Buffer.concat([c.update(block), c.final()])
}

/** `first + i` as a 128-bit big-endian number. */
const plus = (first: Uint8Array, i: number) => {
  const out = new Uint8Array(first)
  let carry = i
  for (let b = 15; b >= 0 && carry > 0; b--) {
    const sum = out[b]! + (carry & 0xff)
    out[b] = sum & 0xff
    carry = (carry >>> 8) + (sum >> 8)
  }
  return out
}

describe("KeyRing block cipher", () => {
  for (const [name, ring] of [
    ["WebCrypto", KeyRing.fromSecrets(secrets)],
    ["a host's synchronous AES", KeyRing.fromSecrets(secrets, { aes256Block: nodeBlock })]
  ] as const) {
    it.effect.prop(
      `${name}: encipherBlocks is AES of each counter block from first (carries included); decipherBlock inverts it`,
      [fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.integer({ min: 1, max: 40 })],
      ([first, count]) =>
        Effect.gen(function* () {
          const keyRing = yield* KeyRing
          const blocks = yield* keyRing.encipherBlocks(secret, first, count)
          expect(blocks.length).toBe(16 * count)
          for (let i = 0; i < count; i++) {
            const block = blocks.subarray(16 * i, 16 * (i + 1))
            expect(Buffer.from(block)).toEqual(aes(plus(first, i)))
            expect(Buffer.from(yield* keyRing.decipherBlock(secret, block))).toEqual(Buffer.from(plus(first, i)))
          }
        }).pipe(Effect.provide(ring))
    )
  }
})
