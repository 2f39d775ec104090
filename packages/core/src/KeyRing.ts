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
    options: { readonly hmacSha256?: (key: Uint8Array, message: Uint8Array) => Uint8Array } = {}
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
          : (secret, message) => Effect.sync(() => sync(Redacted.value(secret.material), message))
    })
  }
}
