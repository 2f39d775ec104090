/**
 * @module Ticket
 *
 * Download tickets (interface 4.3, DECISIONS.md): the opaque `ticket` of a document `uri`.
 *
 * A lookup stores one grant (`TicketGrant`: the account, the API key's id, mode and generation,
 * the expiry, and the version of each listed document) and gives each listed document a ticket
 * naming the grant and the document's place in it:
 *
 * ```
 * 0x02 | len(keyId) | keyId (UTF-8) | 0 to 2 zero bytes | AES-256(grant id (14 bytes) | index (2 bytes, big-endian))
 * ```
 *
 * then base64url without padding. The zero bytes make the whole a multiple of 3 bytes, so a
 * ticket's text ends on a whole character and a lookup's tickets are one encoding, cut apart. The block is enciphered under a key derived from the KeyRing's
 * `ticket` secret that `keyId` names (public, so secrets can rotate while older tickets still
 * open). A whole lookup's blocks are consecutive counter blocks, so they are one AES-CTR
 * keystream: one cipher call for a hundred tickets, where a sealed ticket each cost a cipher each.
 *
 * - A ticket reveals nothing: AES is a pseudorandom permutation, so the block says nothing
 *   about the grant, the index or anything stored; every ticket has the same length.
 * - A ticket cannot be forged or redirected: without the key, a block whose decipherment names
 *   a stored grant turns up with probability at most (grants stored) / 2^112 per try, and moving
 *   a ticket to another index of its grant (another document of the same lookup) needs the key
 *   too. So a ticket opens exactly one document version, for the key generation it was issued
 *   to, until the grant's expiry, and every download checks those against the database.
 * - The grant id's 80 random bits keep grants apart across a fleet of hosts, and mean a leaked
 *   ticket key alone reaches no grant whose ticket was never seen. Its first 4 bytes are the
 *   expiry second, so expired grants are a range of the primary key to delete.
 *
 * Tickets of the previous release (format 0x01, the claims sealed with AES-256-GCM in the ticket
 * itself) still open until they expire: see {@link open}.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import {
  Entropy,
  KeyRing,
  type KeySecret,
  type StorageError,
  decodeBase64Url,
  encodeBase64Url,
  toHex,
  utf8
} from "../shared/index.js"
import { DocumentStore, type TicketGrant } from "../shipments/index.js"

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

/** What every ticket of one grant shares: the key it was issued under, the account, the expiry. */
export type GrantClaims = Omit<Claims, "documentId" | "documentVersion">

/** The format byte of this release's tickets. */
export const FORMAT_GRANT = 0x02
/** The format byte of the previous release's sealed tickets, still opened until they expire. */
export const FORMAT_SEALED = 0x01

const BLOCK = 16
/** The grant id's bytes: the expiry second (4) and 80 random bits (10). */
const GRANT_ID_BYTES = 14
const RANDOM_BYTES = GRANT_ID_BYTES - 4
/** The index takes the block's last two bytes, so one grant holds at most this many documents. */
export const MAX_GRANT_DOCUMENTS = 0x1_0000

const IV_BYTES = 12
const TAG_BYTES = 16
/** Longer text is refused before any decoding (a ticket of this release is about 30 characters). */
export const MAX_LENGTH = 1024

/** base64url without padding, and its strict decoding (one text form per byte string). */
export { decodeBase64Url, encodeBase64Url }

const decoder = new TextDecoder("utf-8", { fatal: true })

/** A grant ticket's length for a key id of `keyIdBytes`: header, block and the zero bytes that make it a multiple of 3. */
const grantTicketBytes = (keyIdBytes: number): number => Math.ceil((2 + keyIdBytes + BLOCK) / 3) * 3

/** The parts of a ticket's text; what they open is decided by {@link open}. */
export type Parsed =
  | {
      readonly format: typeof FORMAT_GRANT
      readonly keyId: string
      /** The enciphered (grant id, index). */
      readonly block: Uint8Array
    }
  | {
      readonly format: typeof FORMAT_SEALED
      readonly keyId: string
      /** Authenticated with the ciphertext: the format byte, the key id's length and the key id. */
      readonly header: Uint8Array
      readonly iv: Uint8Array
      /** Ciphertext followed by the tag. */
      readonly sealed: Uint8Array
    }

/**
 * The parts of a ticket of either format, or undefined for any text that cannot be one: too
 * long, not strict base64url, an unknown format byte, a key id that is not UTF-8, or the wrong
 * length for its format. Pure and total; says nothing about whether the ticket opens.
 */
