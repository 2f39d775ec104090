import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Entropy } from "../src/shared/Entropy.js"
import { KeyRing, type KeySecret, type SecretPurpose } from "../src/shared/KeyRing.js"
import * as Ticket from "../src/documents/Ticket.js"

const secret = (id: string, fill: number): KeySecret => ({
  id,
  material: Redacted.make(new Uint8Array(32).fill(fill))
})

const ring = (ticket: ReadonlyArray<KeySecret>) => {
  const other = [secret("x", 9)]
  const secrets: Record<SecretPurpose, ReadonlyArray<KeySecret>> = {
    "api-key": other,
    ticket,
    otp: other,
    webhook: other
  }
  return KeyRing.fromSecrets(secrets)
}

const layer = (ticket: ReadonlyArray<KeySecret> = [secret("t1", 1)]) => Layer.merge(ring(ticket), Entropy.webCrypto)

const claimsArb = fc.record({
  customerNo: fc.stringMatching(/^[1-9]\d{6}$/),
  keyId: fc.string({ maxLength: 40 }),
  keyMode: fc.constantFrom("live" as const, "test" as const),
  keyGeneration: fc.integer({ min: 1, max: 1_000_000 }),
  documentId: fc.string({ maxLength: 40 }),
  documentVersion: fc.integer({ min: 1, max: 1_000_000 }),
  expiresAt: fc.integer({ min: 0, max: 4_102_444_800_000 })
})

const sample: Ticket.Claims = {
  customerNo: "1234567",
  keyId: "key_1234567_live",
  keyMode: "live",
  keyGeneration: 3,
  documentId: "doc_01J0000000000000000000000",
  documentVersion: 2,
  expiresAt: 1_767_225_600_000
}

