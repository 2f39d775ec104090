/**
 * @module BlobStoreContract
 *
 * The conformance suite of core's `BlobStore`: round trips through `put` and `putStream` of
 * lengths around the 256 KiB boundaries stores commonly chunk at (a property), the same key for
 * the same bytes however they arrive, none for keys never stored (whatever their shape),
 * renditions, a failing stream, and a 50 MiB stream written and read back without the process
 * ever holding it: memory is measured after a forced garbage collection at several points of the
 * write, so what is counted is what the store retains, not garbage not yet collected.
 *
 * Each case gets a store from `make`; cases store fresh bytes, so a shared store works too.
 */
import { createHash } from "node:crypto"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { BlobStoreShape, OpenBlob } from "@waybill/core"

export const cases = [
  "put and putStream round trip lengths around chunk boundaries, however the stream is cut",
  "stat, open and read answer none for a key never stored, whatever its shape",
  "renditions: none until stored, then served like a blob; variants are apart",
  "a stream that fails makes put fail",
  "a 50 MiB stream is written and read back in bounded memory"
] as const

export type BlobStoreCase = (typeof cases)[number]

/** The chunk size the boundaries are chosen around (`@waybill/blob-pg` stores 256 KiB chunks). */
export const CHUNK = 256 * 1024

/** `length` bytes of a pattern that differs with `seed` and never repeats with a short period. */
export const patterned = (length: number, seed: number): Uint8Array => {
  const out = new Uint8Array(length)
  let x = (seed * 2654435761) >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    out[i] = x & 0xff
  }
  return out
}

/** `bytes` as a stream of pieces of the given sizes (cycled), handed out on demand. */
export const streamOf = (bytes: Uint8Array, pieces: ReadonlyArray<number> = [CHUNK]): ReadableStream<Uint8Array> => {
  let at = 0
  let n = 0
  return new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (at >= bytes.byteLength) {
        controller.close()
        return
      }
      const size = Math.max(1, pieces[n++ % pieces.length] ?? CHUNK)
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    }
  })
}

/** An open blob's bytes, whichever form the store handed them in. */
const readAll = (body: OpenBlob["body"]) =>
  body instanceof Uint8Array
    ? Effect.succeed(body)
    : Effect.promise(async () => new Uint8Array(await new Response(body).arrayBuffer()))

const same = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b))

const BOUNDARIES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK, 2 * CHUNK + 1, 3 * CHUNK + 17]

/** A forced garbage collection (V8's `gc`, enabled for this process on first use). */
const collectGarbage = (() => {
  let gc: (() => void) | undefined
  return () => {
    if (gc === undefined) {
      setFlagsFromString("--expose-gc")
      gc = runInNewContext("gc") as () => void
    }
    gc()
  }
})()

/**
 * What the process holds after a full collection. Twice: the backing stores of collected
 * buffers are released after the collection that found them dead, so one pass still counts them.
 */