export const parse = (ticket: string): Parsed | undefined => {
  if (ticket.length === 0 || ticket.length > MAX_LENGTH) return undefined
  const bytes = decodeBase64Url(ticket)
  if (bytes === undefined || bytes.length < 2) return undefined
  const format = bytes[0]
  const headerLength = 2 + bytes[1]!
  if (format === FORMAT_GRANT) {
    if (bytes.length !== grantTicketBytes(bytes[1]!)) return undefined
    for (let i = headerLength; i < bytes.length - BLOCK; i++) if (bytes[i] !== 0) return undefined
  } else if (format !== FORMAT_SEALED || bytes.length < headerLength + IV_BYTES + TAG_BYTES) return undefined
  let keyId: string
  try {
    keyId = decoder.decode(bytes.subarray(2, headerLength))
  } catch {
    return undefined
  }
  return format === FORMAT_GRANT
    ? { format, keyId, block: bytes.subarray(bytes.length - BLOCK) }
    : {
        format,
        keyId,
        header: bytes.subarray(0, headerLength),
        iv: bytes.subarray(headerLength, headerLength + IV_BYTES),
        sealed: bytes.subarray(headerLength + IV_BYTES)
      }
}

/** A grant's id: the second of `expiresAt` (big-endian) then the 10 random bytes given. */
export const grantId = (expiresAt: number, random: Uint8Array): Uint8Array => {
  const id = new Uint8Array(GRANT_ID_BYTES)
  const second = Math.floor(expiresAt / 1000)
  id[0] = (second >>> 24) & 0xff
  id[1] = (second >>> 16) & 0xff
  id[2] = (second >>> 8) & 0xff
  id[3] = second & 0xff
  id.set(random.subarray(0, RANDOM_BYTES), 4)
  return id
}

const KEY_LABEL = utf8("waybill ticket block key v2")
const blockKeys = new WeakMap<KeySecret, KeySecret>()

/**
 * The key tickets are enciphered under: an HMAC of a fixed label under the `ticket` secret, so
 * the block cipher never shares a key with the AES-GCM of the previous format. Derived once per
 * secret.
 */
const blockKeyOf = (ring: KeyRing["Type"], secret: KeySecret): Effect.Effect<KeySecret> => {
  const known = blockKeys.get(secret)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(ring.hmac(secret, KEY_LABEL), (material) => {
    const derived: KeySecret = { id: secret.id, material: Redacted.make(material) }
    blockKeys.set(secret, derived)
    return derived
  })
}

/**
 * The text of each ticket: the header (format, key id, zero bytes) and one block of `blocks`
 * each. Every ticket is a multiple of 3 bytes, so all of them are encoded at once and the text
 * cut into equal pieces.
 */
const ticketsOf = (keyId: Uint8Array, blocks: Uint8Array, count: number): Array<string> => {
  const size = grantTicketBytes(keyId.length)
  const bytes = new Uint8Array(size * count)
  for (let i = 0; i < count; i++) {
    const at = i * size
    bytes[at] = FORMAT_GRANT
    bytes[at + 1] = keyId.length
    bytes.set(keyId, at + 2)
    bytes.set(blocks.subarray(i * BLOCK, (i + 1) * BLOCK), at + size - BLOCK)
  }
  const text = encodeBase64Url(bytes)
  const chars = (size / 3) * 4
  const out = new Array<string>(count)
  for (let i = 0; i < count; i++) out[i] = text.slice(i * chars, (i + 1) * chars)
  return out
}

/**
 * The grants and tickets for `documents`, all under `claims`: one grant per
 * {@link MAX_GRANT_DOCUMENTS} documents (a lookup has one), and one ticket per document, in the
 * order given. The grants are to be stored before any ticket is handed out.
 */
export const issue: (
  claims: GrantClaims,
  documents: ReadonlyArray<{ readonly id: string; readonly version: number }>
) => Effect.Effect<
  { readonly grants: ReadonlyArray<TicketGrant>; readonly tickets: ReadonlyArray<string> },
  never,
  KeyRing | Entropy
> = Effect.fnUntraced(function* (
  claims: GrantClaims,
  documents: ReadonlyArray<{ readonly id: string; readonly version: number }>
) {
  if (documents.length === 0) return { grants: [], tickets: [] }
  const ring = yield* KeyRing
  const secret = yield* ring.current("ticket")
  const keyId = utf8(secret.id)
  if (keyId.length > 255) return yield* Effect.dieMessage("Ticket: key id longer than 255 bytes")
  const key = yield* blockKeyOf(ring, secret)
  const chunks = Math.ceil(documents.length / MAX_GRANT_DOCUMENTS)
  const random = yield* (yield* Entropy).bytes(RANDOM_BYTES * chunks)
  const grants: Array<TicketGrant> = []
  const tickets: Array<string> = []
  for (let c = 0; c < chunks; c++) {
    const granted = documents.slice(c * MAX_GRANT_DOCUMENTS, (c + 1) * MAX_GRANT_DOCUMENTS)
    const id = grantId(claims.expiresAt, random.subarray(c * RANDOM_BYTES, (c + 1) * RANDOM_BYTES))
    // Counter block i is (id, i): the keystream's i-th block is ticket i's, and with at most
    // 2^16 documents a grant the index never carries into the id.
    const first = new Uint8Array(BLOCK)
    first.set(id, 0)
    const blocks = yield* ring.encipherBlocks(key, first, granted.length)
    grants.push({
      id: toHex(id),
      customerNo: claims.customerNo,
      keyId: claims.keyId,
      keyMode: claims.keyMode,
      keyGeneration: claims.keyGeneration,
      expiresAt: claims.expiresAt,
      documents: granted.map((d) => ({ id: d.id, version: d.version }))
    })
    for (const ticket of ticketsOf(keyId, blocks, granted.length)) tickets.push(ticket)
  }
  return { grants, tickets }
})

