/**
 * @module ImageSharp
 *
 * Core's `ImageTransform` with sharp (libvips): turns an image by its saved rotation and encodes
 * it again in its own format, so a customer downloads the picture the right way up. JPEG keeps
 * high quality (92); PNG, GIF and TIFF are lossless as far as their formats go. Only the first
 * frame or page of an animated GIF or a multi-page TIFF is kept.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type sharp from "sharp"
import { ImageTransform, ImageTransformFailed, type ImageTransformShape } from "@waybill/core"

/**
 * sharp (and libvips with it) is loaded on the first rotation, not at import: hosts and CLIs
 * that compose this layer but never rotate an image do not pay its start-up cost.
 *
 * libvips' operation cache is turned off: it keeps up to 50 MiB of decoded images to answer a
 * repeated operation on the same input, but Waybill turns each image once and keeps the result
 * (core's renditions), so the cache only held memory: about 55 MiB of RSS after 40 photos.
 */
let loaded: Promise<typeof sharp> | undefined
const load = (): Promise<typeof sharp> =>
  (loaded ??= import("sharp").then((m) => {
    m.default.cache(false)
    return m.default
  }))

const FORMATS = {
  "image/jpeg": (s: sharp.Sharp) => s.jpeg({ quality: 92 }),
  "image/png": (s: sharp.Sharp) => s.png(),
  "image/gif": (s: sharp.Sharp) => s.gif(),
  "image/tiff": (s: sharp.Sharp) => s.tiff()
} as const

/** Decoding limit: refuse images over 100 megapixels (decompression bombs). */
const LIMIT_INPUT_PIXELS = 100_000_000

/** The transform itself, for hosts that compose services by hand. */
export const service: ImageTransformShape = {
  rotate: (bytes, degrees, contentType) =>
    Effect.tryPromise({
      try: async () => {
        const image = (await load())(bytes, { limitInputPixels: LIMIT_INPUT_PIXELS }).rotate(degrees)
        return new Uint8Array(await FORMATS[contentType](image).toBuffer())
      },
      catch: (cause) =>
        new ImageTransformFailed({ message: cause instanceof Error ? cause.message : "image transform failed" })
    })
}

/** `ImageTransform` with sharp. */
export const layer: Layer.Layer<ImageTransform> = Layer.succeed(ImageTransform, service)
