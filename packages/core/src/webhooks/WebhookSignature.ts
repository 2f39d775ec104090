/**
 * @module WebhookSignature
 *
 * Standard Webhooks v1 signatures, byte-exact so receivers can verify with an existing library
 * (npm `standardwebhooks`, `svix`) instead of code of their own: the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`, the signature `v1,` + base64 of its HMAC-SHA256
 * under the secret's bytes (base64 after `whsec_`). During a rotation every current secret
 * signs, space-separated, so receivers holding either secret accept the delivery.
 *
 * The HMAC is the `KeyRing`'s, so a host that plugged in `node:crypto` signs at its speed too.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { KeyRing, decodeBase64 as decodeStandard, encodeBase64 as encodeStandard, utf8 } from "../shared/index.js"

/** Standard base64 with padding (the wire form of Standard Webhooks). */
export const encodeBase64 = (bytes: Uint8Array): string => encodeStandard(bytes)

/** Standard base64 (padding optional); none when invalid. */
export const decodeBase64 = (text: string): Option.Option<Uint8Array> => Option.fromNullable(decodeStandard(text))

/** The prefix of every Waybill webhook secret. */
export const secretPrefix = "whsec_"

/** A new secret: `whsec_` + base64 of 32 random bytes. */
export const formatSecret = (bytes: Uint8Array): string => `${secretPrefix}${encodeBase64(bytes)}`

/** The key bytes of a `whsec_` secret (the prefix is optional, as in `standardwebhooks`). */
export const secretBytes = (secret: string): Option.Option<Uint8Array> => {
  const body = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret
  return Option.filter(decodeBase64(body), (b) => b.length > 0)
}

/** The `webhook-signature` value for one delivery attempt: `v1,<sig>` per secret, space-separated. */
export const sign = (
  secrets: ReadonlyArray<Redacted.Redacted<string>>,
  id: string,
  timestampSeconds: number,
  body: string
): Effect.Effect<string, never, KeyRing> =>
  Effect.flatMap(KeyRing, (ring) => {
    const message = utf8(`${id}.${timestampSeconds}.${body}`)
    const parts: Array<string> = []
    const next = (i: number): Effect.Effect<string> => {
      if (i === secrets.length) return Effect.succeed(parts.join(" "))
      const bytes = secretBytes(Redacted.value(secrets[i]!))
      if (Option.isNone(bytes)) return Effect.dieMessage("WebhookSignature: malformed secret")
      return Effect.flatMap(
        ring.hmac({ id: "webhook-endpoint", material: Redacted.make(bytes.value) }, message),
        (mac) => {
          parts.push(`v1,${encodeBase64(mac)}`)
          return next(i + 1)
        }
      )
    }
    return next(0)
  })

/** The three Standard Webhooks headers of one attempt. */
export const headers = (
  secrets: ReadonlyArray<Redacted.Redacted<string>>,
  id: string,
  timestampSeconds: number,
  body: string
): Effect.Effect<Readonly<Record<string, string>>, never, KeyRing> =>
  Effect.map(sign(secrets, id, timestampSeconds, body), (signature) => ({
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signature
  }))
