/**
 * `POST /api/v1/order/json/`: create shipments (interface 4.1), idempotent with an
 * `Idempotency-Key` (internal/idempotency.ts).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { BadRequest, Booking, Credentials, WaybillConfig } from "@waybill/core"
import { type BodyTooLarge, type BodyUnreadable, isJson, mediaType, parseJson, readBody } from "../internal/body.js"
import {
  admissionErrors,
  badRequestErrors,
  bodyTooLarge,
  credentialErrors,
  Messages,
  storageErrors
} from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import type { Reply, WaybillRequest } from "../Raw.js"
import type { Route, RouteContext } from "./Route.js"
import { keyed } from "../internal/access.js"
import { idempotent } from "../internal/idempotency.js"

class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType")<{ readonly message: string }> {}

const decoder = new TextDecoder("utf-8", { fatal: true })

/** This route's own refusals (the OpenAPI document lists them). */
export const BookingMessages = {
  unsupportedMediaType: "Send the shipments as application/json, or as a urlencoded form field named data.",
  notUtf8: "The body is not valid UTF-8.",
  formDataMissing: "The form field data is missing.",
  formDataRepeated: "The form field data was given more than once.",
  bodyUnreadable: "The body could not be read."
} as const

/** Body of create shipments: JSON, or a urlencoded form whose field `data` holds the JSON. */
const bookingBody = (
  request: WaybillRequest,
  limit: number
): Effect.Effect<
  { readonly bytes: Uint8Array; readonly value: unknown },
  UnsupportedMediaType | BadRequest | BodyTooLarge | BodyUnreadable
> => {
  const type = mediaType(request)
  const jsonBody = isJson(type)
  if (!jsonBody && type !== "application/x-www-form-urlencoded") {
    return Exit.fail(new UnsupportedMediaType({ message: BookingMessages.unsupportedMediaType }))
  }
  return Effect.flatMap(
    readBody(request, limit),
    (bytes): Effect.Effect<{ readonly bytes: Uint8Array; readonly value: unknown }, BadRequest> => {
      let source: string
      try {
        source = decoder.decode(bytes)
      } catch {
        return Exit.fail(new BadRequest({ message: BookingMessages.notUtf8 }))
      }
      if (!jsonBody) {
        const values = new URLSearchParams(source).getAll("data")
        if (values.length !== 1) {
          return Exit.fail(
            new BadRequest({
              message: values.length === 0 ? BookingMessages.formDataMissing : BookingMessages.formDataRepeated
            })
          )
        }
        source = values[0]!
      }
      const value = parseJson(source, jsonBody ? "The body" : "The form field data")
      // The bytes too: an `Idempotency-Key` request is fingerprinted by them.
      return Either.isLeft(value)
        ? Exit.fail(new BadRequest({ message: value.left }))
        : Exit.succeed({ bytes, value: value.right })
    }
  )
}

/** `data` of a parsed body, where `data.token` / `data.key` may hold the key; `{}` for any other shape. */
const bodyData = (body: unknown): Record<string, unknown> => {
  const data = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["data"] : undefined
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
}

/** Interface 5: the header, then the body's data.token, then data.key. */
const admitted = (ctx: RouteContext, maxBodyBytes: number) =>
  keyed(ctx, {
    read: () => bookingBody(ctx.request, maxBodyBytes),
    candidates: (body) => Credentials.bookingPlaces(bodyData(body.value))
  })

type Failure =
  | Effect.Effect.Error<ReturnType<typeof admitted>>
  | Effect.Effect.Error<ReturnType<typeof Booking.createShipments>>

/** The route's error table: every failure as the interface's answer. */
const answer = <R>(self: Effect.Effect<Reply, Failure, R>): Effect.Effect<Reply, never, R> =>
  Effect.catchTags(self, {
    IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked)),
    UnsupportedMediaType: (e) => Effect.succeed(failure(415, e.message)),
    BodyTooLarge: (e) => Effect.succeed(failure(413, bodyTooLarge(e.limit))),
    BodyUnreadable: () => Effect.succeed(failure(400, BookingMessages.bodyUnreadable)),
    ValidationFailed: (e) => Effect.succeed(failure(400, e.problems.join("; "))),
    ...credentialErrors,
    ...admissionErrors,
    ...badRequestErrors,
    ...storageErrors
  })

export const createShipmentsRoute: Route = {
  methods: ["POST"],
  run: (ctx) =>
    answer(
      Effect.flatMap(WaybillConfig, (config) =>
        Effect.flatMap(admitted(ctx, config.booking.maxBodyBytes), ({ input, principal }) => {
          const book = Effect.map(Booking.createShipments({ principal, body: input.value }), (data) => success(data))
          return idempotent(ctx, principal, input.bytes, book, answer)
        })
      )
    )
}
