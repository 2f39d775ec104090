/**
 * @module KeyRing
 *
 * Server secrets by purpose and key id, so they can rotate: the newest secret of a purpose
 * signs or hashes new things; older ones still verify what they made. The ring also computes
 * HMACs with its secrets, so a host can plug in its platform's fastest implementation
 * (`node:crypto` is about ten times cheaper per call than WebCrypto) while core stays pure.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

export type SecretPurpose = "api-key" | "ticket" | "otp" | "webhook"

export interface KeySecret {
  readonly id: string
  readonly material: Redacted.Redacted<Uint8Array>
}

export interface KeyRingShape {
  /** The newest secret of a purpose: what new things are made with. */
  readonly current: (purpose: SecretPurpose) => Effect.Effect<KeySecret>
  readonly byId: (purpose: SecretPurpose, id: string) => Effect.Effect<Option.Option<KeySecret>>
  /** Every secret of a purpose, newest first: what old things are verified with. */
  readonly all: (purpose: SecretPurpose) => Effect.Effect<ReadonlyArray<KeySecret>>
  /** HMAC-SHA-256 of `message` under `secret`. */
  readonly hmac: (secret: KeySecret, message: Uint8Array) => Effect.Effect<Uint8Array>
  /** AES-256-GCM under the first 32 bytes of `secret`: ciphertext followed by the 16-byte tag. */
  readonly seal: (
    secret: KeySecret,
    iv: Uint8Array,
    aad: Uint8Array,
    plaintext: Uint8Array
  ) => Effect.Effect<Uint8Array>
  /** Opens what {@link KeyRingShape.seal} made; none when the tag does not verify. */
  readonly unseal: (
    secret: KeySecret,
    iv: Uint8Array,
    aad: Uint8Array,
    sealed: Uint8Array
  ) => Effect.Effect<Option.Option<Uint8Array>>
  /**
   * AES-256 as a block cipher under the first 32 bytes of `secret`: the encryptions of `count`
   * consecutive 16-byte blocks from `first` (`first`, `first + 1`, ... as big-endian 128-bit
   * numbers), one after another. That is the AES-CTR keystream from counter block `first`, so
   * one cipher call serves a whole documents lookup.
   */
  readonly encipherBlocks: (secret: KeySecret, first: Uint8Array, count: number) => Effect.Effect<Uint8Array>
  /** The inverse of {@link KeyRingShape.encipherBlocks}'s block cipher, on one 16-byte block. */
  readonly decipherBlock: (secret: KeySecret, block: Uint8Array) => Effect.Effect<Uint8Array>
}

/**
 * A synchronous AES-256-GCM a host may plug in (e.g. `node:crypto`'s `createCipheriv`), much
 * cheaper per call than WebCrypto's promise round trip.
 */
export interface Aes256Gcm {
  /** Ciphertext followed by the 16-byte tag. */
  readonly seal: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array) => Uint8Array
  /** The plaintext, or undefined when the tag does not verify. */
  readonly open: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, sealed: Uint8Array) => Uint8Array | undefined
}

/**
 * A synchronous AES-256 block cipher a host may plug in (e.g. `node:crypto`'s `aes-256-ctr` and
 * `aes-256-ecb`): WebCrypto answers through a promise and has no single-block mode, so its
 * inverse takes two calls.
 */
export interface Aes256Block {
  /** The AES-CTR keystream of `count` blocks from counter block `first`. */
  readonly encipher: (key: Uint8Array, first: Uint8Array, count: number) => Uint8Array
  /** AES-256 decryption of one 16-byte block. */
  readonly decipher: (key: Uint8Array, block: Uint8Array) => Uint8Array
}

/** CBC's padding block for a 16-byte message: sixteen bytes of 16. */
const FULL_PAD = 0x10

