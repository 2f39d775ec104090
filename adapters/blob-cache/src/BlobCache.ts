/**
 * @module BlobCache
 *
 * Core's `BlobStore` in front of another one, keeping small blobs in memory once they have been
 * read, so the next download of the same file is answered from memory: no open, stat, reads and
 * close of a file (or chunk queries on PostgreSQL) per request, and one write of bytes already
 * in hand.
 *
 * It relies on the port's promise that a key names the same bytes for as long as the store has
 * it (both of Waybill's stores are content-addressed), so a kept blob never goes stale and
 * nothing is ever invalidated. Whether a download may have the file at all (a hidden, removed or
 * replaced document, a rotated key) is decided in the database before the blob is opened, so a
 * kept blob changes how fast a file comes, never whether it comes.
 *
 * Bounded: blobs of up to `maxBlobBytes` are kept, `maxBytes` in all, the least recently used
 * dropped first. Larger blobs are streamed from the store every time, as without the cache.
 * Writes go straight to the store and keep nothing: a file is kept when it is first read, not
 * when it is uploaded.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import { BlobStore, type BlobStoreShape, type OpenBlob, StorageError } from "@waybill/core"

/** The largest blob kept unless told otherwise: 1 MiB (a scanned page, a label, a photo). */
export const DEFAULT_MAX_BLOB_BYTES = 1024 * 1024

export interface Options {
  /** The most bytes kept in all; 0 keeps nothing (the store is used as it is). */
  readonly maxBytes: number
  /** The largest blob kept (default {@link DEFAULT_MAX_BLOB_BYTES}); larger ones are streamed. */
  readonly maxBlobBytes?: number
}

const readsKey = MetricKey.counter("waybill_blob_cache_reads_total", {
  description:
    "Blob opens, stats and reads through the cache, by result (hit: answered from memory; miss: the store's).",
  incremental: true
})

/** Reads through the cache by result, as Effect metrics (a host's `/metrics` shows them). */
export const readsBy: Readonly<Record<"hit" | "miss", Metric.Metric.Counter<number>>> = {
  hit: Metric.fromMetricKey(MetricKey.taggedWithLabels(readsKey, [MetricLabel.make("result", "hit")])),
  miss: Metric.fromMetricKey(MetricKey.taggedWithLabels(readsKey, [MetricLabel.make("result", "miss")]))
}

/** The bytes the process's cache keeps (one cache per process is the host's way). */
export const heldBytes: Metric.Metric.Gauge<number> = Metric.gauge("waybill_blob_cache_bytes", {
  description: "Bytes of document files kept in memory by the blob cache."
})

/** What the cache holds now. */
export interface Held {
  readonly blobs: number
  readonly bytes: number
}

/** A cached store: the port, and what it holds (for metrics and tests). */
export interface CachedBlobStore extends BlobStoreShape {
  readonly held: () => Held
}

/** Reads a stream to its end into one array of its own (a miss, once per kept blob). */
const gather = (stream: ReadableStream<Uint8Array>, size: number) =>
  Effect.tryPromise({
    try: async () => {
      const bytes = new Uint8Array(await new Response(stream).arrayBuffer())
      if (bytes.byteLength !== size)
        throw new Error(`the blob's stream gave ${bytes.byteLength} bytes, its size is ${size}`)
      return bytes
    },
    catch: (cause) => new StorageError({ operation: "blob.open", cause })
  })

/** `store` with the blobs it hands out kept in memory, within `options`' bounds. */
export const make = (store: BlobStoreShape, options: Options): CachedBlobStore => {
  const maxBytes = Math.max(0, Math.floor(options.maxBytes))
  const maxBlobBytes = Math.min(maxBytes, options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES)
  // A Map iterates in insertion order: a hit moves its entry to the end, so the first is the least recent.
  const kept = new Map<string, Uint8Array>()
  let bytes = 0

  const recall = (key: string): Uint8Array | undefined => {
    const hit = kept.get(key)
    if (hit !== undefined) {
      kept.delete(key)
      kept.set(key, hit)
    }
    // Counted in place (an in-memory add), not as an effect of its own on the download's path.
    const counter = hit === undefined ? readsBy.miss : readsBy.hit
    counter.unsafeUpdate(1, [])
    return hit
  }

  /** Keeps `blob` (if it fits) and answers the bytes to hand out. */
  const keep = (key: string, blob: Uint8Array): Uint8Array => {
    if (blob.byteLength > maxBlobBytes || kept.has(key)) return blob
    // A view into a larger buffer (a pooled one, say) would hold all of it: keep a copy of the view.
    const own = blob.byteOffset === 0 && blob.buffer.byteLength === blob.byteLength ? blob : blob.slice()
    kept.set(key, own)
    bytes += own.byteLength
    for (const [oldest, dropped] of kept) {
      if (bytes <= maxBytes) break
      kept.delete(oldest)
      bytes -= dropped.byteLength
    }
    heldBytes.unsafeUpdate(bytes, [])
    return own
  }

  const open = (key: string) =>
    Effect.suspend(() => {
      const hit = recall(key)
      if (hit !== undefined) return Effect.succeed(Option.some<OpenBlob>({ size: hit.byteLength, body: hit }))
      return Effect.flatMap(store.open(key), (opened) => {
        if (Option.isNone(opened) || opened.value.size > maxBlobBytes) return Effect.succeed(opened)
        const body = opened.value.body
        const whole = body instanceof Uint8Array ? Effect.succeed(body) : gather(body, opened.value.size)
        return Effect.map(whole, (blob) => {
          const handed = keep(key, blob)
          return Option.some<OpenBlob>({ size: handed.byteLength, body: handed })
        })
      })
    })

  const stat = (key: string) =>
    Effect.suspend(() => {
      const hit = recall(key)
      return hit === undefined ? store.stat(key) : Effect.succeed(Option.some(hit.byteLength))
    })

  const read = (key: string) =>
    Effect.suspend(() => {
      const hit = recall(key)
      if (hit !== undefined) return Effect.succeed(Option.some(hit))
      return Effect.map(
        store.read(key),
        Option.map((whole) => keep(key, whole))
      )
    })

  return {
    put: store.put,
    putStream: store.putStream,
    renditionKey: store.renditionKey,
    putRendition: store.putRendition,
    open: maxBytes === 0 ? store.open : open,
    stat: maxBytes === 0 ? store.stat : stat,
    read: maxBytes === 0 ? store.read : read,
    held: () => ({ blobs: kept.size, bytes })
  }
}

/**
 * Keeps the blobs of the `BlobStore` it is given:
 * `Layer.provide(BlobCache.layer({ maxBytes }), BlobFs.layer(dir))`.
 */
export const layer = (options: Options): Layer.Layer<BlobStore, never, BlobStore> =>
  Layer.effect(
    BlobStore,
    Effect.map(BlobStore, (store) => make(store, options))
  )
