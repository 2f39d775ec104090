/**
 * Reading request bodies with a hard size limit. The declared Content-Length is checked first
 * (cheap rejection), then the stream is counted as it arrives, so a lying or absent length
 * cannot make the server buffer more than the limit. A body the server bridge already read
 * (`WaybillRequest.bodyBytes`) goes through the same two checks.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { JsonInput } from "@waybill/core"
import type { WaybillRequest } from "../Raw.js"

export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limit: number }> {}
export class BodyUnreadable extends Data.TaggedError("BodyUnreadable")<{ readonly cause: unknown }> {}

/**
 * The whole body, at most `limit` bytes, as a fresh `Uint8Array` the caller owns. A body the
 * bridge already read is answered at once (an `Exit`: no runtime step); a stream is read.
 */
export const readBody = (
  request: WaybillRequest,
  limit: number
): Effect.Effect<Uint8Array, BodyTooLarge | BodyUnreadable> => {
  const declared = request.headers.get("content-length")
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
    return Exit.fail(new BodyTooLarge({ limit }))
  }
  const buffered = request.bodyBytes
  if (buffered !== undefined) {
    // A copy: the bridge's bytes may be a Buffer view into a shared pool.
    return buffered.byteLength > limit ? Exit.fail(new BodyTooLarge({ limit })) : Exit.succeed(new Uint8Array(buffered))
  }
  const body = request.body
  if (body === null) return Exit.succeed(new Uint8Array(0))
  return Effect.flatMap(
    Effect.tryPromise({
      try: async () => {
        const reader = body.getReader()
        const chunks: Array<Uint8Array> = []
        let size = 0
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return { chunks, size }
          size += value.byteLength
          if (size > limit) {
            await reader.cancel().catch(() => undefined)
            return undefined
          }
          chunks.push(value)
        }
      },
      catch: (cause) => new BodyUnreadable({ cause })
    }),
    (read) => {
      if (read === undefined) return Exit.fail(new BodyTooLarge({ limit }))
      const out = new Uint8Array(read.size)
      let offset = 0
      for (const c of read.chunks) {
        out.set(c, offset)
        offset += c.byteLength
      }
      return Exit.succeed(out)
    }
  )
}

/** The media type without parameters, lowercased (`application/json`). */
export const mediaType = (request: WaybillRequest): string =>
  (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase()

/** Whether a media type is JSON (`application/json` or any `+json` suffix). */
export const isJson = (type: string): boolean => type === "application/json" || type.endsWith("+json")

/**
 * Every JSON body of every route enters here: parsed with core's depth guard, which refuses a
 * text nested deeper than `JsonInput.MAX_DEPTH` before `JSON.parse` builds anything (deep
 * values crash whatever walks them recursively later: formatters, `String()`, loggers). Left is
 * the 400 message, naming the input as `what` ("The body", "The form field data").
 */
export const parseJson = (text: string, what = "The body"): Either.Either<unknown, string> =>
  Either.mapLeft(JsonInput.parse(text), (e) =>
    e._tag === "TooDeep" ? JsonInput.tooDeepMessage(what, e.maxDepth) : `${what} is not valid JSON.`
  )
