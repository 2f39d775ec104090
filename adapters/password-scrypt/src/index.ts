/**
 * @module @waybill/password-scrypt
 *
 * The `PasswordHasher` port over `node:crypto` scrypt (DECISIONS.md: N=2^17, r=8, p=1, maxmem
 * 256 MiB). Core cannot hash passwords itself (WebCrypto has no scrypt or argon2), so a host
 * provides a hasher; this is the one Waybill ships. Each hash takes 128 MiB and tens to hundreds
 * of milliseconds of one core, so a semaphore caps how many run at once: a burst of sign-ins or
 * registrations queues instead of exhausting memory or starving the event loop's thread pool.
 *
 * Stored strings describe themselves (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`, unpadded base64), so
 * the parameters can be raised later: old hashes still verify, and {@link needsRehash} says which
 * ones to replace at the next sign-in.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { PasswordHasher, type PasswordHasherShape } from "@waybill/core"

export interface ScryptOptions {
  /** log2 of N (default 17). */
  readonly logN?: number
  /** Block size (default 8). */
  readonly r?: number
  /** Parallelisation (default 1). */
  readonly p?: number
  /** Hashes computed at once (default 2). */
  readonly concurrency?: number
}

/** Memory scrypt may use for one hash: twice what the default parameters need (128 * N * r). */
const MAXMEM = 256 * 1024 * 1024
const KEY_LENGTH = 32
const SALT_LENGTH = 16

/** The parameters of a hash. */
export interface ScryptParameters {
  readonly logN: number
  readonly r: number
  readonly p: number
}

/**
 * Parameters scrypt accepts within {@link MAXMEM} and a bounded time. A stored string outside
 * them (corrupted, or written by someone else) is refused, not computed: a forged `ln=30` must
 * not make a sign-in allocate gigabytes.
 */
const withinBounds = ({ logN, r, p }: ScryptParameters): boolean =>
  Number.isInteger(logN) &&
  Number.isInteger(r) &&
  Number.isInteger(p) &&
  logN >= 1 &&
  logN <= 20 &&
  r >= 1 &&
  r <= 32 &&
  p >= 1 &&
  p <= 16 &&
  128 * 2 ** logN * r <= MAXMEM

const derive = (password: string, salt: Buffer, length: number, { logN, r, p }: ScryptParameters) =>
  Effect.async<Buffer, Error>((resume) => {
    scrypt(password.normalize("NFKC"), salt, length, { N: 2 ** logN, r, p, maxmem: MAXMEM }, (err, key) =>
      err === null ? resume(Effect.succeed(key)) : resume(Effect.fail(err))
    )
  })

const b64 = (b: Buffer) => b.toString("base64").replace(/=+$/, "")

const STORED = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,88})\$([A-Za-z0-9+/]{22,88})$/

/** A stored string's parts, or `undefined` when it is not a well-formed scrypt hash within bounds. */
export const parse = (
  stored: string
): { readonly parameters: ScryptParameters; readonly salt: Buffer; readonly hash: Buffer } | undefined => {
  const m = STORED.exec(stored)
  if (m === null) return undefined
  const parameters = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }
  if (!withinBounds(parameters)) return undefined
  const salt = Buffer.from(m[4]!, "base64")
  const hash = Buffer.from(m[5]!, "base64")
  // Unpadded base64 of a whole number of bytes never leaves one character over.
  if (m[4]!.length % 4 === 1 || m[5]!.length % 4 === 1 || salt.length < 8 || hash.length < 16) return undefined
  return { parameters, salt, hash }
}

const parametersOf = (options: ScryptOptions): ScryptParameters => {
  const parameters = { logN: options.logN ?? 17, r: options.r ?? 8, p: options.p ?? 1 }
  if (!withinBounds(parameters))
    throw new RangeError(`scrypt parameters out of bounds: ln=${parameters.logN}, r=${parameters.r}, p=${parameters.p}`)
  return parameters
}

/**
 * Whether a stored hash was made with other parameters than `options` (or is not a scrypt hash):
 * after a successful sign-in, hash the password again and store the new string.
 */
export const needsRehash = (stored: string, options: ScryptOptions = {}): boolean => {
  const want = parametersOf(options)
  const have = parse(stored)?.parameters
  return have === undefined || have.logN !== want.logN || have.r !== want.r || have.p !== want.p
}

/**
 * A scrypt hasher; hashes read `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64, unpadded). `verify`
 * answers false (never fails) for a wrong password and for a malformed stored string, and
 * compares in constant time. Throws a `RangeError` at once for parameters out of bounds.
 */
export const makeScrypt = (options: ScryptOptions = {}): Effect.Effect<PasswordHasherShape> => {
  const parameters = parametersOf(options)
  const { logN, r, p } = parameters
  return Effect.map(Effect.makeSemaphore(options.concurrency ?? 2), (semaphore) => ({
    hash: (password) =>
      semaphore.withPermits(1)(
        Effect.gen(function* () {
          const salt = randomBytes(SALT_LENGTH)
          const key = yield* Effect.orDie(derive(Redacted.value(password), salt, KEY_LENGTH, parameters))
          return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(key)}`
        })
      ),
    verify: (password, stored) => {
      const parsed = parse(stored)
      if (parsed === undefined) return Effect.succeed(false)
      return semaphore.withPermits(1)(
        derive(Redacted.value(password), parsed.salt, parsed.hash.length, parsed.parameters).pipe(
          Effect.map((key) => timingSafeEqual(key, parsed.hash)),
          // Bounds are checked first, so this is an environment refusing the memory: not a match.
          Effect.catchAll(() => Effect.succeed(false))
        )
      )
    }
  }))
}

/** {@link makeScrypt} as a layer (one semaphore per host). */
export const scryptLayer = (options: ScryptOptions = {}): Layer.Layer<PasswordHasher> =>
  Layer.effect(PasswordHasher, makeScrypt(options))
