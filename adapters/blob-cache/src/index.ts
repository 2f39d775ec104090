/**
 * @module @waybill/blob-cache
 *
 * A `BlobStore` in front of another that keeps small blobs in memory once they have been read.
 */
export * as BlobCache from "./BlobCache.js"
