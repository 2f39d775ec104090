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

/** Encodes a millisecond time and 10 random bytes as a 26-character ULID. */
export const encode = (timeMs: number, random: Uint8Array): string => {
  let time = ""
  let t = timeMs
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time
    t = Math.floor(t / 32)
  }
  let bits = 0n
  for (let i = 0; i < 10; i++) bits = (bits << 8n) | BigInt(random[i] ?? 0)
  let rand = ""
  for (let i = 0; i < 16; i++) {
    rand = CROCKFORD[Number(bits & 31n)]! + rand
    bits >>= 5n
  }
  return time + rand
}

/** A new ULID from the Clock and the Entropy port. */
export const make: Effect.Effect<string, never, Entropy> = Effect.gen(function* () {
  const now = yield* Clock.currentTimeMillis
  const random = yield* (yield* Entropy).bytes(10)
  return encode(now, random)
})

/** A new event id. */
export const eventId: Effect.Effect<string, never, Entropy> = Effect.map(make, (u) => `evt_${u}`)
