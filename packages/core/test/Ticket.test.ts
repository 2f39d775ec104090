import { createCipheriv, createDecipheriv, createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Entropy } from "../src/shared/Entropy.js"
import { type Aes256Block, type Aes256Gcm, KeyRing, type KeySecret, type SecretPurpose } from "../src/shared/KeyRing.js"
import { DocumentStore, type DocumentStoreShape, type TicketGrant } from "../src/shipments/DocumentStore.js"
import * as Ticket from "../src/documents/Ticket.js"

const secret = (id: string, fill: number): KeySecret => ({
  id,
  material: Redacted.make(new Uint8Array(32).fill(fill))
})

/** The host's synchronous AES (`examples/http-host/src/secrets.ts` plugs in the same calls). */
const nodeBlock: Aes256Block = {
  encipher: (key, first, count) => createCipheriv("aes-256-ctr", key, first).update(new Uint8Array(16 * count)),
  decipher: (key, block) => {
    const d = createDecipheriv("aes-256-ecb", key, null).setAutoPadding(false)
    return Buffer.concat([d.update(block), d.final()])
  }
}
const nodeGcm: Aes256Gcm = {
  seal: (key, iv, aad, plaintext) => {
    const c = createCipheriv("aes-256-gcm", key, iv)
    c.setAAD(aad)
    return new Uint8Array(Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]))
  },
  open: (key, iv, aad, sealed) => {
    const d = createDecipheriv("aes-256-gcm", key, iv)
    d.setAAD(aad)
    d.setAuthTag(sealed.subarray(sealed.length - 16))
    try {
      return new Uint8Array(Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]))
    } catch {
      return undefined
    }
  }
}

const ring = (ticket: ReadonlyArray<KeySecret>, native = false) => {
  const other = [secret("x", 9)]
  const secrets: Record<SecretPurpose, ReadonlyArray<KeySecret>> = {
    "api-key": other,
    ticket,
    otp: other,
    webhook: other
  }
  return KeyRing.fromSecrets(secrets, native ? { aes256Block: nodeBlock, aes256Gcm: nodeGcm } : {})
}

/** Grants kept in memory: the part of `DocumentStore` tickets use. */
const grantStore = () => {
  const grants = new Map<string, TicketGrant>()
  const layer = Layer.succeed(DocumentStore, {
    insertGrant: (grant: TicketGrant) => Effect.sync(() => void grants.set(grant.id, grant)),
    findGrant: (id: string) => Effect.sync(() => Option.fromNullable(grants.get(id)))
  } as unknown as DocumentStoreShape)
  return { grants, layer }
}

const shared = grantStore()
const layer = (ticket: ReadonlyArray<KeySecret> = [secret("t1", 1)], native = false) =>
  Layer.mergeAll(ring(ticket, native), Entropy.webCrypto, shared.layer)

/** Issues tickets and stores their grants, as `Documents` does. */
const issue = (claims: Ticket.GrantClaims, documents: ReadonlyArray<{ id: string; version: number }>) =>
  Effect.gen(function* () {
    const issued = yield* Ticket.issue(claims, documents)
    for (const grant of issued.grants) yield* (yield* DocumentStore).insertGrant(grant)
    return issued
  })

const claimsArb = fc.record({
  customerNo: fc.stringMatching(/^[1-9]\d{6}$/),
  keyId: fc.string({ maxLength: 40 }),
  keyMode: fc.constantFrom("live" as const, "test" as const),
  keyGeneration: fc.integer({ min: 1, max: 1_000_000 }),
  expiresAt: fc.integer({ min: 0, max: 4_102_444_800_000 })
})
const documentsArb = fc.array(
  fc.record({ id: fc.string({ maxLength: 40 }), version: fc.integer({ min: 1, max: 1_000_000 }) }),
  { minLength: 1, maxLength: 20 }
)

/** Opening just before `expiresAt`, with the default lifetime of 15 minutes. */
const before = (expiresAt: number): Ticket.OpenWindow => ({ now: expiresAt - 1, lifetimeMs: 900_000 })

/**
 * A ticket's bytes with byte `at` flipped by `xor`, cut before that byte, or extended by one byte:
 * none of them opens.
 */
