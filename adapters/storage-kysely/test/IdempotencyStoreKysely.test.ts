/**
 * The `IdempotencyStore` conformance suite on every target (SQLite and PostgreSQL), and what
 * only this adapter promises: no statement of the store raises a unique violation, so a claim
 * inside a PostgreSQL transaction never aborts it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Fixtures, idempotencyStoreContract } from "@waybill/testkit"
import { migrate, StorageKysely } from "../src/index.js"
import { makeConnection } from "../src/internal/connection.js"
import { makeIdempotencyStore } from "../src/IdempotencyStoreKysely.js"
import { recording, storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  idempotencyStoreContract(`storage-kysely IdempotencyStore: ${target.name}`, () => storageLayer(target))
}

for (const target of targets) {
  describe(`IdempotencyStoreKysely: ${target.name}`, () => {
    it.scoped("a lost claim inside a transaction leaves the transaction usable", () =>
      Effect.gen(function* () {
        const { db, queries } = yield* recording(target)
        yield* migrate(db)
        const conn = makeConnection(db)
        const store = makeIdempotencyStore(conn)
        const claim = {
          scope: { customerNo: "1000001", mode: "live" as const },
          key: "k-1",
          fingerprint: "f".repeat(64),
          token: "t-1",
          createdAt: 1,
          lockedUntil: 2,
          expiresAt: 3
        }
        yield* store.claim(claim)
        queries.length = 0
        const found = yield* conn.withTransaction(
          Effect.gen(function* () {
            const lost = yield* store.claim({ ...claim, token: "t-2" })
            // Still usable after the conflict (PostgreSQL would refuse everything after an error).
            const again = yield* store.claim({ ...claim, token: "t-3" })
            return [lost, again]
          })
        )
        expect(found.map((f) => Option.map(f, (r) => r.token))).toEqual([Option.some("t-1"), Option.some("t-1")])
        expect(queries[0]!.sql).toMatch(/on conflict .* do nothing/)
      })
    )

    it.scoped("a taken tracking number inside an enclosing transaction leaves it usable (booking's retry)", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        yield* migrate(db)
        const { shipments, transactor } = yield* StorageKysely.make(db)
        const taken = Fixtures.shipment()
        yield* shipments.insert(taken)
        const next = Fixtures.shipment()
        const error = yield* transactor.withTransaction(
          Effect.gen(function* () {
            const e = yield* Effect.flip(shipments.insert({ ...next, trackNo: taken.trackNo }))
            yield* shipments.insert(next)
            return e
          })
        )
        expect(error).toMatchObject({ _tag: "DuplicateKey", what: "track_no" })
        expect(Option.isSome(yield* shipments.findByTrackNo(next.trackNo))).toBe(true)
      })
    )
  })
}
