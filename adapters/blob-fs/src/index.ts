/**
 * @module @waybill/blob-fs
 *
 * Waybill's `BlobStore` on a local directory: content-addressed, atomic writes, no path
 * traversal. `BlobFs.layer(root)` provides it.
 */
export * as BlobFs from "./BlobFs.js"
