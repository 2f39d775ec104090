import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import { type BlobStoreShape, type OpenBlob, StorageError } from "@waybill/core"
import { BlobCache } from "../src/index.js"

/**
 * A content-addressed store in memory that streams every blob in 1,000-byte pieces and counts
 * what reaches it; `failAfter` makes the next streams fail after their first piece.
 */
const countingStore = () => {
  const blobs = new Map<string, Uint8Array>()
  const calls = { open: 0, stat: 0, read: 0 }
  let failing = false
  const stream = (bytes: Uint8Array): ReadableStream<Uint8Array> => {
    let at = 0
    return new ReadableStream({
      pull: (controller) => {
        if (failing && at > 0) return controller.error(new Error("disk gone"))
        if (at >= bytes.byteLength) return controller.close()
        controller.enqueue(bytes.slice(at, at + 1000))
        at += 1000
      }
    })
  }
  const store: BlobStoreShape = {
    put: (bytes) =>
      Effect.sync(() => {
        const key = createHash("sha256").update(bytes).digest("hex")
        blobs.set(key, bytes.slice())
        return key
      }),
    putStream: () => Effect.die("not used"),
    stat: (key) =>
      Effect.sync(() => {
        calls.stat++
        return Option.map(Option.fromNullable(blobs.get(key)), (b) => b.byteLength)
      }),
    open: (key) =>
      Effect.sync(() => {
        calls.open++
        return Option.map(
          Option.fromNullable(blobs.get(key)),
          (b): OpenBlob => ({ size: b.byteLength, body: stream(b) })
        )
      }),
    read: (key) =>
      Effect.sync(() => {
        calls.read++
        return Option.map(Option.fromNullable(blobs.get(key)), (b) => b.slice())
      }),
    renditionKey: (key, variant) => `${key}.${variant}`,
    putRendition: () => Effect.die("not used")
  }
  return { store, calls, fail: (on: boolean) => (failing = on) }
}

const bytesOf = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff)

const bodyOf = (opened: Option.Option<OpenBlob>) =>
  Effect.promise(async () => {
    const body = Option.getOrThrow(opened).body
    return body instanceof Uint8Array ? body : new Uint8Array(await new Response(body).arrayBuffer())
  })

