/**
 * What blob-pg decides before any SQL runs, over a pool that records what it is asked. Its
 * round trips on a real server are the BlobStore contract in `examples/http-host/test/blobPg.test.ts`
 * (where the tables come from `@waybill/storage-kysely`'s migrations).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { BlobPg } from "../src/index.js"

const recordingPool = (fail?: string) => {
  const sent: Array<string> = []
  const released: Array<unknown> = []
  const query = (text: string) => {
    sent.push(text)
    return fail !== undefined && text.startsWith(fail)
      ? Promise.reject(new Error(`refused: ${text}`))
      : Promise.resolve({ rows: text.startsWith("insert into waybill_blobs") ? [{ key: "k" }] : [] })
  }
  const pool: BlobPg.PgPool = {
    query,
    connect: () => Promise.resolve({ query, release: (error) => void released.push(error) })
  }
  return { pool, sent, released }
}

describe("BlobPg", () => {
  it.effect("a key of another shape is missing without a query", () =>
    Effect.gen(function* () {
      const { pool, sent } = recordingPool()
      const store = BlobPg.make(pool)
      for (const key of ["x' or '1'='1", "../secret", "", "A".repeat(64), `${"a".repeat(64)}.Bad`]) {
        expect(Option.isNone(yield* store.stat(key))).toBe(true)
        expect(Option.isNone(yield* store.open(key))).toBe(true)
        expect(Option.isNone(yield* store.read(key))).toBe(true)
      }
      expect(sent).toEqual([])
      expect(Exit.isFailure(yield* Effect.exit(store.putRendition("a".repeat(64), "-no", new Uint8Array(1))))).toBe(
        true
      )
      expect(sent).toEqual([])
    })
  )

  it.effect("a write sends 256 KiB chunks in one transaction, keyed by the SHA-256 of the bytes", () =>
    Effect.gen(function* () {
      const { pool, sent, released } = recordingPool()
      const key = yield* BlobPg.make(pool).put(new Uint8Array(BlobPg.CHUNK_BYTES * 2 + 1))
      expect(key).toMatch(/^[0-9a-f]{64}$/)
      expect(sent.map((s) => s.split(" (")[0])).toEqual([
        "begin",
        "insert into waybill_blob_chunks",
        "insert into waybill_blob_chunks",
        "insert into waybill_blob_chunks",
        "insert into waybill_blobs",
        "commit"
      ])
      expect(released).toEqual([undefined])
    })
  )

  it.effect("a failed write rolls back and is a StorageError", () =>
    Effect.gen(function* () {
      const { pool, sent, released } = recordingPool("insert into waybill_blobs")
      const exit = yield* Effect.exit(BlobPg.make(pool).put(new Uint8Array(10)))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("StorageError")
      expect(sent.at(-1)).toBe("rollback")
      expect(released).toEqual([undefined])
    })
  )
})
