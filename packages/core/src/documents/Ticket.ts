/**
 * @module Ticket
 *
 * Download tickets (interface 4.3, DECISIONS.md): the opaque `ticket` of a document `uri`. A
 * ticket is sealed with AES-256-GCM (the KeyRing's: WebCrypto, or the host's faster one) under the KeyRing's
 * newest `ticket` secret; it binds the account, the API key (id, mode and generation), the
 * document id and version, and an expiry. The key id travels in front, authenticated but not
 * secret, so secrets can rotate while older tickets still open.
 *
 * Sealed layout, then base64url without padding:
 *
 * ```
 * 0x01 | len(keyId) | keyId (UTF-8) | IV (12 bytes) | AES-GCM(claims JSON) + tag (16 bytes)
 * ```
 *
 * with the header (everything before the IV) as additional authenticated data. Nothing can be
 * read from a ticket without the secret, and no ticket can be made or altered without it:
 * `open` is total and gives none for any other input.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Entropy, KeyRing, decodeBase64Url, encodeBase64Url } from "../shared/index.js"

/** What a ticket grants: one document version, for one key generation, until `expiresAt`. */
export interface Claims {
  readonly customerNo: string
  readonly keyId: string
  readonly keyMode: "live" | "test"
  readonly keyGeneration: number
  readonly documentId: string
  readonly documentVersion: number
  /** Epoch ms; the ticket is dead from this instant on. */
  readonly expiresAt: number
}

const FORMAT = 0x01
const IV_BYTES = 12
const TAG_BYTES = 16
/** Longer text is refused before any decoding (a real ticket is about 200 characters). */
export const MAX_LENGTH = 1024

const ClaimsTuple = Schema.Tuple(
  Schema.String,
  Schema.String,
  Schema.Literal("live", "test"),
  Schema.Int,
  Schema.String,
  Schema.Int,
  Schema.Number
)
const decodeClaims = Schema.decodeUnknownOption(Schema.parseJson(ClaimsTuple))

/** base64url without padding, and its strict decoding (one text form per byte string). */
export { decodeBase64Url, encodeBase64Url }

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

const jsonOf = (claims: Claims): string =>
  JSON.stringify([
    claims.customerNo,
    claims.keyId,
    claims.keyMode,
    claims.keyGeneration,
    claims.documentId,
    claims.documentVersion,
    claims.expiresAt
  ])

/** The plaintext of each claims, as views of one buffer (one allocation for a whole lookup). */
const plaintextsOf = (claims: ReadonlyArray<Claims>): Array<Uint8Array> => {
  const texts = claims.map(jsonOf)
  let chars = 0
  for (const t of texts) chars += t.length
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const buffer = new Uint8Array(chars * 3)
  let offset = 0
  return texts.map((text) => {
    const { written } = encoder.encodeInto(text, buffer.subarray(offset))
    const view = buffer.subarray(offset, offset + written)
    offset += written
    return view
  })
}

/**
 * Seals each of the claims under the KeyRing's newest `ticket` secret, each with its own fresh
 * random IV, in the order given. A documents lookup issues up to a hundred tickets: they share
 * one secret lookup, one draw of randomness and one KeyRing call.
 */
export const sealAll = (
  claims: ReadonlyArray<Claims>
): Effect.Effect<ReadonlyArray<string>, never, KeyRing | Entropy> =>
  claims.length === 0
    ? Effect.succeed([])
    : Effect.gen(function* () {
        const ring = yield* KeyRing
        const secret = yield* ring.current("ticket")
        const keyId = encoder.encode(secret.id)
        if (keyId.length > 255) return yield* Effect.dieMessage("Ticket: key id longer than 255 bytes")
        const header = new Uint8Array(2 + keyId.length)
        header[0] = FORMAT
        header[1] = keyId.length
        header.set(keyId, 2)
        const ivs = yield* (yield* Entropy).bytes(IV_BYTES * claims.length)
        const plaintexts = plaintextsOf(claims)
        const items = plaintexts.map((plaintext, i) => ({
          iv: ivs.subarray(i * IV_BYTES, (i + 1) * IV_BYTES),
          plaintext
        }))
        const sealed = yield* ring.sealAll(secret, header, items)
        return sealed.map((ciphertext, i) => {
          const out = new Uint8Array(header.length + IV_BYTES + ciphertext.byteLength)
          out.set(header, 0)
          out.set(items[i]!.iv, header.length)
          out.set(ciphertext, header.length + IV_BYTES)
          return encodeBase64Url(out)
        })
      })

/** Seals the claims under the KeyRing's newest `ticket` secret with a fresh random IV. */
export const seal = (claims: Claims): Effect.Effect<string, never, KeyRing | Entropy> =>
  Effect.map(sealAll([claims]), (tickets) => tickets[0]!)

/**
 * The claims of a ticket this server sealed (with any `ticket` secret still in the ring), or
 * none for anything else: malformed text, a forged or altered ticket, an unknown key id. Never
 * fails and never checks expiry (see {@link isLive}).
 */
export const open = (ticket: string): Effect.Effect<Option.Option<Claims>, never, KeyRing> =>
  Effect.gen(function* () {
    if (ticket.length === 0 || ticket.length > MAX_LENGTH) return Option.none()
    const bytes = decodeBase64Url(ticket)
    if (bytes === undefined || bytes.length < 2 || bytes[0] !== FORMAT) return Option.none()
    const headerLength = 2 + bytes[1]!
    if (bytes.length < headerLength + IV_BYTES + TAG_BYTES) return Option.none()
    let keyId: string
    try {
      keyId = decoder.decode(bytes.subarray(2, headerLength))
    } catch {
      return Option.none()
    }
    const secret = yield* (yield* KeyRing).byId("ticket", keyId)
    if (Option.isNone(secret)) return Option.none()
    const opened = yield* (yield* KeyRing).unseal(
      secret.value,
      bytes.slice(headerLength, headerLength + IV_BYTES),
      bytes.slice(0, headerLength),
      bytes.slice(headerLength + IV_BYTES)
    )
    const plaintext = Option.getOrUndefined(opened)
    if (plaintext === undefined) return Option.none()
    let text: string
    try {
      text = decoder.decode(plaintext)
    } catch {
      return Option.none()
    }
    return Option.map(
      decodeClaims(text),
      ([customerNo, keyId, keyMode, keyGeneration, documentId, documentVersion, expiresAt]): Claims => ({
        customerNo,
        keyId,
        keyMode,
        keyGeneration,
        documentId,
        documentVersion,
        expiresAt
      })
    )
  })

/** Whether the ticket is still within its lifetime at `now` (epoch ms). */
export const isLive = (claims: Claims, now: number): boolean => now < claims.expiresAt

/** What a ticket is checked against on every download: the key and the document as they are now. */
export interface Current {
  readonly keyId: string
  readonly keyGeneration: number
  readonly documentId: string
  readonly documentVersion: number
}

/**
 * Whether the claims were sealed for exactly this key generation and document version. Any
 * rotation or disabling of the key, and any change of the document, makes this false for good.
 */
export const matches = (claims: Claims, current: Current): boolean =>
  claims.keyId === current.keyId &&
  claims.keyGeneration === current.keyGeneration &&
  claims.documentId === current.documentId &&
  claims.documentVersion === current.documentVersion