export class KeyRing extends Context.Tag("@waybill/core/KeyRing")<KeyRing, KeyRingShape>() {
  /**
   * A ring from lists of secrets per purpose, newest first. Each purpose needs at least one
   * secret of at least 32 bytes; a host typically derives them from one master secret it keeps
   * outside the database. `hmacSha256` replaces the WebCrypto HMAC with a synchronous one (for
   * example `(key, msg) => createHmac("sha256", key).update(msg).digest()` from `node:crypto`),
   * `aes256Gcm` and `aes256Block` WebCrypto's AES the same way.
   */
  static readonly fromSecrets = (
    secrets: Readonly<Record<SecretPurpose, ReadonlyArray<KeySecret>>>,
    options: {
      readonly hmacSha256?: (key: Uint8Array, message: Uint8Array) => Uint8Array
      readonly aes256Gcm?: Aes256Gcm
      readonly aes256Block?: Aes256Block
    } = {}
  ): Layer.Layer<KeyRing> => {
    for (const list of Object.values(secrets)) {
      for (const s of list) {
        if (Redacted.value(s.material).length < 32) throw new Error(`KeyRing: secret ${s.id} is shorter than 32 bytes`)
      }
    }
    const webCryptoKeys = new WeakMap<KeySecret, Promise<CryptoKey>>()
    const viaWebCrypto = (secret: KeySecret, message: Uint8Array) =>
      Effect.promise(async () => {
        let key = webCryptoKeys.get(secret)
        if (key === undefined) {
          key = globalThis.crypto.subtle.importKey(
            "raw",
            new Uint8Array(Redacted.value(secret.material)),
            { name: "HMAC", hash: "SHA-256" },
            false,
            ["sign"]
          )
          webCryptoKeys.set(secret, key)
        }
        return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", await key, new Uint8Array(message)))
      })
    const aesKeys = new WeakMap<KeySecret, Promise<CryptoKey>>()
    const aesKey = (secret: KeySecret): Promise<CryptoKey> => {
      let key = aesKeys.get(secret)
      if (key === undefined) {
        // AES-256 takes exactly 32 bytes; secrets are at least that long.
        key = globalThis.crypto.subtle.importKey(
          "raw",
          new Uint8Array(Redacted.value(secret.material).subarray(0, 32)),
          "AES-GCM",
          false,
          ["encrypt", "decrypt"]
        )
        aesKeys.set(secret, key)
      }
      return key
    }
    const gcm = (iv: Uint8Array, aad: Uint8Array) => ({
      name: "AES-GCM",
      iv: new Uint8Array(iv),
      additionalData: new Uint8Array(aad),
      tagLength: 128
    })
    const aes = options.aes256Gcm
    const keyBytes = (secret: KeySecret) => Redacted.value(secret.material).subarray(0, 32)
    const seal: KeyRingShape["seal"] =
      aes === undefined
        ? (secret, iv, aad, plaintext) =>
            Effect.promise(
              async () =>
                new Uint8Array(
                  await globalThis.crypto.subtle.encrypt(gcm(iv, aad), await aesKey(secret), new Uint8Array(plaintext))
                )
            )
        : (secret, iv, aad, plaintext) => Effect.sync(() => aes.seal(keyBytes(secret), iv, aad, plaintext))
    const unseal: KeyRingShape["unseal"] =
      aes === undefined
        ? (secret, iv, aad, sealed) =>
            Effect.promise(async () => {
              try {
                return Option.some(
                  new Uint8Array(
                    await globalThis.crypto.subtle.decrypt(gcm(iv, aad), await aesKey(secret), new Uint8Array(sealed))
                  )
                )
              } catch {
                return Option.none()
              }
            })
        : (secret, iv, aad, sealed) =>
            Effect.sync(() => Option.fromNullable(aes.open(keyBytes(secret), iv, aad, sealed)))
    const blockKeys = new WeakMap<KeySecret, Promise<{ readonly ctr: CryptoKey; readonly cbc: CryptoKey }>>()
    const blockKey = (secret: KeySecret) => {
      let keys = blockKeys.get(secret)
      if (keys === undefined) {
        const raw = new Uint8Array(keyBytes(secret))
        const importAs = (name: string) =>
          globalThis.crypto.subtle.importKey("raw", raw, name, false, ["encrypt", "decrypt"])
        keys = Promise.all([importAs("AES-CTR"), importAs("AES-CBC")]).then(([ctr, cbc]) => ({ ctr, cbc }))
        blockKeys.set(secret, keys)
      }
      return keys
    }
    const zeroIv = new Uint8Array(16)
    const block = options.aes256Block
    const encipherBlocks: KeyRingShape["encipherBlocks"] =
      block === undefined
        ? (secret, first, count) =>
            Effect.promise(
              async () =>
                new Uint8Array(
                  await globalThis.crypto.subtle.encrypt(
                    { name: "AES-CTR", counter: new Uint8Array(first), length: 128 },
                    (await blockKey(secret)).ctr,
                    new Uint8Array(16 * count)
                  )
                )
            )
        : (secret, first, count) => Effect.sync(() => block.encipher(keyBytes(secret), first, count))
    // WebCrypto has no single-block mode: CBC with a zero IV over `block` and a second block
    // that decrypts to CBC's own padding (sixteen 16s) gives back exactly the one block.
    const decipherBlock: KeyRingShape["decipherBlock"] =
      block === undefined
        ? (secret, sealed) =>
            Effect.promise(async () => {
              const { cbc } = await blockKey(secret)
              const masked = new Uint8Array(16)
              for (let i = 0; i < 16; i++) masked[i] = sealed[i]! ^ FULL_PAD
              const tail = new Uint8Array(
                await globalThis.crypto.subtle.encrypt({ name: "AES-CBC", iv: zeroIv }, cbc, masked)
              ).subarray(0, 16)
              const both = new Uint8Array(32)
              both.set(sealed.subarray(0, 16), 0)
              both.set(tail, 16)
              return new Uint8Array(await globalThis.crypto.subtle.decrypt({ name: "AES-CBC", iv: zeroIv }, cbc, both))
            })
        : (secret, sealed) => Effect.sync(() => block.decipher(keyBytes(secret), sealed))
    const sync = options.hmacSha256
    return Layer.succeed(KeyRing, {
      current: (purpose) => {
        const first = secrets[purpose][0]
        return first ? Effect.succeed(first) : Effect.dieMessage(`KeyRing: no secret for ${purpose}`)
      },
      byId: (purpose, id) => Effect.succeed(Option.fromNullable(secrets[purpose].find((s) => s.id === id))),
      all: (purpose) => Effect.succeed(secrets[purpose]),
      hmac:
        sync === undefined
          ? viaWebCrypto
          : (secret, message) => Effect.sync(() => sync(Redacted.value(secret.material), message)),
      seal,
      unseal,
      encipherBlocks,
      decipherBlock
    })
  }
}
