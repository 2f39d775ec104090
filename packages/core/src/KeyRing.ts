/**
 * @module KeyRing
 *
 * Server secrets by purpose and key id, so they can rotate: the newest secret of a purpose
 * signs or hashes new things; older ones still verify what they made.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export type SecretPurpose = "api-key" | "ticket" | "otp" | "webhook"

export interface KeySecret {
  readonly id: string
  readonly material: Redacted.Redacted<Uint8Array>
}

export interface KeyRingShape {
  readonly current: (purpose: SecretPurpose) => Effect.Effect<KeySecret>
  readonly byId: (purpose: SecretPurpose, id: string) => Effect.Effect<Option.Option<KeySecret>>
}

export class KeyRing extends Context.Tag("@waybill/core/KeyRing")<KeyRing, KeyRingShape>() {
  /**
   * A ring from lists of secrets per purpose, newest first. Each purpose needs at least one
   * secret of at least 32 bytes; a host typically derives them from one master secret it keeps
   * outside the database.
   */
  static readonly fromSecrets = (
    secrets: Readonly<Record<SecretPurpose, ReadonlyArray<KeySecret>>>
  ): Layer.Layer<KeyRing> =>
    Layer.succeed(KeyRing, {
      current: (purpose) => {
        const first = secrets[purpose][0]
        return first ? Effect.succeed(first) : Effect.dieMessage(`KeyRing: no secret for ${purpose}`)
      },
      byId: (purpose, id) => Effect.succeed(Option.fromNullable(secrets[purpose].find((s) => s.id === id)))
    })
}
