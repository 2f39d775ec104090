/**
 * The operator-recorded payment enablements (`Provisioning.PaymentEnablementStore`) on every
 * target: one per customer and provider, recorded once (the first time stays), cleared by remove.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Provisioning } from "@waybill/core"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  describe(`PaymentEnablementStore (storage-kysely: ${target.name})`, () => {
    it.scoped("records, finds per customer and provider, keeps the first time, removes", () =>
      Effect.gen(function* () {
        const store = yield* Provisioning.PaymentEnablementStore
        expect(yield* store.find("1234567", "stripe")).toEqual(Option.none())
        yield* store.put({ customerNo: "1234567", provider: "stripe", enabledAt: 1_800_000_000_000 })
        yield* store.put({ customerNo: "1234567", provider: "stripe", enabledAt: 1_900_000_000_000 })
        expect(yield* store.find("1234567", "stripe")).toEqual(
          Option.some({ customerNo: "1234567", provider: "stripe", enabledAt: 1_800_000_000_000 })
        )
        expect(yield* store.find("1234567", "adyen")).toEqual(Option.none())
        expect(yield* store.find("7654321", "stripe")).toEqual(Option.none())
        expect(yield* store.remove("1234567", "stripe")).toBe(true)
        expect(yield* store.remove("1234567", "stripe")).toBe(false)
        expect(yield* store.find("1234567", "stripe")).toEqual(Option.none())
      }).pipe(Effect.provide(storageLayer(target)))
    )
  })
}
