/**
 * Base64 (RFC 4648 sections 4 and 5) without requiring `Buffer`: `effect/Encoding` everywhere,
 * and the runtime's native encoder where there is one. The wrappers fix the two rules Waybill
 * relies on: standard base64 may omit its padding, and base64url is strict (no padding, no stray
 * bits), so each byte string has exactly one text form and a ticket cannot be re-spelled.
 *
 * Node's and Bun's `Buffer` encode in native code: 0.17 us against `effect/Encoding`'s 2.1 us
 * for a 150-byte download ticket on the bench machine, which is 200 us of every 100-document
 * lookup (`docs/benchmarks.md`). Runtimes without it (workers, Deno without Node compatibility)
 * use `effect/Encoding`; both give the same text, and the strict checks below apply to either.
 */
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"

/** The part of Node's `Buffer` used here. */
interface NativeBuffer {
  from(
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number
  ): { toString(encoding: "base64" | "base64url"): string }
  from(text: string, encoding: "base64url"): Uint8Array
}

const native = (globalThis as { readonly Buffer?: NativeBuffer }).Buffer

const nativeEncode = (bytes: Uint8Array, encoding: "base64" | "base64url"): string =>
  native!.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(encoding)

/** Standard base64 with padding (the wire form of Standard Webhooks signatures and secrets). */
export const encodeBase64: (bytes: Uint8Array) => string =
  native === undefined ? Encoding.encodeBase64 : (bytes) => nativeEncode(bytes, "base64")

/** Standard base64, padding optional; undefined when invalid. */
export const decodeBase64 = (text: string): Uint8Array | undefined => {
  if (text.length % 4 === 1) return undefined
  const padded = text.length % 4 === 0 ? text : text + "=".repeat(4 - (text.length % 4))
  return Either.getOrUndefined(Encoding.decodeBase64(padded))
}

/** base64url without padding. */
export const encodeBase64Url: (bytes: Uint8Array) => string =
  native === undefined ? Encoding.encodeBase64Url : (bytes) => nativeEncode(bytes, "base64url")

const decodeLoose: (text: string) => Uint8Array | undefined =
  native === undefined
    ? (text) => Either.getOrUndefined(Encoding.decodeBase64Url(text))
    : (text) => {
        const decoded = native.from(text, "base64url")
        // A view, not the Buffer: callers get a plain Uint8Array (it may share Node's pool).
        return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength)
      }

/** Strict base64url (no padding, no other characters, no stray bits); undefined when invalid. */
export const decodeBase64Url = (text: string): Uint8Array | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const bytes = decodeLoose(text)
  return bytes !== undefined && encodeBase64Url(bytes) === text ? bytes : undefined
}
