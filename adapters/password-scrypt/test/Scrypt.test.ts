import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import { PasswordHasher } from "@waybill/core"
import { makeScrypt, needsRehash, parse, scryptLayer } from "../src/index.js"

/** Small parameters keep the tests fast; the decided ones are checked once below. */
const fast = { logN: 4, r: 8, p: 1 } as const

describe("scrypt PasswordHasher", () => {
  it.effect(
    "hashes with the decided parameters and verifies only the right password",
    () =>
      Effect.gen(function* () {
        const hasher = yield* makeScrypt()
        const stored = yield* hasher.hash(Redacted.make("correct horse battery staple"))
        expect(stored).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
        expect(stored).not.toContain("correct")
        expect(yield* hasher.verify(Redacted.make("correct horse battery staple"), stored)).toBe(true)
        expect(yield* hasher.verify(Redacted.make("correct horse battery stapler"), stored)).toBe(false)
        // A fresh salt every time.
        expect(yield* hasher.hash(Redacted.make("correct horse battery staple"))).not.toBe(stored)
      }),
    // Three hashes at the real cost (128 MiB each) take seconds on a busy machine.
    60_000
  )

  it.effect("a wrong password, an empty one, or one differing only in case is refused", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt(fast)
      const stored = yield* hasher.hash(Redacted.make("Tr0ub4dor&3 is long enough"))
      for (const wrong of ["", "tr0ub4dor&3 is long enough", "Tr0ub4dor&3 is long enough ", "Tr0ub4dor&3"])
        expect(yield* hasher.verify(Redacted.make(wrong), stored), wrong).toBe(false)
    })
  )

  it.effect("Unicode passwords are compared after NFKC normalization", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt(fast)
      const stored = yield* hasher.hash(Redacted.make("caf\u00e9 au lait, s'il vous pla\u00eet"))
      expect(yield* hasher.verify(Redacted.make("cafe\u0301 au lait, s'il vous plai\u0302t"), stored)).toBe(true)
    })
  )

  it.effect("malformed or out-of-bounds stored strings verify false, never fail", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt(fast)
      const good = yield* hasher.hash(Redacted.make("password for the malformed test"))
      const [, , , salt, key] = good.split("$")
      const malformed = [
        "",
        "not a hash",
        "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
        good.replace("$scrypt$", "$scrypt2$"),
        good.slice(0, -1) + "!",
        `$scrypt$ln=4,r=8,p=1$${salt}$`,
        `$scrypt$ln=4,r=8,p=1$$${key}`,
        `$scrypt$ln=4,r=8,p=1$${salt}$${key}$extra`,
        // Parameters that would allocate gigabytes or run for hours are refused unseen.
        `$scrypt$ln=30,r=8,p=1$${salt}$${key}`,
        `$scrypt$ln=20,r=99,p=1$${salt}$${key}`,
        `$scrypt$ln=4,r=8,p=99$${salt}$${key}`,
        `$scrypt$ln=0,r=8,p=1$${salt}$${key}`,
        `$scrypt$ln=4,r=0,p=1$${salt}$${key}`,
        // Impossible base64 length (one character over a whole number of bytes).
        `$scrypt$ln=4,r=8,p=1$${salt}AAA$${key}`
      ]
      for (const stored of malformed) {
        expect(parse(stored), stored).toBeUndefined()
        expect(yield* hasher.verify(Redacted.make("password for the malformed test"), stored), stored).toBe(false)
      }
      expect(parse(good)?.parameters).toEqual(fast)
    })
  )

  it.effect("hashes made with other parameters still verify, and say they need a rehash", () =>
    Effect.gen(function* () {
      const old = yield* (yield* makeScrypt({ logN: 5 })).hash(Redacted.make("an older password hash"))
      const hasher = yield* makeScrypt(fast)
      expect(yield* hasher.verify(Redacted.make("an older password hash"), old)).toBe(true)
      expect(needsRehash(old, fast)).toBe(true)
      expect(needsRehash(yield* hasher.hash(Redacted.make("x")), fast)).toBe(false)
      expect(needsRehash("garbage", fast)).toBe(true)
    })
  )

  it("refuses parameters out of bounds when made", () => {
    expect(() => makeScrypt({ logN: 25 })).toThrow(RangeError)
    expect(() => makeScrypt({ r: 0 })).toThrow(RangeError)
  })

  it.effect("concurrent hashes behind a cap of one all complete, each with its own salt", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt({ logN: 10, concurrency: 1 })
      const hashes = yield* Effect.all(
        Array.from({ length: 4 }, (_, i) => hasher.hash(Redacted.make(`password number ${i} long`))),
        { concurrency: "unbounded" }
      )
      expect(new Set(hashes).size).toBe(4)
      expect(hashes.every((h) => h.startsWith("$scrypt$ln=10,"))).toBe(true)
    })
  )

  it.effect("the layer provides the PasswordHasher port", () =>
    Effect.gen(function* () {
      const hasher = yield* PasswordHasher
      const stored = yield* hasher.hash(Redacted.make("through the layer"))
      expect(yield* hasher.verify(Redacted.make("through the layer"), stored)).toBe(true)
    }).pipe(Effect.provide(scryptLayer(fast)))
  )

  it.effect("property: every password verifies against its own hash and not against another's", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt({ logN: 2, r: 1, p: 1, concurrency: 4 })
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.string({ maxLength: 64 }), fc.string({ maxLength: 64 }), async (a, b) => {
            const run = <A>(e: Effect.Effect<A>) => Effect.runPromise(e)
            const stored = await run(hasher.hash(Redacted.make(a)))
            expect(parse(stored)).toBeDefined()
            expect(await run(hasher.verify(Redacted.make(a), stored))).toBe(true)
            if (a.normalize("NFKC") !== b.normalize("NFKC"))
              expect(await run(hasher.verify(Redacted.make(b), stored))).toBe(false)
          }),
          { numRuns: 60 }
        )
      )
    })
  )

  it("property: arbitrary stored strings never make verify fail", async () => {
    const hasher = await Effect.runPromise(makeScrypt({ logN: 2, r: 1, p: 1 }))
    const fragment = fc.string({
      unit: fc.constantFrom("$", "s", "c", "r", "y", "p", "t", "l", "n", "=", ",", "1", "7", "A", "+", "/")
    })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fragment,
          fc
            .tuple(fc.nat(40), fc.nat(40), fc.nat(40), fc.base64String(), fc.base64String())
            .map(([ln, r, p, s, h]) => `$scrypt$ln=${ln},r=${r},p=${p}$${s.replace(/=+$/, "")}$${h.replace(/=+$/, "")}`)
        ),
        async (stored) => {
          expect(typeof (await Effect.runPromise(hasher.verify(Redacted.make("pw"), stored)))).toBe("boolean")
        }
      ),
      { numRuns: 200 }
    )
  })
})
