/**
 * @module password
 *
 * The `PasswordHasher` port over `node:crypto` scrypt (DECISIONS.md: N=2^17, r=8, p=1, maxmem
 * 256 MiB). Core cannot do this itself (WebCrypto has no scrypt), so every embedder provides a
 * hasher; this is the example host's. Each hash takes 128 MiB and tens to hundreds of
 * milliseconds of one core, so a semaphore caps how many run at once: a burst of registrations
 * queues instead of exhausting memory or starving the event loop's thread pool.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { PasswordHasher, type PasswordHasherShape } from "@waybill/core"

export interface ScryptOptions {
  /** log2 of N (default 17). */
  readonly logN?: number
  readonly r?: number
  readonly p?: number
  /** Hashes computed at once (default 2). */
  readonly concurrency?: number
}

const MAXMEM = 256 * 1024 * 1024
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, logN: number, r: number, p: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: 2 ** logN, r, p, maxmem: MAXMEM }, (err, key) =>
      err === null ? resume(Effect.succeed(key)) : resume(Effect.die(err))
    )
  })

const b64 = (b: Buffer) => b.toString("base64").replace(/=+$/, "")

/** A scrypt hasher; hashes read `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64, unpadded). */
export const makeScrypt = (options: ScryptOptions = {}): Effect.Effect<PasswordHasherShape> =>
  Effect.map(Effect.makeSemaphore(options.concurrency ?? 2), (semaphore) => {
    const logN = options.logN ?? 17
    const r = options.r ?? 8
    const p = options.p ?? 1
    return {
      hash: (password) =>
        semaphore.withPermits(1)(
          Effect.gen(function* () {
            const salt = randomBytes(16)
            const key = yield* derive(Redacted.value(password), salt, logN, r, p)
            return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(key)}`
          })
        ),
      verify: (password, stored) =>
        semaphore.withPermits(1)(
          Effect.gen(function* () {
            const m = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(
              stored
            )
            if (m === null) return false
            const expected = Buffer.from(m[5]!, "base64")
            const key = yield* derive(
              Redacted.value(password),
              Buffer.from(m[4]!, "base64"),
              Number(m[1]),
              Number(m[2]),
              Number(m[3])
            )
            return key.length === expected.length && timingSafeEqual(key, expected)
          })
        )
    }
  })

/** {@link makeScrypt} as a layer (one semaphore per host). */
export const scryptLayer = (options: ScryptOptions = {}): Layer.Layer<PasswordHasher> =>
  Layer.effect(PasswordHasher, makeScrypt(options))
