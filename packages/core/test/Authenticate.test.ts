import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { AccountRecord, ApiKeyRecord } from "../src/access/Account.js"
import { AccountStore, type AccountStoreShape } from "../src/access/AccountStore.js"
import * as ApiKey from "../src/access/ApiKey.js"
import * as Credentials from "../src/access/Credentials.js"
import { UserStore, type UserStoreShape } from "../src/access/UserStore.js"
import { Entropy } from "../src/shared/Entropy.js"
import { KeyRing, type KeySecret } from "../src/shared/KeyRing.js"

const secret = (id: string, byte: number): KeySecret => ({ id, material: Redacted.make(new Uint8Array(32).fill(byte)) })
const ring = (...apiKey: Array<KeySecret>) =>
  KeyRing.fromSecrets({ "api-key": apiKey, ticket: [], otp: [], webhook: [] })

const account: AccountRecord = {
  customerNo: "1234567",
  name: "A",
  cancelMode: "local",
  rateCard: null,
  ipAllowlist: [],
  createdAt: 0
}

/** Only what authenticate reads, over one stored key. */
const storeWith = (key: ApiKeyRecord) =>
  Layer.merge(
    Layer.succeed(AccountStore, {
      findKeyWithAccount: (hash: string) =>
        Effect.succeed(hash === key.hash ? Option.some({ key, account }) : Option.none())
    } as unknown as AccountStoreShape),
    // Keys never reach the session path: a store that is never called.
    Layer.succeed(UserStore, {} as UserStoreShape)
  )

const keyRecord = (hash: string, status: ApiKeyRecord["status"] = "active"): ApiKeyRecord => ({
  id: "k",
  customerNo: account.customerNo,
  mode: "live",
  status,
  generation: 1,
  hash,
  hint: "wb_live_xxxx",
  last4: null,
  createdAt: null,
  updatedAt: 0
})

describe("Credentials.authenticate", () => {
  it.effect("finds keys hashed under an older api-key secret after a rotation", () =>
    Effect.gen(function* () {
      const old = secret("k1", 1)
      const key = yield* ApiKey.generate("live").pipe(Effect.provide(Entropy.webCrypto))
      const storedHash = yield* ApiKey.hash(key).pipe(Effect.provide(ring(old)))
      const principal = yield* Credentials.authenticate(
        Credentials.resolve(`Bearer ${Redacted.value(key)}`, Credentials.bookingPlaces({}))
      ).pipe(Effect.provide(Layer.merge(ring(secret("k2", 2), old), storeWith(keyRecord(storedHash)))))
      expect(principal.account.customerNo).toBe("1234567")
      // Without the old secret the key is unknown.
      const denied = yield* Effect.either(
        Credentials.authenticate(
          Credentials.resolve(`Bearer ${Redacted.value(key)}`, Credentials.bookingPlaces({}))
        ).pipe(Effect.provide(Layer.merge(ring(secret("k2", 2)), storeWith(keyRecord(storedHash)))))
      )
      expect(denied._tag).toBe("Left")
    })
  )

  it.effect("two rings with the same secret id but different secrets hash differently", () =>
    Effect.gen(function* () {
      const key = Redacted.make("wb_live_same")
      const a = yield* ApiKey.hash(key).pipe(Effect.provide(ring(secret("k1", 1))))
      const b = yield* ApiKey.hash(key).pipe(Effect.provide(ring(secret("k1", 9))))
      expect(a).not.toBe(b)
    })
  )

  it.effect("the injected synchronous HMAC gives the same digests as WebCrypto", () =>
    Effect.gen(function* () {
      const { createHmac } = yield* Effect.promise(() => import("node:crypto"))
      const s = secret("k1", 7)
      const key = Redacted.make("wb_test_abc")
      const web = yield* ApiKey.hash(key).pipe(Effect.provide(ring(s)))
      const node = yield* ApiKey.hash(key).pipe(
        Effect.provide(
          KeyRing.fromSecrets(
            { "api-key": [s], ticket: [], otp: [], webhook: [] },
            { hmacSha256: (k, m) => createHmac("sha256", k).update(m).digest() }
          )
        )
      )
      expect(node).toBe(web)
    })
  )

  it("refuses secrets shorter than 32 bytes", () => {
    expect(() =>
      KeyRing.fromSecrets({
        "api-key": [{ id: "x", material: Redacted.make(new Uint8Array(8)) }],
        ticket: [],
        otp: [],
        webhook: []
      })
    ).toThrow(/32 bytes/)
  })

  it.effect("a key is refused when the stored record's mode is not the key's own (test key, live record)", () =>
    Effect.gen(function* () {
      const s = secret("k1", 1)
      const key = yield* ApiKey.generate("test").pipe(Effect.provide(Entropy.webCrypto))
      const h = yield* ApiKey.hash(key).pipe(Effect.provide(ring(s)))
      // keyRecord is a live slot: a store mix-up must not let a test key act as the live key.
      const r = yield* Effect.either(
        Credentials.authenticate(
          Credentials.resolve(`Bearer ${Redacted.value(key)}`, Credentials.bookingPlaces({}))
        ).pipe(Effect.provide(Layer.merge(ring(s), storeWith(keyRecord(h)))))
      )
      expect(r._tag === "Left" && r.left._tag === "InvalidCredential" && r.left.reason).toBe("unknown")
    })
  )

  it.effect("disabled and blank keys are denied", () =>
    Effect.gen(function* () {
      const s = secret("k1", 1)
      const key = yield* ApiKey.generate("live").pipe(Effect.provide(Entropy.webCrypto))
      const h = yield* ApiKey.hash(key).pipe(Effect.provide(ring(s)))
      for (const status of ["disabled", "blank"] as const) {
        const r = yield* Effect.either(
          Credentials.authenticate(
            Credentials.resolve(`Bearer ${Redacted.value(key)}`, Credentials.bookingPlaces({}))
          ).pipe(Effect.provide(Layer.merge(ring(s), storeWith(keyRecord(h, status)))))
        )
        expect(r._tag === "Left" && r.left._tag === "InvalidCredential" && r.left.reason).toBe(status)
      }
    })
  )
})