const expectTamperedNeverOpen = (bytes: Uint8Array, at: number, xor: number, window: Ticket.OpenWindow) =>
  Effect.gen(function* () {
    const altered = new Uint8Array(bytes)
    const i = at % altered.length
    altered[i] = altered[i]! ^ xor
    expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(altered), window))).toBe(true)
    expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(bytes.subarray(0, i)), window))).toBe(true)
    expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(new Uint8Array([...bytes, xor])), window))).toBe(
      true
    )
  })

const sample: Ticket.GrantClaims = {
  customerNo: "1234567",
  keyId: "key_1234567_live",
  keyMode: "live",
  keyGeneration: 3,
  expiresAt: 1_767_225_600_000
}
const doc = { id: "doc_01J0000000000000000000000", version: 2 }

describe("Ticket", () => {
  it.effect("issues one ticket per document, each opening its own document's claims; they reveal nothing", () =>
    Effect.gen(function* () {
      const documents = [doc, { id: "doc_01J0000000000000000000001", version: 5 }]
      const { grants, tickets } = yield* issue(sample, documents)
      expect(grants).toHaveLength(1)
      expect(grants[0]!.id).toMatch(/^[0-9a-f]{28}$/)
      // The expiry second leads the id.
      expect(parseInt(grants[0]!.id.slice(0, 8), 16)).toBe(Math.floor(sample.expiresAt / 1000))
      expect(grants[0]).toMatchObject({ ...sample, documents })
      expect(tickets).toHaveLength(2)
      for (const [i, ticket] of tickets.entries()) {
        // Header (format, key id "t1", one zero byte) and one block: 21 bytes, 28 characters.
        expect(ticket).toMatch(/^[A-Za-z0-9_-]{28}$/)
        for (const part of ["1234567", "doc_01J", "key_", "live", grants[0]!.id.slice(0, 8)]) {
          expect(ticket).not.toContain(part)
          expect(new TextDecoder().decode(Ticket.decodeBase64Url(ticket))).not.toContain(part)
        }
        expect(yield* Ticket.open(ticket, before(sample.expiresAt))).toEqual(
          Option.some({ ...sample, documentId: documents[i]!.id, documentVersion: documents[i]!.version })
        )
      }
      expect(tickets[0]).not.toBe(tickets[1])
      // Every issue is a new grant: the same document gets another ticket.
      const again = yield* issue(sample, [doc])
      expect(again.grants[0]!.id).not.toBe(grants[0]!.id)
      expect(again.tickets[0]).not.toBe(tickets[0])
      expect(yield* Ticket.issue(sample, [])).toEqual({ grants: [], tickets: [] })
    }).pipe(Effect.provide(layer()))
  )

  it.effect.prop("any claims and documents round-trip", [claimsArb, documentsArb], ([claims, documents]) =>
    Effect.gen(function* () {
      const { tickets } = yield* issue(claims, documents)
      for (const [i, ticket] of tickets.entries())
        expect(yield* Ticket.open(ticket, before(claims.expiresAt))).toEqual(
          Option.some({ ...claims, documentId: documents[i]!.id, documentVersion: documents[i]!.version })
        )
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a ticket is the AES-256 block of (grant id, index) under the key derived from the ticket secret", () =>
    Effect.gen(function* () {
      const documents = Array.from({ length: 3 }, (_, i) => ({ id: `doc_${i}`, version: 1 }))
      const { grants, tickets } = yield* issue(sample, documents)
      const key = createHmac("sha256", new Uint8Array(32).fill(1)).update("waybill ticket block key v2").digest()
      for (const [i, ticket] of tickets.entries()) {
        const plain = Buffer.alloc(16)
        Buffer.from(grants[0]!.id, "hex").copy(plain, 0)
        plain.writeUInt16BE(i, 14)
        const c = createCipheriv("aes-256-ecb", key, null).setAutoPadding(false)
        const block = Buffer.concat([c.update(plain), c.final()])
        expect(Buffer.from(Ticket.decodeBase64Url(ticket)!)).toEqual(
          Buffer.concat([Buffer.from([2, 2, 0x74, 0x31, 0]), block])
        )
      }
    }).pipe(Effect.provide(layer()))
  )

  it.effect("more documents than a grant holds make several grants, the tickets still in order", () =>
    Effect.gen(function* () {
      const documents = Array.from({ length: Ticket.MAX_GRANT_DOCUMENTS + 2 }, (_, i) => ({ id: `d${i}`, version: i }))
      const { grants, tickets } = yield* issue(sample, documents)
      expect(grants.map((g) => g.documents.length)).toEqual([Ticket.MAX_GRANT_DOCUMENTS, 2])
      expect(tickets).toHaveLength(documents.length)
      expect(new Set(tickets).size).toBe(documents.length)
      for (const i of [
        0,
        1,
        Ticket.MAX_GRANT_DOCUMENTS - 1,
        Ticket.MAX_GRANT_DOCUMENTS,
        Ticket.MAX_GRANT_DOCUMENTS + 1
      ])
        expect(Option.getOrThrow(yield* Ticket.open(tickets[i]!, before(sample.expiresAt))).documentId).toBe(`d${i}`)
    }).pipe(Effect.provide(layer([secret("t1", 1)], true)))
  )

  it.effect("a ticket whose grant is not stored (never, or deleted once expired) does not open", () =>
    Effect.gen(function* () {
      const { grants, tickets } = yield* Ticket.issue(sample, [doc])
      expect(yield* Ticket.open(tickets[0]!, before(sample.expiresAt))).toEqual(Option.none())
      yield* (yield* DocumentStore).insertGrant(grants[0]!)
      expect(Option.isSome(yield* Ticket.open(tickets[0]!, before(sample.expiresAt)))).toBe(true)
      shared.grants.delete(grants[0]!.id)
      expect(yield* Ticket.open(tickets[0]!, before(sample.expiresAt))).toEqual(Option.none())
    }).pipe(Effect.provide(layer()))
  )

  it.effect("an index beyond the grant's documents does not open (a grant's list is never reached past its end)", () =>
    Effect.gen(function* () {
      const { grants, tickets } = yield* issue(sample, [doc, doc])
      // The same grant id with one document fewer: the second ticket's index is now past the end.
      shared.grants.set(grants[0]!.id, { ...grants[0]!, documents: [doc] })
      expect(Option.isSome(yield* Ticket.open(tickets[0]!, before(sample.expiresAt)))).toBe(true)
      expect(yield* Ticket.open(tickets[1]!, before(sample.expiresAt))).toEqual(Option.none())
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a grant whose expiry second is over, or lies too far ahead, is refused without a read", () =>
    Effect.gen(function* () {
      const reads: Array<string> = []
      const counting = Layer.succeed(DocumentStore, {
        findGrant: (id: string) =>
          Effect.sync(() => {
            reads.push(id)
            return Option.fromNullable(shared.grants.get(id))
          })
      } as unknown as DocumentStoreShape)
      const { tickets } = yield* issue(sample, [doc])
      const open = (now: number) =>
        Ticket.open(tickets[0]!, { now, lifetimeMs: 900_000 }).pipe(Effect.provide(counting))
      const second = Math.floor(sample.expiresAt / 1000) * 1000
      expect(Option.isSome(yield* open(sample.expiresAt - 900_000))).toBe(true)
      // Still looked up (and refused by the expiry check, `isLive`) within its last second.
      expect(Option.isSome(yield* open(second + 999))).toBe(true)
      expect(reads).toHaveLength(2)
      expect(yield* open(second + 1000)).toEqual(Option.none())
      expect(yield* open(sample.expiresAt - 900_000 - Ticket.CLOCK_SKEW_MS - 1000)).toEqual(Option.none())
      expect(reads).toHaveLength(2)
      expect(Option.isSome(yield* open(sample.expiresAt - 900_000 - Ticket.CLOCK_SKEW_MS + 1000))).toBe(true)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a block made with the key for a grant that is not stored does not open", () =>
    Effect.gen(function* () {
      const key = createHmac("sha256", new Uint8Array(32).fill(1)).update("waybill ticket block key v2").digest()
      const plain = Buffer.alloc(16)
      plain.writeUInt32BE(Math.floor(sample.expiresAt / 1000), 0)
      plain.fill(0xab, 4, 14)
      const c = createCipheriv("aes-256-ecb", key, null).setAutoPadding(false)
      const ticket = Ticket.encodeBase64Url(
        Buffer.concat([Buffer.from([2, 2, 0x74, 0x31, 0]), c.update(plain), c.final()])
      )
      expect(yield* Ticket.open(ticket, before(sample.expiresAt))).toEqual(Option.none())
    }).pipe(Effect.provide(layer()))
  )

  it.prop("parse is total: any text is a ticket's parts or undefined", [fc.string({ maxLength: 2000 })], ([text]) => {
    const parsed = Ticket.parse(text)
    if (parsed !== undefined) expect([Ticket.FORMAT_GRANT, Ticket.FORMAT_SEALED]).toContain(parsed.format)
  })

  it.prop(
    "parse reads a grant ticket's key id and block, padded to a multiple of 3 bytes with zeros, and nothing else",
    [
      fc.string({ maxLength: 30 }),
      fc.uint8Array({ minLength: 0, maxLength: 3 }),
      fc.uint8Array({ minLength: 14, maxLength: 18 })
    ],
    ([keyId, pad, block]) => {
      const id = new TextEncoder().encode(keyId)
      const bytes = new Uint8Array([Ticket.FORMAT_GRANT, id.length, ...id, ...pad, ...block])
      const parsed = Ticket.parse(Ticket.encodeBase64Url(bytes))
      // The one valid length for the key id; zeros between the header and the final 16 bytes.
      const length = Math.ceil((2 + id.length + 16) / 3) * 3
      const between = bytes.subarray(2 + id.length, bytes.length - 16)
      if (bytes.length === length && between.every((b) => b === 0))
        expect(parsed).toEqual({ format: Ticket.FORMAT_GRANT, keyId, block: bytes.subarray(bytes.length - 16) })
      else expect(parsed).toBeUndefined()
    }
  )

  it.effect.prop(
    "arbitrary text never opens",
    [fc.oneof(fc.string({ maxLength: 400 }), fc.stringMatching(/^[A-Za-z0-9_-]{0,300}$/))],
    ([text]) =>
      Effect.gen(function* () {
        expect(Option.isNone(yield* Ticket.open(text, before(sample.expiresAt)))).toBe(true)
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 500 } }
  )

  it.effect.prop(
    "arbitrary bytes after a valid header and key id never open, in either format",
    [fc.constantFrom(Ticket.FORMAT_GRANT, Ticket.FORMAT_SEALED), fc.uint8Array({ minLength: 0, maxLength: 300 })],
    ([format, body]) =>
      Effect.gen(function* () {
        // Grants are stored (the shared store holds every earlier case's), so only the block decides.
        yield* issue(sample, [doc])
        const text = Ticket.encodeBase64Url(new Uint8Array([format, 2, 0x74, 0x31, ...body]))
        expect(Option.isNone(yield* Ticket.open(text, before(sample.expiresAt)))).toBe(true)
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 500 } }
  )

  it.effect.prop(
    "changing any byte of a real ticket, or cutting or extending it, makes it never open",
    [claimsArb, documentsArb, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 })],
    ([claims, documents, which, at, xor]) =>
      Effect.gen(function* () {
        const { tickets } = yield* issue(claims, documents)
        const window = before(claims.expiresAt)
        const bytes = Ticket.decodeBase64Url(tickets[which % tickets.length]!)!
        yield* expectTamperedNeverOpen(bytes, at, xor, window)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("secrets rotate: old tickets open while their secret is in the ring; others never", () =>
    Effect.gen(function* () {
      const old = (yield* issue(sample, [doc]).pipe(Effect.provide(layer([secret("t1", 1)])))).tickets[0]!
      const rotated = layer([secret("t2", 2), secret("t1", 1)])
      expect(Option.isSome(yield* Ticket.open(old, before(sample.expiresAt)).pipe(Effect.provide(rotated)))).toBe(true)
      const fresh = (yield* issue(sample, [doc]).pipe(Effect.provide(rotated))).tickets[0]!
      expect(
        Option.isNone(
          yield* Ticket.open(fresh, before(sample.expiresAt)).pipe(Effect.provide(layer([secret("t1", 1)])))
        )
      ).toBe(true)
      // Same key id, different material (a reused id): nothing opens.
      expect(
        Option.isNone(yield* Ticket.open(old, before(sample.expiresAt)).pipe(Effect.provide(layer([secret("t1", 7)]))))
      ).toBe(true)
    })
  )

  it.effect("WebCrypto and a host's synchronous AES make and open the same tickets", () =>
    Effect.gen(function* () {
      const web = layer([secret("t1", 1)], false)
      const node = layer([secret("t1", 1)], true)
      const documents = Array.from({ length: 300 }, (_, i) => ({ id: `doc_${i}`, version: 1 }))
      const byNode = (yield* issue(sample, documents).pipe(Effect.provide(node))).tickets
      const byWeb = (yield* issue(sample, documents).pipe(Effect.provide(web))).tickets
      for (const [i, ticket] of [...byNode.entries(), ...byWeb.entries()]) {
        expect(
          Option.getOrThrow(yield* Ticket.open(ticket, before(sample.expiresAt)).pipe(Effect.provide(web))).documentId
        ).toBe(`doc_${i}`)
        expect(
          Option.getOrThrow(yield* Ticket.open(ticket, before(sample.expiresAt)).pipe(Effect.provide(node))).documentId
        ).toBe(`doc_${i}`)
      }
    })
  )

  it.effect("expires at expiresAt, not before; matches only the exact key generation and document version", () =>
    Effect.sync(() => {
      const claims: Ticket.Claims = { ...sample, documentId: doc.id, documentVersion: doc.version }
      expect(Ticket.isLive(claims, claims.expiresAt - 1)).toBe(true)
      expect(Ticket.isLive(claims, claims.expiresAt)).toBe(false)
      const current = { keyId: sample.keyId, keyGeneration: 3, documentId: doc.id, documentVersion: 2 }
      expect(Ticket.matches(claims, current)).toBe(true)
      expect(Ticket.matches(claims, { ...current, keyGeneration: 4 })).toBe(false)
      expect(Ticket.matches(claims, { ...current, documentVersion: 3 })).toBe(false)
      expect(Ticket.matches(claims, { ...current, documentId: `${doc.id}x` })).toBe(false)
      expect(Ticket.matches(claims, { ...current, keyId: `${sample.keyId}x` })).toBe(false)
    })
  )

  it("base64url is strict and round-trips", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(Ticket.decodeBase64Url(Ticket.encodeBase64Url(bytes))).toEqual(bytes)
        // The standard alphabet and form (RFC 4648 section 5, no padding), as Node writes it.
        expect(Ticket.encodeBase64Url(bytes)).toBe(Buffer.from(bytes).toString("base64url"))
      })
    )
    expect(Ticket.decodeBase64Url("A")).toBeUndefined()
    expect(Ticket.decodeBase64Url("AA")).toEqual(new Uint8Array([0]))
    expect(Ticket.decodeBase64Url("AB")).toBeUndefined() // stray bits
    expect(Ticket.decodeBase64Url("AA==")).toBeUndefined()
    expect(Ticket.decodeBase64Url("A+/A")).toBeUndefined()
  })
})

describe("Ticket: the previous release's sealed tickets", () => {
  /** A ticket as the previous release sealed it: `0x01 | len | keyId | IV | AES-GCM(claims JSON) + tag`. */
  const sealed = (claims: Ticket.Claims, keyId = "t1", iv = new Uint8Array(12).fill(7)) =>
    Effect.gen(function* () {
      const ring = yield* KeyRing
      const id = new TextEncoder().encode(keyId)
      const header = new Uint8Array([Ticket.FORMAT_SEALED, id.length, ...id])
      const json = JSON.stringify([
        claims.customerNo,
        claims.keyId,
        claims.keyMode,
        claims.keyGeneration,
        claims.documentId,
        claims.documentVersion,
        claims.expiresAt
      ])
      const body = yield* ring.seal(yield* ring.current("ticket"), iv, header, new TextEncoder().encode(json))
      return Ticket.encodeBase64Url(new Uint8Array([...header, ...iv, ...body]))
    })
  const claims: Ticket.Claims = { ...sample, documentId: doc.id, documentVersion: doc.version }

  it.effect("still open, with or without the host's AES, until they expire (checked by the download)", () =>
    Effect.gen(function* () {
      for (const native of [false, true]) {
        const ticket = yield* sealed(claims).pipe(Effect.provide(layer([secret("t1", 1)], native)))
        for (const opener of [false, true])
          expect(
            yield* Ticket.open(ticket, before(claims.expiresAt)).pipe(Effect.provide(layer([secret("t1", 1)], opener)))
          ).toEqual(Option.some(claims))
      }
    })
  )

  it.effect.prop(
    "altered, cut or extended, or under another secret, they never open",
    [fc.nat(), fc.integer({ min: 1, max: 255 })],
    ([at, xor]) =>
      Effect.gen(function* () {
        const window = before(claims.expiresAt)
        const bytes = Ticket.decodeBase64Url(yield* sealed(claims))!
        yield* expectTamperedNeverOpen(bytes, at, xor, window)
        const other = Ticket.open(Ticket.encodeBase64Url(bytes), window).pipe(Effect.provide(layer([secret("t1", 8)])))
        expect(Option.isNone(yield* other)).toBe(true)
      }).pipe(Effect.provide(layer()))
  )
})
