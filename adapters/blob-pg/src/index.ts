/**
 * @module @waybill/blob-pg
 *
 * Waybill's `BlobStore` on PostgreSQL: content-addressed, 256 KiB chunks, streamed both ways,
 * one transaction per write. `BlobPg.layer(pool)` provides it over a `pg.Pool`.
 */
export * as BlobPg from "./BlobPg.js"
