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
  /**
   * {@link KeyRingShape.seal} for many plaintexts at once, all under `secret` and `aad`, each
   * with its own IV: one effect, one key lookup and (for WebCrypto) one key import for a whole
   * documents lookup, rather than one of each per ticket. Answers in the order given.
   */
  readonly sealAll: (
    secret: KeySecret,
    aad: Uint8Array,
    items: ReadonlyArray<{ readonly iv: Uint8Array; readonly plaintext: Uint8Array }>
  ) => Effect.Effect<ReadonlyArray<Uint8Array>>
  /** Opens what {@link KeyRingShape.seal} made; none when the tag does not verify. */
  readonly unseal: (
    secret: KeySecret,
    iv: Uint8Array,
    aad: Uint8Array,
    sealed: Uint8Array
  ) => Effect.Effect<Option.Option<Uint8Array>>
}

/**
 * A synchronous AES-256-GCM a host may plug in (e.g. `node:crypto`'s `createCipheriv`), much
 * cheaper per call than WebCrypto's promise round trip: a documents lookup seals a ticket per
 * document.
 */
export interface Aes256Gcm {
  /** Ciphertext followed by the 16-byte tag. */
  readonly seal: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array) => Uint8Array
  /** The plaintext, or undefined when the tag does not verify. */
  readonly open: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, sealed: Uint8Array) => Uint8Array | undefined
}

export class KeyRing extends Context.Tag("@waybill/core/KeyRing")<KeyRing, KeyRingShape>() {
  /**
   * A ring from lists of secrets per purpose, newest first. Each purpose needs at least one
   * secret of at least 32 bytes; a host typically derives them from one master secret it keeps
   * outside the database. `hmacSha256` replaces the WebCrypto HMAC with a synchronous one (for
   * example `(key, msg) => createHmac("sha256", key).update(msg).digest()` from `node:crypto`).
   */
  static readonly fromSecrets = (
    secrets: Readonly<Record<SecretPurpose, ReadonlyArray<KeySecret>>>,
    options: {
      readonly hmacSha256?: (key: Uint8Array, message: Uint8Array) => Uint8Array
      readonly aes256Gcm?: Aes256Gcm
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
    const sealAll: KeyRingShape["sealAll"] =
      aes === undefined
        ? (secret, aad, items) =>
            Effect.promise(async () => {
              const key = await aesKey(secret)
              return Promise.all(
                items.map(
                  async ({ iv, plaintext }) =>
                    new Uint8Array(await globalThis.crypto.subtle.encrypt(gcm(iv, aad), key, new Uint8Array(plaintext)))
                )
              )
            })
        : (secret, aad, items) =>
            Effect.sync(() => {
              const key = keyBytes(secret)
              return items.map(({ iv, plaintext }) => aes.seal(key, iv, aad, plaintext))
            })
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
      sealAll,
      unseal
    })
  }
}
