/**
 * @module BlobPg
 *
 * Core's `BlobStore` on PostgreSQL, so every host of a fleet sees the same document files
 * without a shared filesystem. A blob is a row of `waybill_blobs` and its bytes are rows of
 * `waybill_blob_chunks`, 256 KiB each (tables of `@waybill/storage-kysely`'s migration
 * `0012_blobs_and_key_check`: run `migrate` first).
 *
 * - **Content-addressed**, like `@waybill/blob-fs`: a blob's key is the SHA-256 of its bytes in
 *   hex, so equal files are stored once and the same bytes get the same key from either store.
 *   A rendition's key is `<key>.<variant>`. Keys are checked against those shapes before any
 *   query; anything else is simply missing.
 * - **Streamed both ways**: a write sends each 256 KiB chunk as soon as the stream has delivered
 *   it (at most one chunk and one incoming piece are held), and a read fetches one chunk per
 *   pull of the answer's stream. A blob of any size passes through bounded memory.
 * - **All or nothing**: the chunks of a write go in one transaction, under a fresh `blob_id`
 *   (the key is only known once the last byte has been hashed); the `waybill_blobs` row that
 *   names them is inserted last and the transaction commits. A failed or interrupted write
 *   leaves nothing; a write of bytes already stored rolls back and answers the existing key.
 *
 * The adapter does not import `pg`: {@link PgPool} is the part of `pg.Pool` it uses.
 */
import { createHash, randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BlobStore, type BlobStoreShape, type OpenBlob, StorageError } from "@waybill/core"

/** What `pg` answers to a query (the part used here). */
export interface PgResult {
  readonly rows: Array<Record<string, unknown>>
}

/** A pooled client (`pg.PoolClient`). */
export interface PgClient {
  query(sql: string, parameters: Array<unknown>): Promise<PgResult>
  /** Returns the client to the pool; with an error, the pool discards it. */
  release(error?: Error | boolean): void
}

/** The part of `pg.Pool` the store uses. */
export interface PgPool {
  connect(): Promise<PgClient>
  query(sql: string, parameters: Array<unknown>): Promise<PgResult>
}

/** The size of a stored chunk: 256 KiB. */
export const CHUNK_BYTES = 256 * 1024

const KEY = /^[0-9a-f]{64}$/
const VARIANT = /^[a-z0-9][a-z0-9-]{0,31}$/
const RENDITION_KEY = /^[0-9a-f]{64}\.[a-z0-9][a-z0-9-]{0,31}$/

/** Whether a text is a key this store can have made (a blob's, or a rendition's). */
export const isKey = (key: string): boolean => KEY.test(key) || RENDITION_KEY.test(key)

/** Cuts incoming pieces of any size into chunks of exactly {@link CHUNK_BYTES} (the last shorter). */
const chunker = () => {
  let parts: Array<Uint8Array> = []
  let held = 0
  const take = (): Uint8Array => {
    const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts, held)
    const chunk = all.subarray(0, Math.min(CHUNK_BYTES, held))
    const rest = all.subarray(chunk.byteLength)
    parts = rest.byteLength === 0 ? [] : [rest]
    held = rest.byteLength
    return chunk
  }
  return {
    /** Adds a piece; answers the full chunks it completed. */
    push: (piece: Uint8Array): Array<Uint8Array> => {
      if (piece.byteLength === 0) return []
      parts.push(piece)
      held += piece.byteLength
      const full: Array<Uint8Array> = []
      while (held >= CHUNK_BYTES) full.push(take())
      return full
    },
    /** The last, partial chunk, if any bytes are left. */
    end: (): Option.Option<Uint8Array> => (held === 0 ? Option.none() : Option.some(take()))
  }
}

