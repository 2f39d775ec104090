import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { makeScrypt } from "../src/password.js"

describe("scrypt PasswordHasher", () => {
  it.effect("hashes with the decided parameters and verifies only the right password", () =>
    Effect.gen(function* () {
      const hasher = yield* makeScrypt()
      const stored = yield* hasher.hash(Redacted.make("correct horse battery staple"))
      expect(stored).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
      expect(stored).not.toContain("correct")
      expect(yield* hasher.verify(Redacted.make("correct horse battery staple"), stored)).toBe(true)
      expect(yield* hasher.verify(Redacted.make("correct horse battery stapler"), stored)).toBe(false)
      expect(yield* hasher.verify(Redacted.make("x"), "not a hash")).toBe(false)
      // A fresh salt every time.
      expect(yield* hasher.hash(Redacted.make("correct horse battery staple"))).not.toBe(stored)
    })
  )

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
})
