/**
 * @module @waybill/image-sharp
 *
 * Waybill's `ImageTransform` with sharp: applies a document's saved rotation on download.
 * `ImageSharp.layer` provides it.
 */
export * as ImageSharp from "./ImageSharp.js"
