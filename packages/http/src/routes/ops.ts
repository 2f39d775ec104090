/**
 * `/ops/v1`: the operator API (drivers' and dispatchers' tools), kept apart from the customer
 * `/api/v1` routes and guarded by the host's operator token (Bearer, compared in constant time).
 * Customer API keys are never accepted here. Without a configured token the whole tree is 404.
 *
 * - `GET  /ops/v1/shipments/{track_no}`           the shipment, its stops and events
 * - `POST /ops/v1/shipments/{track_no}/{action}`  JSON `{ "driver_id"?, "stop"?, "reason"? }`
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Operations } from "@waybill/core"
import { isJson, mediaType, parseJson, readBody } from "../internal/body.js"
import { storageErrors } from "../internal/errors.js"
import { failure, json, success } from "../internal/respond.js"
import type { Route } from "./Route.js"
import * as OperatorViews from "../views/OperatorViews.js"

const OpsBody = Schema.Struct({
  driver_id: Schema.optional(Schema.String),
  stop: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  reason: Schema.optional(Schema.String)
})

const notFound = {
  ShipmentNotFound: () => Effect.succeed(failure(404, "No shipment has this tracking number.")),
  ...storageErrors
}

const actionErrors = {
  ...notFound,
  TransitionRejected: (e: { readonly code: string; readonly reason: string }) =>
    Effect.succeed(json(409, { data: null, error: { message: e.reason, exception: null, code: e.code } })),
  VersionConflict: () =>
    Effect.succeed(failure(409, "The shipment changed while this request was processed; read it again and retry.")),
  InvalidAction: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message)),
  BodyTooLarge: () => Effect.succeed(failure(413, "The body is too large.")),
  BodyUnreadable: () => Effect.succeed(failure(400, "The body could not be read."))
}

export const opsShowRoute: Route = {
  methods: ["GET"],
  operator: true,
  run: (ctx) =>
    Operations.show(ctx.params[0]!).pipe(
      Effect.map((r) => success(OperatorViews.shipment(r.shipment, r.events))),
      Effect.catchTags(notFound)
    )
}

export const opsActionRoute: Route = {
  methods: ["POST"],
  operator: true,
  run: (ctx) => {
    const action = Schema.decodeUnknownOption(Operations.ActionName)(ctx.params[1])
    if (action._tag === "None") {
      return Effect.succeed(failure(404, `Unknown action; one of: ${Operations.ActionName.literals.join(", ")}.`))
    }
    return Effect.gen(function* () {
      const bytes = yield* readBody(ctx.request, 64 * 1024)
      let raw: unknown = {}
      if (bytes.length > 0) {
        if (!isJson(mediaType(ctx.request))) return failure(415, "Send a JSON body (application/json).")
        const parsed = parseJson(new TextDecoder().decode(bytes))
        if (Either.isLeft(parsed)) return failure(400, parsed.left)
        raw = parsed.right
      }
      const body = Schema.decodeUnknownEither(OpsBody)(raw)
      if (body._tag === "Left")
        return failure(400, 'The body must be {"driver_id"?: string, "stop"?: integer >= 0, "reason"?: string}.')
      const done = yield* Operations.perform(ctx.params[0]!, {
        action: action.value,
        driverId: body.right.driver_id,
        stop: body.right.stop,
        reason: body.right.reason
      })
      return success(OperatorViews.shipment(done.shipment, done.events))
    }).pipe(Effect.catchTags(actionErrors))
  }
}
