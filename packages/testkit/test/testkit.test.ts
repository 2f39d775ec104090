import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { Entropy, Ulid } from "@waybill/core"
import { Fixtures, StorageContract, TestEntropy, sequenceEntropy, storageContract } from "../src/index.js"

const draw = (n: number) => Effect.flatMap(Entropy, (e) => e.bytes(n))

describe("TestEntropy", () => {
  it.effect("a seed gives the same stream on every build, across call boundaries", () =>
    Effect.gen(function* () {
      const once = yield* draw(16).pipe(Effect.provide(TestEntropy.layer(7)))
      const split = yield* Effect.all([draw(3), draw(13)]).pipe(Effect.provide(TestEntropy.layer(7)))
      expect([...split[0], ...split[1]]).toEqual([...once])
      const other = yield* draw(16).pipe(Effect.provide(TestEntropy.layer(8)))
      expect([...other]).not.toEqual([...once])
    })
  )

  it.effect("a seeded stream covers the byte range", () =>
    Effect.gen(function* () {
      const bytes = yield* draw(4096).pipe(Effect.provide(TestEntropy.layer(0)))
      const distinct = new Set(bytes).size
      expect(distinct).toBeGreaterThan(240)
    })
  )

  it.effect("sequenceEntropy hands out exactly the given bytes, then dies", () =>
    Effect.gen(function* () {
      const layer = sequenceEntropy([1, 2, 3, 250])
      const exit = yield* Effect.exit(Effect.all([draw(1), draw(3), draw(1)]).pipe(Effect.provide(layer)))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const ok = yield* Effect.all([draw(1), draw(3)]).pipe(Effect.provide(layer))
      expect(ok.map((b) => [...b])).toEqual([[1], [2, 3, 250]])
    })
  )

  it.effect("makes core's generators reproducible", () =>
    Effect.gen(function* () {
      // TestClock starts at 0, so the ULID's time part is all zeros and only entropy varies.
      const seeded = yield* Effect.all([Ulid.eventId, Ulid.eventId]).pipe(Effect.provide(TestEntropy.layer(42)))
      const again = yield* Effect.all([Ulid.eventId, Ulid.eventId]).pipe(Effect.provide(TestEntropy.layer(42)))
      expect(again).toEqual(seeded)
      expect(seeded[0]).not.toBe(seeded[1])
      const exact = yield* Ulid.eventId.pipe(Effect.provide(sequenceEntropy(new Uint8Array(10).fill(0xff))))
      expect(exact).toBe("evt_0000000000ZZZZZZZZZZZZZZZZ")
    })
  )
})

describe("Fixtures", () => {
  it("every builder call has fresh keys", () => {
    const s1 = Fixtures.shipment()
    const s2 = Fixtures.shipment()
    expect(s1.trackNo).not.toBe(s2.trackNo)
    expect(s1.trackNo).toMatch(/^[1-9]\d{7}$/)
    const a1 = Fixtures.account()
    const a2 = Fixtures.account()
    expect(a1.customerNo).not.toBe(a2.customerNo)
    expect(a1.customerNo).toMatch(/^[1-9]\d{6}$/)
    const k1 = Fixtures.apiKey()
    const k2 = Fixtures.apiKey()
    expect(k1.hash).not.toBe(k2.hash)
    expect(k1.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(Fixtures.event().id).not.toBe(Fixtures.event().id)
  })

  it("shipments are internally consistent and overrides win", () => {
    const s = Fixtures.shipment({ trackNo: "12345678", driverId: "drv_1" })
    expect(s.trackNo).toBe("12345678")
    expect(s.driverId).toBe("drv_1")
    expect(s.stops.map((st) => st.seq)).toEqual([0, 1, 2])
    expect(s.stops[0]?.role).toBe("pickup")
    expect(s.stops.at(-1)?.role).toBe("delivery")
    expect(s.legs.map((l) => [l.fromStop, l.toStop])).toEqual([
      [0, 1],
      [1, 2]
    ])
    expect(s.readyAt).toBeGreaterThan(2 ** 31)
    const k = Fixtures.apiKey({ customerNo: "7654321", mode: "test" })
    expect(k.id).toBe("key_7654321_test")
  })
})

describe("storageContract options", () => {
  const never = () => Layer.empty as never

  it("rejects a skip without a reason", () => {
    expect(() => storageContract("x", never, { skip: [{ case: "listKeys", reason: "  " }] })).toThrow(/needs a reason/)
  })

  it("rejects a skip of a case that does not exist", () => {
    const skip = [{ case: "no such case" as StorageContract.ContractCase, reason: "typo" }]
    expect(() => storageContract("x", never, { skip })).toThrow(/unknown case/)
  })

  it("lists every case once", () => {
    expect(new Set(StorageContract.cases).size).toBe(StorageContract.cases.length)
  })
})
