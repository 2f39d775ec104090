import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import { BlobFs } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "waybill-blobfs-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const store = BlobFs.make(root)

/** BlobFs always streams: whole bytes here would be a change of behaviour. */
const readAll = async (body: ReadableStream<Uint8Array> | Uint8Array) => {
  if (body instanceof Uint8Array) throw new Error("BlobFs opened a blob as whole bytes")
  return new Uint8Array(await new Response(body).arrayBuffer())
}

describe("BlobFs", () => {
  it.effect.prop("put then read, stat and open give the same bytes", [fc.uint8Array({ maxLength: 4096 })], ([bytes]) =>
    Effect.gen(function* () {
      const key = yield* store.put(bytes)
      expect(key).toMatch(/^[0-9a-f]{64}$/)
      expect(Option.getOrThrow(yield* store.read(key))).toEqual(bytes)
      expect(Option.getOrThrow(yield* store.stat(key))).toBe(bytes.byteLength)
      const opened = Option.getOrThrow(yield* store.open(key))
      expect(opened.size).toBe(bytes.byteLength)
      expect(yield* Effect.promise(() => readAll(opened.body))).toEqual(bytes)
    })
  )

  it.effect(
    "open streams files larger than one read whole, in order, and an empty file as no bytes",
    () =>
      Effect.gen(function* () {
        for (const size of [0, 1, 256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 600_000]) {
          const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 7 + (i >> 9)) & 0xff)
          const opened = Option.getOrThrow(yield* store.open(yield* store.put(bytes)))
          expect(opened.size).toBe(size)
          const read = yield* Effect.promise(() => readAll(opened.body))
          // Buffer.equals: a deep equality of 600,000 elements takes the test runner seconds.
          expect(read.byteLength, String(size)).toBe(size)
          expect(Buffer.from(read).equals(Buffer.from(bytes)), String(size)).toBe(true)
        }
      }),
    { timeout: 30_000 }
  )

  it.effect("content-addressed: equal bytes share a key; the file lives under its key", () =>
    Effect.gen(function* () {
      const bytes = new TextEncoder().encode("same bytes")
      const a = yield* store.put(bytes)
      const b = yield* store.put(bytes)
      expect(a).toBe(b)
      expect(readFileSync(join(root, a.slice(0, 2), a), "utf8")).toBe("same bytes")
      // No temporary file is left behind.
      expect(readdirSync(join(root, ".tmp"))).toEqual([])
      expect(statSync(join(root, a.slice(0, 2), a)).mode & 0o777).toBe(0o600)
    })
  )

  it.effect("missing blobs are none; keys that are not 64 hex digits never touch the filesystem", () =>
    Effect.gen(function* () {
      writeFileSync(join(root, "secret.txt"), "outside")
      const missing = "0".repeat(64)
      for (const key of [
        missing,
        "../secret.txt",
        "../../etc/passwd",
        "/etc/passwd",
        "secret.txt",
        `${"a".repeat(63)}/`,
        "A".repeat(64),
        `${"a".repeat(64)}\u0000`,
        ""
      ]) {
        expect(Option.isNone(yield* store.read(key)), key).toBe(true)
        expect(Option.isNone(yield* store.stat(key)), key).toBe(true)
        expect(Option.isNone(yield* store.open(key)), key).toBe(true)
      }
      expect(BlobFs.isKey("../secret.txt")).toBe(false)
    })
  )

  it.effect("a rendition is kept beside its blob under a derived key, and found only once stored", () =>
    Effect.gen(function* () {
      const key = yield* store.put(new TextEncoder().encode("source image"))
      const derived = store.renditionKey(key, "rotate-90")
      expect(derived).toBe(`${key}.rotate-90`)
      expect(BlobFs.isKey(derived)).toBe(true)
      expect(Option.isNone(yield* store.stat(derived))).toBe(true)
      expect(Option.isNone(yield* store.open(derived))).toBe(true)
      const turned = new TextEncoder().encode("turned image")
      expect(yield* store.putRendition(key, "rotate-90", turned)).toBe(derived)
      expect(Option.getOrThrow(yield* store.stat(derived))).toBe(turned.byteLength)
      expect(Option.getOrThrow(yield* store.read(derived))).toEqual(turned)
      const opened = Option.getOrThrow(yield* store.open(derived))
      expect(yield* Effect.promise(() => readAll(opened.body))).toEqual(turned)
      // Another variant of the same blob is another file; the blob itself is untouched.
      expect(Option.isNone(yield* store.stat(store.renditionKey(key, "rotate-180")))).toBe(true)
      expect(new TextDecoder().decode(Option.getOrThrow(yield* store.read(key)))).toBe("source image")
      expect(readdirSync(join(root, ".tmp"))).toEqual([])
    })
  )

  it.effect("rendition keys and variants outside the strict shapes never touch the filesystem", () =>
    Effect.gen(function* () {
      const key = "b".repeat(64)
      for (const variant of ["", "../x", "Rotate", "a/b", "-x", "x".repeat(33), "a\u0000"]) {
        const derived = store.renditionKey(key, variant)
        expect(BlobFs.isKey(derived), variant).toBe(false)
        expect(Option.isNone(yield* store.stat(derived)), variant).toBe(true)
        const error = yield* Effect.flip(store.putRendition(key, variant, new Uint8Array([1])))
        expect(error._tag).toBe("StorageError")
      }
      const error = yield* Effect.flip(store.putRendition("../secret.txt", "rotate-90", new Uint8Array([1])))
      expect(error._tag).toBe("StorageError")
    })
  )

  it.effect("a write failure is a StorageError", () =>
    Effect.gen(function* () {
      const file = join(root, "not-a-dir")
      writeFileSync(file, "x")
      const error = yield* Effect.flip(BlobFs.make(file).put(new Uint8Array([1])))
      expect(error._tag).toBe("StorageError")
    })
  )
})
