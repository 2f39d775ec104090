/**
 * @module Ulid
 *
 * ULIDs (time-ordered, 128-bit) for event ids: `evt_` + ULID sorts by creation time, which keeps
 * webhook logs and `recover --since` natural to read.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Entropy } from "./Entropy.js"

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

/**
 * Encodes a millisecond time and 10 random bytes as a 26-character ULID: 10 characters of time,
 * then the 80 random bits five at a time, most significant first (missing bytes read as zero).
 */
export const encode = (timeMs: number, random: Uint8Array): string => {
  let time = ""
  let t = timeMs
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time
    t = Math.floor(t / 32)
  }
  let rand = ""
  for (let i = 0; i < 16; i++) {
    // Character i holds bits 5i .. 5i+4 of the 80, which sit in byte (5i >> 3) and maybe the next.
    const bit = i * 5
    const byte = bit >> 3
    const pair = ((random[byte] ?? 0) << 8) | (random[byte + 1] ?? 0)
    rand += CROCKFORD[(pair >> (11 - (bit & 7))) & 31]!
  }
  return time + rand
}

/** The event id (`evt_` + ULID) of a millisecond time and 10 random bytes. */
export const eventIdOf = (timeMs: number, random: Uint8Array): string => `evt_${encode(timeMs, random)}`

/** A new ULID from the Clock and the Entropy port. */
export const make: Effect.Effect<string, never, Entropy> = Effect.gen(function* () {
  const now = yield* Clock.currentTimeMillis
  const random = yield* (yield* Entropy).bytes(10)
  return encode(now, random)
})

/** A new event id. */
export const eventId: Effect.Effect<string, never, Entropy> = Effect.map(make, (u) => `evt_${u}`)
