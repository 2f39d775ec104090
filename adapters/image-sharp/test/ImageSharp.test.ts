import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import sharp from "sharp"
import { ImageSharp } from "../src/index.js"

const RED = { r: 255, g: 0, b: 0 }
const BLUE = { r: 0, g: 0, b: 255 }

/** 40x20: left half red, right half blue. */
const twoTone = async (format: "png" | "jpeg" | "gif" | "tiff") => {
  const blue = await sharp({ create: { width: 20, height: 20, channels: 3, background: BLUE } })
    .png()
    .toBuffer()
  const image = sharp({ create: { width: 40, height: 20, channels: 3, background: RED } }).composite([
    { input: blue, left: 20, top: 0 }
  ])
  return new Uint8Array(await image.toFormat(format).toBuffer())
}

const pixel = async (bytes: Uint8Array, x: number, y: number) => {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const i = (y * info.width + x) * info.channels
  return {
    width: info.width,
    height: info.height,
    format: (await sharp(bytes).metadata()).format,
    rgb: [data[i], data[i + 1], data[i + 2]]
  }
}

const isRed = (rgb: Array<number | undefined>) => rgb[0]! > 200 && rgb[2]! < 60
const isBlue = (rgb: Array<number | undefined>) => rgb[2]! > 200 && rgb[0]! < 60

describe("ImageSharp.rotate", () => {
  for (const [format, type] of [
    ["png", "image/png"],
    ["jpeg", "image/jpeg"],
    ["gif", "image/gif"],
    ["tiff", "image/tiff"]
  ] as const) {
    it.effect(`${format}: 90, 180 and 270 degrees clockwise, same format`, () =>
      Effect.gen(function* () {
        const input = yield* Effect.promise(() => twoTone(format))
        const r90 = yield* ImageSharp.service.rotate(input, 90, type)
        const top90 = yield* Effect.promise(() => pixel(r90, 10, 2))
        expect([top90.width, top90.height, top90.format]).toEqual([20, 40, format === "jpeg" ? "jpeg" : format])
        expect(isRed(top90.rgb)).toBe(true)
        const r180 = yield* ImageSharp.service.rotate(input, 180, type)
        const left180 = yield* Effect.promise(() => pixel(r180, 2, 10))
        expect([left180.width, left180.height]).toEqual([40, 20])
        expect(isBlue(left180.rgb)).toBe(true)
        const r270 = yield* ImageSharp.service.rotate(input, 270, type)
        const top270 = yield* Effect.promise(() => pixel(r270, 10, 2))
        expect(isBlue(top270.rgb)).toBe(true)
      })
    )
  }

  it.effect("keeps no libvips operation cache once loaded (each image is turned once, then kept by core)", () =>
    Effect.gen(function* () {
      yield* ImageSharp.service.rotate(yield* Effect.promise(() => twoTone("png")), 90, "image/png")
      // The test's own `sharp` import is the same module instance the adapter loaded.
      const cache = sharp.cache()
      expect([cache.memory.max, cache.items.max, cache.files.max]).toEqual([0, 0, 0])
    })
  )

  it.effect("bytes that are not an image fail with ImageTransformFailed", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        ImageSharp.service.rotate(new Uint8Array([0xff, 0xd8, 0xff, 0, 1]), 90, "image/jpeg")
      )
      expect(error._tag).toBe("ImageTransformFailed")
    })
  )
})