describe("Ticket", () => {
  it.effect("seals and opens a round trip; the ticket is base64url and reveals nothing", () =>
    Effect.gen(function* () {
      const ticket = yield* Ticket.seal(sample)
      expect(ticket).toMatch(/^[A-Za-z0-9_-]+$/)
      for (const part of ["1234567", "doc_01J", "key_", "live"]) expect(ticket).not.toContain(part)
      const decoded = new TextDecoder().decode(Ticket.decodeBase64Url(ticket))
      for (const part of ["1234567", "doc_01J", "key_", "live"]) expect(decoded).not.toContain(part)
      expect(yield* Ticket.open(ticket)).toEqual(Option.some(sample))
      // A fresh IV each time: two tickets for the same claims differ.
      expect(yield* Ticket.seal(sample)).not.toBe(ticket)
    }).pipe(Effect.provide(layer()))
  )

  it.effect.prop("any claims round-trip", [claimsArb], ([claims]) =>
    Effect.gen(function* () {
      expect(yield* Ticket.open(yield* Ticket.seal(claims))).toEqual(Option.some(claims))
    }).pipe(Effect.provide(layer()))
  )

  it.effect.prop(
    "arbitrary text never opens",
    [fc.oneof(fc.string({ maxLength: 400 }), fc.stringMatching(/^[A-Za-z0-9_-]{0,300}$/))],
    ([text]) =>
      Effect.gen(function* () {
        expect(Option.isNone(yield* Ticket.open(text))).toBe(true)
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 500 } }
  )

  it.effect.prop(
    "arbitrary bytes with a valid header and key id never open",
    [fc.uint8Array({ minLength: 0, maxLength: 300 })],
    ([body]) =>
      Effect.gen(function* () {
        const header = [0x01, 2, 0x74, 0x31] // format 1, key id "t1"
        const text = Ticket.encodeBase64Url(new Uint8Array([...header, ...body]))
        expect(Option.isNone(yield* Ticket.open(text))).toBe(true)
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 500 } }
  )

  it.effect.prop(
    "changing any byte of a real ticket makes it never open",
    [claimsArb, fc.nat(), fc.integer({ min: 1, max: 255 })],
    ([claims, at, xor]) =>
      Effect.gen(function* () {
        const bytes = Ticket.decodeBase64Url(yield* Ticket.seal(claims))!
        const altered = new Uint8Array(bytes)
        const i = at % altered.length
        altered[i] = altered[i]! ^ xor
        expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(altered)))).toBe(true)
        // Truncated or extended tickets do not open either.
        expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(bytes.subarray(0, i))))).toBe(true)
        const longer = new Uint8Array([...bytes, xor])
        expect(Option.isNone(yield* Ticket.open(Ticket.encodeBase64Url(longer)))).toBe(true)
      }).pipe(Effect.provide(layer()))
  )

  it.effect.prop(
    "a ticket verifies only for the exact document version and key generation it was sealed for",
    [
      claimsArb,
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.boolean(),
      fc.boolean()
    ],
    ([claims, generation, version, sameGeneration, sameVersion]) =>
      Effect.gen(function* () {
        const opened = Option.getOrThrow(yield* Ticket.open(yield* Ticket.seal(claims)))
        const current = {
          keyId: claims.keyId,
          keyGeneration: sameGeneration ? claims.keyGeneration : generation,
          documentId: claims.documentId,
          documentVersion: sameVersion ? claims.documentVersion : version
        }
        const exact =
          current.keyGeneration === claims.keyGeneration && current.documentVersion === claims.documentVersion
        expect(Ticket.matches(opened, current)).toBe(exact)
        expect(Ticket.matches(opened, { ...current, documentId: `${claims.documentId}x` })).toBe(false)
        expect(Ticket.matches(opened, { ...current, keyId: `${claims.keyId}x` })).toBe(false)
      }).pipe(Effect.provide(layer()))
  )

  it.effect("expires at expiresAt, not before", () =>
    Effect.sync(() => {
      expect(Ticket.isLive(sample, sample.expiresAt - 1)).toBe(true)
      expect(Ticket.isLive(sample, sample.expiresAt)).toBe(false)
    })
  )

  it.effect("secrets rotate: old tickets open while their secret is in the ring; others never", () =>
    Effect.gen(function* () {
      const old = yield* Ticket.seal(sample).pipe(Effect.provide(layer([secret("t1", 1)])))
      const rotated = layer([secret("t2", 2), secret("t1", 1)])
      expect(yield* Ticket.open(old).pipe(Effect.provide(rotated))).toEqual(Option.some(sample))
      const fresh = yield* Ticket.seal(sample).pipe(Effect.provide(rotated))
      expect(Option.isNone(yield* Ticket.open(fresh).pipe(Effect.provide(layer([secret("t1", 1)]))))).toBe(true)
      // Same key id, different material (a reused id): nothing opens.
      expect(Option.isNone(yield* Ticket.open(old).pipe(Effect.provide(layer([secret("t1", 7)]))))).toBe(true)
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

describe("Ticket with a host-supplied synchronous AES-GCM", () => {
  const nodeAes = async () => {
    const { createCipheriv, createDecipheriv } = await import("node:crypto")
    return {
      seal: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array) => {
        const c = createCipheriv("aes-256-gcm", key, iv)
        c.setAAD(aad)
        return new Uint8Array(Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]))
      },
      open: (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, sealed: Uint8Array) => {
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
  }
  const secrets = (t: KeySecret): Record<SecretPurpose, ReadonlyArray<KeySecret>> => ({
    "api-key": [secret("x", 9)],
    ticket: [t],
    otp: [secret("x", 9)],
    webhook: [secret("x", 9)]
  })

  it.effect("interoperates with WebCrypto both ways, and rejects tampering", () =>
    Effect.gen(function* () {
      const t1 = secret("t1", 1)
      const aes = yield* Effect.promise(nodeAes)
      const web = Layer.merge(KeyRing.fromSecrets(secrets(t1)), Entropy.webCrypto)
      const node = Layer.merge(KeyRing.fromSecrets(secrets(t1), { aes256Gcm: aes }), Entropy.webCrypto)
      const byNode = yield* Ticket.seal(sample).pipe(Effect.provide(node))
      const byWeb = yield* Ticket.seal(sample).pipe(Effect.provide(web))
      expect(yield* Ticket.open(byNode).pipe(Effect.provide(web))).toEqual(Option.some(sample))
      expect(yield* Ticket.open(byWeb).pipe(Effect.provide(node))).toEqual(Option.some(sample))
      const flipped = byNode.slice(0, -2) + (byNode.at(-2) === "A" ? "B" : "A") + byNode.at(-1)
      expect(yield* Ticket.open(flipped).pipe(Effect.provide(node))).toEqual(Option.none())
    })
  )

  it.effect("sealAll gives each claims its own ticket and IV, in order, with either implementation", () =>
    Effect.gen(function* () {
      const t1 = secret("t1", 1)
      const aes = yield* Effect.promise(nodeAes)
      const claims = Array.from({ length: 5 }, (_, i) => ({
        ...sample,
        documentId: `doc_${i}`,
        documentVersion: i + 1
      }))
      for (const layer of [
        Layer.merge(KeyRing.fromSecrets(secrets(t1)), Entropy.webCrypto),
        Layer.merge(KeyRing.fromSecrets(secrets(t1), { aes256Gcm: aes }), Entropy.webCrypto)
      ]) {
        const tickets = yield* Ticket.sealAll(claims).pipe(Effect.provide(layer))
        expect(tickets).toHaveLength(claims.length)
        for (const [i, ticket] of tickets.entries())
          expect(yield* Ticket.open(ticket).pipe(Effect.provide(layer))).toEqual(Option.some(claims[i]))
        // The IV sits right after the 2-byte header and the key id "t1".
        const ivs = tickets.map((t) => Ticket.encodeBase64Url(Ticket.decodeBase64Url(t)!.subarray(4, 16)))
        expect(new Set(ivs).size).toBe(claims.length)
        expect(yield* Ticket.sealAll([]).pipe(Effect.provide(layer))).toEqual([])
      }
    })
  )
})