/**
 * How far a grant's expiry may lie beyond `now + lifetimeMs` and still be looked up: the clocks
 * of a fleet's hosts may disagree by this much.
 */
export const CLOCK_SKEW_MS = 60 * 60_000

/**
 * When a ticket is opened: `now`, and how long tickets are issued for (a grant whose expiry
 * second is already over, or lies beyond `now + lifetimeMs` and {@link CLOCK_SKEW_MS}, is not
 * looked up at all).
 */
export interface OpenWindow {
  readonly now: number
  readonly lifetimeMs: number
}

/**
 * The claims of a ticket this service issued (under any `ticket` secret still in the ring), or
 * none for anything else: malformed text, a forged or altered ticket, an unknown key id, a grant
 * that is not stored (never, or no longer after its expiry). The expiry itself is checked by
 * {@link isLive}; before any read, a grant id whose expiry second is over or impossibly far
 * ahead is refused, which is also what the decipherment of a forged block almost always gives,
 * so a flood of forged tickets costs no reads. Tickets of the previous release carry their
 * claims sealed inside and open without a read.
 */
export const open = (
  ticket: string,
  window: OpenWindow
): Effect.Effect<Option.Option<Claims>, StorageError, KeyRing | DocumentStore> => {
  const parsed = parse(ticket)
  if (parsed === undefined) return Effect.succeed(Option.none())
  return parsed.format === FORMAT_GRANT ? openGranted(parsed.keyId, parsed.block, window) : openSealed(parsed)
}

const openGranted = Effect.fnUntraced(function* (keyId: string, block: Uint8Array, window: OpenWindow) {
  const ring = yield* KeyRing
  const secret = yield* ring.byId("ticket", keyId)
  if (Option.isNone(secret)) return Option.none<Claims>()
  const plain = yield* ring.decipherBlock(yield* blockKeyOf(ring, secret.value), block)
  const second = ((plain[0]! << 24) | (plain[1]! << 16) | (plain[2]! << 8) | plain[3]!) >>> 0
  if ((second + 1) * 1000 <= window.now || second * 1000 > window.now + window.lifetimeMs + CLOCK_SKEW_MS)
    return Option.none<Claims>()
  const index = (plain[GRANT_ID_BYTES]! << 8) | plain[GRANT_ID_BYTES + 1]!
  const grant = yield* (yield* DocumentStore).findGrant(toHex(plain.subarray(0, GRANT_ID_BYTES)))
  if (Option.isNone(grant)) return Option.none<Claims>()
  const document = grant.value.documents[index]
  if (document === undefined) return Option.none<Claims>()
  return Option.some<Claims>({
    customerNo: grant.value.customerNo,
    keyId: grant.value.keyId,
    keyMode: grant.value.keyMode,
    keyGeneration: grant.value.keyGeneration,
    documentId: document.id,
    documentVersion: document.version,
    expiresAt: grant.value.expiresAt
  })
})

const SealedClaims = Schema.parseJson(
  Schema.Tuple(
    Schema.String,
    Schema.String,
    Schema.Literal("live", "test"),
    Schema.Int,
    Schema.String,
    Schema.Int,
    Schema.Number
  )
)
const decodeSealedClaims = Schema.decodeUnknownOption(SealedClaims)

/**
 * A ticket of the previous release: `0x01 | len(keyId) | keyId | IV (12) | AES-256-GCM(claims
 * JSON) + tag`, the header authenticated. Kept so that links issued just before an upgrade work
 * for the rest of their 15 minutes; nothing issues this format any more.
 */
const openSealed = Effect.fnUntraced(function* (parsed: Extract<Parsed, { readonly format: typeof FORMAT_SEALED }>) {
  const ring = yield* KeyRing
  const secret = yield* ring.byId("ticket", parsed.keyId)
  if (Option.isNone(secret)) return Option.none<Claims>()
  const opened = yield* ring.unseal(secret.value, parsed.iv, parsed.header, parsed.sealed)
  if (Option.isNone(opened)) return Option.none<Claims>()
  let text: string
  try {
    text = decoder.decode(opened.value)
  } catch {
    return Option.none<Claims>()
  }
  return Option.map(
    decodeSealedClaims(text),
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
 * Whether the claims were issued for exactly this key generation and document version. Any
 * rotation or disabling of the key, and any change of the document, makes this false for good.
 */
export const matches = (claims: Claims, current: Current): boolean =>
  claims.keyId === current.keyId &&
  claims.keyGeneration === current.keyGeneration &&
  claims.documentId === current.documentId &&
  claims.documentVersion === current.documentVersion
