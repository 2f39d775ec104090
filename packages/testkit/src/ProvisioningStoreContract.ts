/**
 * @module ProvisioningStoreContract
 *
 * The conformance suite of the `ProvisioningStore` port: round trips of a registration (machine
 * state and profile intact), the lookups by link hash, validation-key hash and customer number,
 * and the optimistic `update` that lets concurrent guesses against one registration count
 * exactly (exactly one of two writers from one version wins).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ProvisioningStore, type RegistrationRecord, type Transactor } from "@waybill/core"

/** Every case of the suite, by the name it is reported under. */
export const cases = [
  "insert/find roundtrip keeps state and profile",
  "find unknown idx -> none",
  "lookups by link hash, validation-key hash and customer number",
  "emailHasCustomer only once a registration of the address has a customer, in any case",
  "update with the next version wins; a stale version changes nothing",
  "concurrent updates from one version: exactly one wins"
] as const

let counter = 0
/** A fresh pending registration with unique idx and hashes. */
export const registration = (overrides: Partial<RegistrationRecord> = {}): RegistrationRecord => {
  counter += 1
  const n = `${Date.now().toString(36)}${counter}`
  return {
    idx: `wr_test${n}`,
    email: `ops${n}@example-business.com`,
    emailDomain: "example-business.com",
    passwordHash: "$scrypt$ln=17,r=8,p=1$c2FsdA$aGFzaA",
    otpSecretId: "otp-1",
    state: {
      stage: "pending",
      otpHash: `otp${n}`,
      otpExpiresAt: 1_800_000_600_000,
      otpFailures: 0,
      totalFailures: 0,
      linkHash: `link${n}`,
      linkExpiresAt: 1_800_001_800_000,
      lastSentAt: 1_800_000_000_000,
      resendCount: 0,
      resendDayStart: 1_800_000_000_000,
      validationKeyHash: null,
      validationKeyExpiresAt: 0,
      customerNo: null,
      billingUpdated: false
    },
    mailStatus: "sent",
    profile: {},
    createdAt: 1_800_000_000_000,
    updatedAt: 1_800_000_000_000,
    version: 1,
    ...overrides
  }
}

/** Runs the suite against the layer `makeLayer` builds (fresh per case). */
export const provisioningStoreContract = <E>(
  name: string,
  makeLayer: () => Layer.Layer<ProvisioningStore | Transactor, E>
): void => {
  describe(name, () => {
    const run = <A, E2>(program: Effect.Effect<A, E2, ProvisioningStore | Transactor>) =>
      Effect.provide(program, makeLayer())

    it.effect(cases[0], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          const r = registration({ profile: { firstName: "Ada", customerName: "Acme — Ünicode" } })
          yield* store.insert(r)
          expect(Option.getOrThrow(yield* store.find(r.idx))).toEqual(r)
        })
      )
    )

    it.effect(cases[1], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          expect(Option.isNone(yield* store.find("wr_nope"))).toBe(true)
        })
      )
    )

    it.effect(cases[2], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          const r = registration()
          yield* store.insert(r)
          const next = {
            ...r,
            state: { ...r.state, validationKeyHash: `vk-${r.idx}`, customerNo: `9${r.version}${r.idx.length}` },
            version: 2
          }
          expect(yield* store.update(next)).toBe(true)
          expect(Option.getOrThrow(yield* store.findByLinkHash(r.state.linkHash!)).idx).toBe(r.idx)
          expect(Option.getOrThrow(yield* store.findByValidationKeyHash(`vk-${r.idx}`)).idx).toBe(r.idx)
          expect(Option.getOrThrow(yield* store.findByCustomerNo(next.state.customerNo)).idx).toBe(r.idx)
          expect(Option.isNone(yield* store.findByLinkHash("unknown"))).toBe(true)
          expect(Option.isNone(yield* store.findByValidationKeyHash("unknown"))).toBe(true)
        })
      )
    )

    it.effect(cases[3], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          const a = registration()
          const b = registration({ email: a.email })
          yield* store.insert(a)
          yield* store.insert(b)
          expect(yield* store.emailHasCustomer(a.email)).toBe(false)
          yield* store.update({ ...b, state: { ...b.state, customerNo: "8123456" }, version: 2 })
          expect(yield* store.emailHasCustomer(a.email)).toBe(true)
          // The same address in another case is the same address.
          expect(yield* store.emailHasCustomer(a.email.toUpperCase())).toBe(true)
          expect(yield* store.emailHasCustomer(a.email.toLowerCase())).toBe(true)
        })
      )
    )

    it.effect(cases[4], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          const r = registration()
          yield* store.insert(r)
          const v2 = { ...r, state: { ...r.state, otpFailures: 1, totalFailures: 1 }, version: 2 }
          expect(yield* store.update(v2)).toBe(true)
          expect(yield* store.update({ ...r, mailStatus: "failed", version: 2 })).toBe(false)
          expect(Option.getOrThrow(yield* store.find(r.idx))).toEqual(v2)
        })
      )
    )

    it.effect(cases[5], () =>
      run(
        Effect.gen(function* () {
          const store = yield* ProvisioningStore
          const r = registration()
          yield* store.insert(r)
          const results = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) =>
              store.update({ ...r, state: { ...r.state, otpFailures: i + 1 }, version: 2 })
            ),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Boolean)).toHaveLength(1)
          expect(Option.getOrThrow(yield* store.find(r.idx)).version).toBe(2)
        })
      )
    )
  })
}
