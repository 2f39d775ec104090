/**
 * @module BlobFs
 *
 * Core's `BlobStore` on a local directory. Blobs are content-addressed: the key is the SHA-256
 * of the bytes in hex, stored at `<root>/<first two hex digits>/<key>`, so equal files are
 * stored once and a key can only ever name the bytes it was made from. Keys are checked against
 * exactly 64 lowercase hex digits before any path is built, which makes path traversal
 * impossible whatever a caller passes.
 *
 * Writes are atomic: bytes go to a temporary file in `<root>/.tmp`, are flushed to disk, then
 * renamed into place (rename is atomic within one filesystem), so a reader never sees half a
 * file and a crash leaves at most a stray temporary file.
 *
 * A rendition of a blob (say, an image turned by 90 degrees) is kept beside it as
 * `<key>.<variant>`: a blob's bytes never change, so neither does what is derived from them, and
 * the name says which blob and which variant it was made from.
 */
import { createHash, randomBytes } from "node:crypto"
import * as fsp from "node:fs/promises"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BlobStore, type BlobStoreShape, StorageError } from "@waybill/core"

const KEY = /^[0-9a-f]{64}$/
const VARIANT = /^[a-z0-9][a-z0-9-]{0,31}$/
const RENDITION_KEY = /^[0-9a-f]{64}\.[a-z0-9][a-z0-9-]{0,31}$/

/** Whether a text is a key this store can have made (a blob's, or a rendition's). */
export const isKey = (key: string): boolean => KEY.test(key) || RENDITION_KEY.test(key)

const isMissing = (e: unknown) =>
  typeof e === "object" && e !== null && ["ENOENT", "ENOTDIR"].includes((e as { code?: string }).code ?? "")

/** The largest read of {@link streamOf}: a document of up to this size is read in one call. */
const CHUNK_BYTES = 256 * 1024

/**
 * The file as a byte stream that reads it in chunks of up to {@link CHUNK_BYTES} on demand and
 * owns the handle: closed at the end, on an error, or when the reader cancels. A web stream
 * straight over the handle, rather than a Node stream wrapped by `Readable.toWeb`: a download
 * is a few reads, not a pipeline of two stream machines per chunk.
 */
const streamOf = (handle: fsp.FileHandle, size: number): ReadableStream<Uint8Array> => {
  let position = 0
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await handle.close()
  }
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        // The answer's length is the stat'ed size (a blob never changes): nothing past it is read.
        const want = Math.min(CHUNK_BYTES, size - position)
        if (want <= 0) {
          await close()
          controller.close()
          return
        }
        const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(want), 0, want, position)
        if (bytesRead === 0) throw new Error(`blob file ended at ${position} of ${size} bytes`)
        position += bytesRead
        controller.enqueue(new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead))
        if (position >= size) {
          await close()
          controller.close()
        }
      } catch (e) {
        await close().catch(() => undefined)
        controller.error(e)
      }
    },
    cancel: close
  })
}

/** The store over `root` (created on first write). */
export const make = (root: string): BlobStoreShape => {
  const pathOf = (key: string) => join(root, key.slice(0, 2), key)
  const attempt = <A>(operation: string, run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: (cause) => new StorageError({ operation, cause }) })

  /** Writes `bytes` to `target` through a flushed temporary file and a rename. */
  const writeAtomic = async (key: string, bytes: Uint8Array) => {
    const target = pathOf(key)
    const tmpDir = join(root, ".tmp")
    await fsp.mkdir(tmpDir, { recursive: true })
    await fsp.mkdir(join(root, key.slice(0, 2)), { recursive: true })
    const tmp = join(tmpDir, `${key}.${randomBytes(8).toString("hex")}`)
    const handle = await fsp.open(tmp, "wx", 0o600)
    try {
      await handle.writeFile(bytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await fsp.rename(tmp, target)
    } catch (e) {
      await fsp.rm(tmp, { force: true })
      throw e
    }
  }

  /**
   * Writes `stream` to a temporary file as it arrives, hashing on the way, then renames it to its
   * content address (or drops it when that blob exists already).
   */
  const putStream = (stream: ReadableStream<Uint8Array>) =>
    attempt("blob.put", async () => {
      const tmpDir = join(root, ".tmp")
      await fsp.mkdir(tmpDir, { recursive: true })
      const tmp = join(tmpDir, `stream.${randomBytes(8).toString("hex")}`)
      const hash = createHash("sha256")
      const reader = stream.getReader()
      let size = 0
      try {
        const handle = await fsp.open(tmp, "wx", 0o600)
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            hash.update(value)
            size += value.byteLength
            await handle.write(value)
          }
          await handle.sync()
        } finally {
          await handle.close()
        }
      } catch (e) {
        await reader.cancel(e).catch(() => undefined)
        await fsp.rm(tmp, { force: true })
        throw e
      }
      const key = hash.digest("hex")
      try {
        try {
          if ((await fsp.stat(pathOf(key))).size === size) return key
        } catch (e) {
          if (!isMissing(e)) throw e
        }
        await fsp.mkdir(join(root, key.slice(0, 2)), { recursive: true })
        await fsp.rename(tmp, pathOf(key))
        return key
      } finally {
        await fsp.rm(tmp, { force: true })
      }
    })

  const put = (bytes: Uint8Array) =>
    attempt("blob.put", async () => {
      const key = createHash("sha256").update(bytes).digest("hex")
      try {
        const existing = await fsp.stat(pathOf(key))
        if (existing.size === bytes.byteLength) return key
      } catch (e) {
        if (!isMissing(e)) throw e
      }
      await writeAtomic(key, bytes)
      return key
    })

  const renditionKey = (key: string, variant: string) => `${key}.${variant}`

  const putRendition = (key: string, variant: string, bytes: Uint8Array) =>
    attempt("blob.put-rendition", async () => {
      if (!KEY.test(key) || !VARIANT.test(variant))
        throw new Error(`not a blob key and rendition variant: ${JSON.stringify([key, variant])}`)
      const derived = renditionKey(key, variant)
      await writeAtomic(derived, bytes)
      return derived
    })

  const stat = (key: string) =>
    isKey(key)
      ? attempt("blob.stat", async () => {
          try {
            return Option.some((await fsp.stat(pathOf(key))).size)
          } catch (e) {
            if (isMissing(e)) return Option.none()
            throw e
          }
        })
      : Effect.succeed(Option.none())

  const open = (key: string) =>
    isKey(key)
      ? attempt("blob.open", async () => {
          let handle: fsp.FileHandle
          try {
            handle = await fsp.open(pathOf(key), "r")
          } catch (e) {
            if (isMissing(e)) return Option.none()
            throw e
          }
          try {
            const { size } = await handle.stat()
            return Option.some({ size, body: streamOf(handle, size) })
          } catch (e) {
            await handle.close()
            throw e
          }
        })
      : Effect.succeed(Option.none())

  const read = (key: string) =>
    isKey(key)
      ? attempt("blob.read", async () => {
          try {
            return Option.some(new Uint8Array(await fsp.readFile(pathOf(key))))
          } catch (e) {
            if (isMissing(e)) return Option.none()
            throw e
          }
        })
      : Effect.succeed(Option.none())

  return { put, putStream, stat, open, read, renditionKey, putRendition }
}

/** `BlobStore` over the directory `root`. */
export const layer = (root: string): Layer.Layer<BlobStore> => Layer.sync(BlobStore, () => make(root))
