/**
 * @module ImageTransform
 *
 * Applies a document's saved rotation on download (interface 4.3: "saved image rotation is
 * applied"). Image codecs are native code, so they live in an adapter (`@waybill/image-sharp`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ContentType, Rotation } from "../shipments/index.js"

/** The image could not be decoded or encoded. */
export class ImageTransformFailed extends Schema.TaggedError<ImageTransformFailed>()("ImageTransformFailed", {
  message: Schema.String
}) {}

export interface ImageTransformShape {
  /** The image turned clockwise by `degrees`, in the same format. */
  readonly rotate: (
    bytes: Uint8Array,
    degrees: Exclude<Rotation, 0>,
    contentType: Exclude<ContentType, "application/pdf">
  ) => Effect.Effect<Uint8Array, ImageTransformFailed>
}

export class ImageTransform extends Context.Tag("@waybill/core/ImageTransform")<
  ImageTransform,
  ImageTransformShape
>() {}
