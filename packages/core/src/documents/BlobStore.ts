/**
 * @module BlobStore
 *
 * The bytes of documents, kept apart from the database so large files never pass through it.
 * Keys are chosen by the store (`put` returns one) and are opaque to core; a store may be
 * content-addressed, so equal bytes may share a key. A key names the same bytes for as long as
 * the store has it: a blob is never rewritten under its key, so what was read under a key may
 * be kept and served again (what a cache in front of a store, like `@waybill/blob-cache`,
 * relies on). Blobs are immutable to their readers too: bytes a store hands out must not be
 * written to.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { StorageError } from "../shared/index.js"

/**
 * An open blob: its length, and its bytes, either as a stream that must be consumed or cancelled,
 * or whole when the store already holds them in memory (nothing to release).
 */
export interface OpenBlob {
  readonly size: number
  readonly body: ReadableStream<Uint8Array> | Uint8Array
}

export interface BlobStoreShape {
  /** Stores the bytes durably (all or nothing) and returns their key. */
  readonly put: (bytes: Uint8Array) => Effect.Effect<string, StorageError>
  /**
   * Stores the bytes of `stream` durably (all or nothing) and returns their key, the same key
   * `put` gives the same bytes. The store writes what arrives as it arrives and never holds the
   * whole blob in memory, so files of any size can pass through; the stream is read to its end,
   * or cancelled when the write fails.
   */
  readonly putStream: (stream: ReadableStream<Uint8Array>) => Effect.Effect<string, StorageError>
  /** The blob's length, or none when it is missing. */
  readonly stat: (key: string) => Effect.Effect<Option.Option<number>, StorageError>
  /** Opens the blob for streaming, or none when it is missing. */
  readonly open: (key: string) => Effect.Effect<Option.Option<OpenBlob>, StorageError>
  /** The whole blob in memory (for transforms), or none when it is missing. */
  readonly read: (key: string) => Effect.Effect<Option.Option<Uint8Array>, StorageError>
  /**
   * The key under which the rendition `variant` of blob `key` is kept: a file derived from it
   * (such as an image turned by its saved rotation) that is made once and then served like any
   * blob, instead of being derived again on every download. No I/O: `stat`, `open` and `read`
   * take the key like any other and answer none until {@link putRendition} has stored it.
   * `variant` is 1 to 32 lowercase letters, digits or '-', starting with a letter or digit.
   */
  readonly renditionKey: (key: string, variant: string) => string
  /** Stores `bytes` as the rendition `variant` of blob `key`, durably (all or nothing); answers its key. */
  readonly putRendition: (key: string, variant: string, bytes: Uint8Array) => Effect.Effect<string, StorageError>
}

export class BlobStore extends Context.Tag("@waybill/core/BlobStore")<BlobStore, BlobStoreShape>() {}
