/**
 * `@waybill/blob-pg` (tested here, where adapters are composed: its tables come from
 * `@waybill/storage-kysely`'s migrations) on a fresh schema of the test server (`WAYBILL_PG_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`), migrated by `@waybill/storage-kysely` and dropped
 * at the end. Without a server the suite fails on CI (`CI=true`) and is skipped, with a notice
 * in its title, elsewhere.
 */
import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { sql } from "kysely"
import pg from "pg"
import { BlobStoreContract, blobStoreContract } from "@waybill/testkit"
import { migrateToLatest, postgresEngine, type StorageEngine } from "@waybill/storage-kysely"
import { BlobPg } from "@waybill/blob-pg"
import { pgServerUrl, postgresSuite } from "./postgresServer.js"

const schema = `waybill_blobpg_${process.pid}_${Date.now().toString(36)}`
let pool: pg.Pool
let engine: StorageEngine

const { suite, title } = await postgresSuite("blob-pg")

suite(title, () => {
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: pgServerUrl, options: `-c search_path=${schema}`, max: 4 })
    engine = postgresEngine(pool)
    await sql`create schema ${sql.id(schema)}`.execute(engine.kysely)
    await migrateToLatest(engine)
  })
  afterAll(async () => {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(engine.kysely)
    await engine.close()
  })

  blobStoreContract("blob-pg", () => Effect.sync(() => BlobPg.make(pool)))

  const count = async (table: "waybill_blobs" | "waybill_blob_chunks") =>
    Number((await pool.query(`select count(*)::int as n from ${table}`)).rows[0].n)

  it.effect("stores 256 KiB chunks, the last one shorter", () =>
    Effect.gen(function* () {
      const store = BlobPg.make(pool)
      const size = 2 * BlobPg.CHUNK_BYTES + 100
      const key = yield* store.putStream(
        BlobStoreContract.streamOf(BlobStoreContract.patterned(size, 501), [1000, 70_000])
      )
      const { rows } = yield* Effect.promise(() =>
        pool.query(
          "select c.seq, length(c.data) as n from waybill_blob_chunks c join waybill_blobs b using (blob_id) where b.key = $1 order by c.seq",
          [key]
        )
      )
      expect(rows.map((r) => [r.seq, r.n])).toEqual([
        [0, BlobPg.CHUNK_BYTES],
        [1, BlobPg.CHUNK_BYTES],
        [2, 100]
      ])
    })
  )

  it.effect("the same bytes twice are stored once; a failed stream leaves no rows", () =>
    Effect.gen(function* () {
      const store = BlobPg.make(pool)
      const bytes = BlobStoreContract.patterned(BlobPg.CHUNK_BYTES + 1, 502)
      yield* store.put(bytes)
      const before = yield* Effect.promise(() => Promise.all([count("waybill_blobs"), count("waybill_blob_chunks")]))
      yield* store.putStream(BlobStoreContract.streamOf(bytes, [4096]))
      let sent = 0
      const failing = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          if (sent++ === 3) controller.error(new Error("client went away"))
          else controller.enqueue(BlobStoreContract.patterned(BlobPg.CHUNK_BYTES, 600 + sent))
        }
      })
      expect(Exit.isFailure(yield* Effect.exit(store.putStream(failing)))).toBe(true)
      const after = yield* Effect.promise(() => Promise.all([count("waybill_blobs"), count("waybill_blob_chunks")]))
      expect(after).toEqual(before)
    })
  )
})
