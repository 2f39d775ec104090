/**
 * @module ApiKey
 *
 * API key format, generation and hashing. A key is `wb_live_` or `wb_test_`, then 43 base62
 * characters (256 bits of entropy), then a 6-character base62 CRC-32 checksum of everything
 * before it. The checksum lets a typo or a forged string be rejected before any storage lookup,
 * and lets secret scanners recognise leaked keys. Only an HMAC-SHA-256 of the key under a server
 * pepper (KeyRing purpose `api-key`) is stored.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { ApiKeyRecord, KeyMode } from "./Account.js"
import { Entropy, toHex, utf8, KeyRing, type KeySecret } from "../shared/index.js"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const BODY_LENGTH = 43
const CHECKSUM_LENGTH = 6
const PATTERN = /^wb_(live|test)_([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/

/** Total length of every well-formed key. */
export const KEY_LENGTH = "wb_live_".length + BODY_LENGTH + CHECKSUM_LENGTH

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

const crc32 = (s: string): number => {
  let c = 0xffffffff
  for (let i = 0; i < s.length; i++) c = CRC_TABLE[(c ^ s.charCodeAt(i)) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const checksum = (s: string): string => {
  let n = crc32(s)
  let out = ""
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62]! + out
    n = Math.floor(n / 62)
  }
  return out
}

/** The mode of a well-formed key (format and checksum both right), or none. */
export const parse = (key: string): Option.Option<KeyMode> => {
  const m = PATTERN.exec(key)
  if (m === null) return Option.none()
  const head = key.slice(0, key.length - CHECKSUM_LENGTH)
  return checksum(head) === m[3] ? Option.some(m[1] as KeyMode) : Option.none()
}

/** The part of a key that is safe to show and log (`wb_live_AbCd`). */
export const hint = (key: string): string => key.slice(0, "wb_live_".length + 4)

/**
 * The last 4 characters of a key, shown to tell keys apart. They are the end of the checksum,
 * not of the random body: showing them narrows a 256-bit secret by at most about 24 bits.
 */
export const last4 = (key: string): string => key.slice(-4)

/** A fresh key of the given mode from the Entropy port (rejection sampling keeps base62 uniform). */
export const generate: (mode: KeyMode) => Effect.Effect<Redacted.Redacted<string>, never, Entropy> = Effect.fnUntraced(
  function* (mode: KeyMode) {
    const entropy = yield* Entropy
    let body = ""
    while (body.length < BODY_LENGTH) {
      for (const b of yield* entropy.bytes(64)) {
        if (b < 248 && body.length < BODY_LENGTH) body += ALPHABET[b % 62]!
      }
    }
    const head = `wb_${mode}_${body}`
    return Redacted.make(head + checksum(head))
  }
)

/** Hex HMAC-SHA-256 of the key under one `api-key` secret. */
export const hashWith = (secret: KeySecret, key: Redacted.Redacted<string>): Effect.Effect<string, never, KeyRing> =>
  Effect.flatMap(KeyRing, (ring) => Effect.map(ring.hmac(secret, utf8(Redacted.value(key))), toHex))

/** Hex HMAC-SHA-256 of the key under the current `api-key` secret: what storage keeps for new keys. */
export const hash = (key: Redacted.Redacted<string>): Effect.Effect<string, never, KeyRing> =>
  Effect.flatMap(KeyRing, (ring) => Effect.flatMap(ring.current("api-key"), (secret) => hashWith(secret, key)))

/**
 * A new active key for an account's `mode` slot (`key_<customerNo>_<mode>`) at `generation`: the
 * secret, to be shown once, and the record to store, which keeps its hash, hint and last 4
 * characters, never the key.
 */
export const issue = Effect.fnUntraced(function* (customerNo: string, mode: KeyMode, generation: number, now: number) {
  const key = yield* generate(mode)
  const record: ApiKeyRecord = {
    id: `key_${customerNo}_${mode}`,
    customerNo,
    mode,
    status: "active",
    generation,
    hash: yield* hash(key),
    hint: hint(Redacted.value(key)),
    last4: last4(Redacted.value(key)),
    createdAt: now,
    updatedAt: now
  }
  return { key, record }
})