describe("BlobCache", () => {
  it.effect("a blob read once is answered from memory: open, stat and read no longer reach the store", () =>
    Effect.gen(function* () {
      const { store, calls } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 100_000, maxBlobBytes: 10_000 })
      const bytes = bytesOf(4_500, 1)
      const key = yield* cache.put(bytes)
      const count = (m: typeof BlobCache.readsBy.hit) => Effect.map(Metric.value(m), (s) => s.count)
      const [hits, misses] = [yield* count(BlobCache.readsBy.hit), yield* count(BlobCache.readsBy.miss)]
      const first = yield* cache.open(key)
      expect(yield* bodyOf(first)).toEqual(bytes)
      expect(calls.open).toBe(1)
      const second = yield* cache.open(key)
      // Whole bytes: nothing to stream, nothing to release.
      expect(Option.getOrThrow(second).body).toBeInstanceOf(Uint8Array)
      expect(Option.getOrThrow(second).size).toBe(4_500)
      expect(yield* bodyOf(second)).toEqual(bytes)
      expect(yield* cache.stat(key)).toEqual(Option.some(4_500))
      expect(yield* cache.read(key)).toEqual(Option.some(bytes))
      expect(calls).toEqual({ open: 1, stat: 0, read: 0 })
      expect(cache.held()).toEqual({ blobs: 1, bytes: 4_500 })
      // What a host's /metrics shows: one miss (the first open), then three hits; the bytes kept.
      expect((yield* count(BlobCache.readsBy.miss)) - misses).toBe(1)
      expect((yield* count(BlobCache.readsBy.hit)) - hits).toBe(3)
      expect((yield* Metric.value(BlobCache.heldBytes)).value).toBe(4_500)
    })
  )

  it.effect("a blob larger than maxBlobBytes streams from the store every time and is not kept", () =>
    Effect.gen(function* () {
      const { store, calls } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 100_000, maxBlobBytes: 2_000 })
      const bytes = bytesOf(2_001, 2)
      const key = yield* cache.put(bytes)
      for (let i = 0; i < 3; i++) {
        const opened = yield* cache.open(key)
        expect(Option.getOrThrow(opened).body).toBeInstanceOf(ReadableStream)
        expect(yield* bodyOf(opened)).toEqual(bytes)
      }
      expect(yield* cache.read(key)).toEqual(Option.some(bytes))
      expect(calls.open).toBe(3)
      expect(calls.read).toBe(1)
      expect(cache.held()).toEqual({ blobs: 0, bytes: 0 })
    })
  )

  it.effect("the least recently used blob goes first when maxBytes is reached", () =>
    Effect.gen(function* () {
      const { store, calls } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 3_000, maxBlobBytes: 1_000 })
      const [a, b, c, d] = yield* Effect.all([1, 2, 3, 4].map((seed) => cache.put(bytesOf(1_000, seed))))
      for (const key of [a!, b!, c!, a!, d!]) yield* cache.open(key)
      expect(calls.open).toBe(4)
      expect(cache.held()).toEqual({ blobs: 3, bytes: 3_000 })
      // a was used after b, so b made room for d.
      yield* cache.open(a!)
      yield* cache.open(d!)
      expect(calls.open).toBe(4)
      yield* cache.open(b!)
      expect(calls.open).toBe(5)
    })
  )

  it.effect("a missing blob is not remembered: once stored, it is found", () =>
    Effect.gen(function* () {
      const { store } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 100_000 })
      const bytes = bytesOf(10, 3)
      const key = createHash("sha256").update(bytes).digest("hex")
      expect(Option.isNone(yield* cache.open(key))).toBe(true)
      expect(Option.isNone(yield* cache.stat(key))).toBe(true)
      expect(Option.isNone(yield* cache.read(key))).toBe(true)
      yield* cache.put(bytes)
      expect(yield* bodyOf(yield* cache.open(key))).toEqual(bytes)
    })
  )

  it.effect("a stream that fails while it is gathered fails the open and keeps nothing", () =>
    Effect.gen(function* () {
      const { store, calls, fail } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 100_000 })
      const bytes = bytesOf(5_000, 4)
      const key = yield* cache.put(bytes)
      fail(true)
      const exit = yield* Effect.exit(cache.open(key))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error).toBeInstanceOf(StorageError)
      expect(cache.held()).toEqual({ blobs: 0, bytes: 0 })
      fail(false)
      expect(yield* bodyOf(yield* cache.open(key))).toEqual(bytes)
      expect(calls.open).toBe(2)
    })
  )

  it.effect("a stream whose length differs from the size the store gave fails the open", () =>
    Effect.gen(function* () {
      const { store } = countingStore()
      const lying: BlobStoreShape = {
        ...store,
        open: (key) =>
          Effect.map(
            store.open(key),
            Option.map((o) => ({ ...o, size: o.size + 1 }))
          )
      }
      const cache = BlobCache.make(lying, { maxBytes: 100_000 })
      const key = yield* cache.put(bytesOf(100, 5))
      expect(Exit.isFailure(yield* Effect.exit(cache.open(key)))).toBe(true)
      expect(cache.held().blobs).toBe(0)
    })
  )

  it.effect("maxBytes 0 is the store itself", () =>
    Effect.gen(function* () {
      const { store, calls } = countingStore()
      const cache = BlobCache.make(store, { maxBytes: 0 })
      const key = yield* cache.put(bytesOf(10, 6))
      yield* cache.open(key)
      yield* cache.open(key)
      expect(calls.open).toBe(2)
      expect(cache.open).toBe(store.open)
    })
  )

  it.effect("a kept blob does not hold the larger buffer it was a view of", () =>
    Effect.gen(function* () {
      const { store } = countingStore()
      const pooled = new Uint8Array(8_192)
      const view = pooled.subarray(100, 200)
      view.fill(7)
      const viewing: BlobStoreShape = {
        ...store,
        open: () => Effect.succeed(Option.some<OpenBlob>({ size: 100, body: view }))
      }
      const cache = BlobCache.make(viewing, { maxBytes: 100_000 })
      const opened = Option.getOrThrow(yield* cache.open("k"))
      const body = opened.body as Uint8Array
      expect(body.buffer.byteLength).toBe(100)
      expect(body).toEqual(new Uint8Array(100).fill(7))
    })
  )

  it.effect.prop(
    "whatever is opened, every answer has the stored bytes and the cache never holds more than its bounds",
    [
      fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.integer({ min: 0, max: 6_000 }),
      fc.integer({ min: 0, max: 3_000 })
    ],
    ([sizes, picks, maxBytes, maxBlobBytes]) =>
      Effect.gen(function* () {
        const { store } = countingStore()
        const cache = BlobCache.make(store, { maxBytes, maxBlobBytes })
        const blobs = sizes.map((size, i) => bytesOf(size, i + 10))
        const keys = yield* Effect.all(blobs.map((b) => cache.put(b)))
        for (const pick of picks) {
          const i = pick % blobs.length
          const how = Math.floor(pick / blobs.length) % 3
          if (how === 0) expect(yield* bodyOf(yield* cache.open(keys[i]!))).toEqual(blobs[i])
          else if (how === 1) expect(yield* cache.stat(keys[i]!)).toEqual(Option.some(blobs[i]!.byteLength))
          else expect(yield* cache.read(keys[i]!)).toEqual(Option.some(blobs[i]))
          const held = cache.held()
          expect(held.bytes).toBeLessThanOrEqual(maxBytes)
          expect(held.blobs).toBeLessThanOrEqual(blobs.length)
        }
      })
  )
})