const retained = () => {
  collectGarbage()
  collectGarbage()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** Registers the suite for a store made by `make` (released with the case's scope). */
export const blobStoreContract = (
  name: string,
  make: () => Effect.Effect<BlobStoreShape, unknown, Scope.Scope>
): void => {
  const withStore = <A, E>(body: (store: BlobStoreShape) => Effect.Effect<A, E>) =>
    Effect.flatMap(Effect.orDie(make()), body)

  describe(`BlobStore contract: ${name}`, () => {
    it.scoped(
      cases[0],
      () =>
        withStore((store) =>
          Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(
                fc.constantFrom(...BOUNDARIES),
                fc.integer({ min: -2, max: 2 }),
                fc.array(fc.integer({ min: 1, max: CHUNK + 3 }), { minLength: 1, maxLength: 4 }),
                fc.integer(),
                async (boundary, delta, pieces, seed) => {
                  const bytes = patterned(Math.max(0, boundary + delta), seed)
                  const streamed = await Effect.runPromise(store.putStream(streamOf(bytes, pieces)))
                  const whole = await Effect.runPromise(store.put(bytes))
                  expect(streamed).toBe(whole)
                  const size = await Effect.runPromise(store.stat(streamed))
                  expect(Option.getOrThrow(size)).toBe(bytes.byteLength)
                  const read = Option.getOrThrow(await Effect.runPromise(store.read(streamed)))
                  expect(same(read, bytes)).toBe(true)
                  const opened = Option.getOrThrow(await Effect.runPromise(store.open(streamed)))
                  expect(opened.size).toBe(bytes.byteLength)
                  expect(same(await Effect.runPromise(readAll(opened.body)), bytes)).toBe(true)
                }
              ),
              { numRuns: 12 }
            )
          )
        ),
      // Twelve rounds of up to four durable writes of ~800 KiB: seconds on a busy CI machine.
      60_000
    )

    it.scoped(cases[1], () =>
      withStore((store) =>
        Effect.gen(function* () {
          const stored = yield* store.put(patterned(10, 1))
          const absent = [
            "0".repeat(64),
            stored.replace(/^./, (c) => (c === "a" ? "b" : "a")),
            "../../etc/passwd",
            "",
            `${stored}/../x`,
            "'; drop table waybill_blobs; --"
          ]
          for (const key of absent) {
            expect(Option.isNone(yield* store.stat(key)), key).toBe(true)
            expect(Option.isNone(yield* store.open(key)), key).toBe(true)
            expect(Option.isNone(yield* store.read(key)), key).toBe(true)
          }
          expect(Option.isSome(yield* store.stat(stored))).toBe(true)
        })
      )
    )

    it.scoped(cases[2], () =>
      withStore((store) =>
        Effect.gen(function* () {
          const key = yield* store.put(patterned(1000, 2))
          const turned = store.renditionKey(key, "rot90")
          const other = store.renditionKey(key, "rot180")
          expect(turned).not.toBe(key)
          expect(turned).not.toBe(other)
          expect(Option.isNone(yield* store.stat(turned))).toBe(true)
          expect(Option.isNone(yield* store.read(turned))).toBe(true)
          const bytes = patterned(CHUNK + 5, 3)
          expect(yield* store.putRendition(key, "rot90", bytes)).toBe(turned)
          expect(Option.getOrThrow(yield* store.stat(turned))).toBe(bytes.byteLength)
          expect(same(Option.getOrThrow(yield* store.read(turned)), bytes)).toBe(true)
          const opened = Option.getOrThrow(yield* store.open(turned))
          expect(same(yield* readAll(opened.body), bytes)).toBe(true)
          expect(Option.isNone(yield* store.stat(other))).toBe(true)
          // The blob itself is unchanged by its rendition.
          expect(same(Option.getOrThrow(yield* store.read(key)), patterned(1000, 2))).toBe(true)
          // A rendition of something that is not a key of this store is refused.
          expect(Exit.isFailure(yield* Effect.exit(store.putRendition("../x", "rot90", bytes)))).toBe(true)
        })
      )
    )

    it.scoped(cases[3], () =>
      withStore((store) =>
        Effect.gen(function* () {
          let sent = 0
          const failing = new ReadableStream<Uint8Array>({
            pull: (controller) => {
              if (sent >= 2) {
                controller.error(new Error("the upload broke"))
                return
              }
              sent++
              controller.enqueue(patterned(CHUNK + 1, 40 + sent))
            }
          })
          const exit = yield* Effect.exit(store.putStream(failing))
          expect(Exit.isFailure(exit)).toBe(true)
          // The store still works afterwards.
          const key = yield* store.put(patterned(5, 9))
          expect(Option.getOrThrow(yield* store.stat(key))).toBe(5)
        })
      )
    )

    it.scoped(
      cases[4],
      () =>
        withStore((store) =>
          Effect.gen(function* () {
            const total = 50 * 1024 * 1024
            const piece = 64 * 1024
            const source = patterned(piece, 77)
            const expected = createHash("sha256")
            const baseline = retained()
            let peak = 0
            let produced = 0
            const stream = new ReadableStream<Uint8Array>({
              pull: (controller) => {
                if (produced >= total) {
                  controller.close()
                  return
                }
                if (produced % (8 * 1024 * 1024) === 0) peak = Math.max(peak, retained() - baseline)
                // Each piece differs (its first bytes count the pieces), so no store can dedupe them.
                const bytes = source.slice()
                new DataView(bytes.buffer).setUint32(0, produced / piece)
                expected.update(bytes)
                produced += piece
                controller.enqueue(bytes)
              }
            })
            const key = yield* store.putStream(stream)
            peak = Math.max(peak, retained() - baseline)
            // A store that gathered the stream would hold 40 MiB or more at the last sample.
            expect(peak).toBeLessThan(16 * 1024 * 1024)
            expect(Option.getOrThrow(yield* store.stat(key))).toBe(total)
            const opened = Option.getOrThrow(yield* store.open(key))
            const hash = createHash("sha256")
            let size = 0
            let readPeak = 0
            const readBase = retained()
            // Whole bytes are for blobs a store already holds; this one must come as a stream.
            const body = opened.body
            if (body instanceof Uint8Array) throw new Error("a 50 MiB blob was opened as whole bytes")
            yield* Effect.promise(async () => {
              const reader = body.getReader()
              for (let n = 0; ; n++) {
                const { done, value } = await reader.read()
                if (done) break
                hash.update(value)
                size += value.byteLength
                if (n % 32 === 0) readPeak = Math.max(readPeak, retained() - readBase)
              }
            })
            expect(size).toBe(total)
            expect(hash.digest("hex")).toBe(expected.digest("hex"))
            expect(readPeak).toBeLessThan(16 * 1024 * 1024)
          })
        ),
      120_000
    )
  })
}
