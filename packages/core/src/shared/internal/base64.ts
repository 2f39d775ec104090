/**
 * Base64 (RFC 4648 sections 4 and 5) over `effect/Encoding`, so core needs no `Buffer`. The
 * wrappers only fix the two rules Waybill relies on: standard base64 may omit its padding, and
 * base64url is strict (no padding, no stray bits), so each byte string has exactly one text
 * form and a ticket cannot be re-spelled.
 */
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"

/** Standard base64 with padding (the wire form of Standard Webhooks signatures and secrets). */
export const encodeBase64 = (bytes: Uint8Array): string => Encoding.encodeBase64(bytes)

/** Standard base64, padding optional; undefined when invalid. */
export const decodeBase64 = (text: string): Uint8Array | undefined => {
  if (text.length % 4 === 1) return undefined
  const padded = text.length % 4 === 0 ? text : text + "=".repeat(4 - (text.length % 4))
  return Either.getOrUndefined(Encoding.decodeBase64(padded))
}

/** base64url without padding. */
export const encodeBase64Url = (bytes: Uint8Array): string => Encoding.encodeBase64Url(bytes)

/** Strict base64url (no padding, no other characters, no stray bits); undefined when invalid. */
export const decodeBase64Url = (text: string): Uint8Array | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const bytes = Either.getOrUndefined(Encoding.decodeBase64Url(text))
  return bytes !== undefined && Encoding.encodeBase64Url(bytes) === text ? bytes : undefined
}