/** The store over `pool`; its tables must exist (`@waybill/storage-kysely`'s `migrate`). */
export const make = (pool: PgPool): BlobStoreShape => {
  const attempt = <A>(operation: string, run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: (cause) => new StorageError({ operation, cause }) })

  /**
   * Writes the pieces `next` hands out until it answers none, in one transaction; `keyOf` names
   * the blob from the hash of its bytes. Answers the key (the existing blob's when it was there).
   */
  const write = async (
    next: () => Promise<Uint8Array | undefined>,
    keyOf: (sha256: string) => string
  ): Promise<string> => {
    const client = await pool.connect()
    let broken: unknown
    try {
      await client.query("begin", [])
      const blobId = randomBytes(16).toString("hex")
      const hash = createHash("sha256")
      const chunks = chunker()
      let seq = 0
      let size = 0
      const send = (data: Uint8Array) =>
        client.query("insert into waybill_blob_chunks (blob_id, seq, data) values ($1, $2, $3)", [
          blobId,
          seq++,
          Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        ])
      for (;;) {
        const piece = await next()
        if (piece === undefined) break
        hash.update(piece)
        size += piece.byteLength
        for (const chunk of chunks.push(piece)) await send(chunk)
      }
      const last = chunks.end()
      if (Option.isSome(last)) await send(last.value)
      const key = keyOf(hash.digest("hex"))
      const inserted = await client.query(
        "insert into waybill_blobs (key, blob_id, size, chunks, created_at) values ($1, $2, $3, $4, $5) " +
          "on conflict (key) do nothing returning key",
        [key, blobId, size, seq, Date.now()]
      )
      await client.query(inserted.rows.length === 0 ? "rollback" : "commit", [])
      return key
    } catch (error) {
      try {
        await client.query("rollback", [])
      } catch (rollbackError) {
        broken = rollbackError
      }
      throw error
    } finally {
      // A client whose rollback failed may be mid-transaction or disconnected: the pool drops it.
      client.release(broken === undefined ? undefined : true)
    }
  }

  const fromStream = (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader()
    return {
      next: async () => {
        const { done, value } = await reader.read()
        return done ? undefined : value
      },
      cancel: (cause: unknown) => reader.cancel(cause).catch(() => undefined)
    }
  }

  const putStream = (stream: ReadableStream<Uint8Array>) =>
    attempt("blob.put", async () => {
      const source = fromStream(stream)
      try {
        return await write(source.next, (sha) => sha)
      } catch (error) {
        await source.cancel(error)
        throw error
      }
    })

  const once = (bytes: Uint8Array) => {
    let given = false
    return async () => {
      if (given) return undefined
      given = true
      return bytes
    }
  }

  const put = (bytes: Uint8Array) => attempt("blob.put", () => write(once(bytes), (sha) => sha))

  const renditionKey = (key: string, variant: string) => `${key}.${variant}`

  const putRendition = (key: string, variant: string, bytes: Uint8Array) =>
    attempt("blob.put-rendition", () => {
      if (!KEY.test(key) || !VARIANT.test(variant))
        return Promise.reject(new Error(`not a blob key and rendition variant: ${JSON.stringify([key, variant])}`))
      return write(once(bytes), () => renditionKey(key, variant))
    })

  interface Row {
    readonly blob_id: string
    readonly size: string | number
    readonly chunks: number
  }
  const find = async (key: string): Promise<Row | undefined> =>
    (await pool.query("select blob_id, size, chunks from waybill_blobs where key = $1", [key])).rows[0] as unknown as
      | Row
      | undefined

  const chunkOf = async (blobId: string, seq: number): Promise<Uint8Array> => {
    const row = (
      await pool.query("select data from waybill_blob_chunks where blob_id = $1 and seq = $2", [blobId, seq])
    ).rows[0] as { readonly data: Uint8Array } | undefined
    if (row === undefined) throw new Error(`blob ${blobId} has no chunk ${seq}`)
    return row.data
  }

  /** One chunk per pull: the reader's pace decides how much is fetched. */
  const streamOf = (row: Row): ReadableStream<Uint8Array> => {
    let seq = 0
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (seq >= row.chunks) {
          controller.close()
          return
        }
        const data = await chunkOf(row.blob_id, seq++)
        controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
        if (seq >= row.chunks) controller.close()
      }
    })
  }

  const stat = (key: string) =>
    isKey(key)
      ? attempt("blob.stat", async () => Option.map(Option.fromNullable(await find(key)), (row) => Number(row.size)))
      : Effect.succeed(Option.none())

  const open = (key: string) =>
    isKey(key)
      ? attempt("blob.open", async () =>
          Option.map(
            Option.fromNullable(await find(key)),
            (row): OpenBlob => ({ size: Number(row.size), body: streamOf(row) })
          )
        )
      : Effect.succeed(Option.none())

  const read = (key: string) =>
    isKey(key)
      ? attempt("blob.read", async () => {
          const row = await find(key)
          if (row === undefined) return Option.none()
          const { rows } = await pool.query("select data from waybill_blob_chunks where blob_id = $1 order by seq", [
            row.blob_id
          ])
          const parts = rows.map((r) => r["data"] as Uint8Array)
          if (parts.length !== row.chunks) throw new Error(`blob ${key} has ${parts.length} of ${row.chunks} chunks`)
          return Option.some(new Uint8Array(Buffer.concat(parts, Number(row.size))))
        })
      : Effect.succeed(Option.none())

  return { put, putStream, stat, open, read, renditionKey, putRendition }
}

/** `BlobStore` over `pool`. */
export const layer = (pool: PgPool): Layer.Layer<BlobStore> => Layer.sync(BlobStore, () => make(pool))
