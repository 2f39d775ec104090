/**
 * `GET /api/v1/order/cancel/json/?id=&key=`: cancel a shipment (interface 4.4, 7.4), idempotent
 * with an `Idempotency-Key` (internal/idempotency.ts): a GET, but one that changes something, so
 * a retry with the key replays the first answer instead of "The order is already canceled.".
 */
import * as Effect from "effect/Effect"
import { Cancel, Credentials } from "@waybill/core"
import { admissionErrors, credentialErrors, storageErrors, Messages } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import { type Reply, withHeaders } from "../Raw.js"
import { keyed, queryOf } from "../internal/access.js"
import { idempotent } from "../internal/idempotency.js"
import type { Route, RouteContext } from "./Route.js"
import { paramsOf } from "../internal/params.js"
import { CancelParams } from "../openapi/wire.js"

// A key in the URL is a secret in a URL: never let a cache keep the answer.
const noStore = { "cache-control": "no-store" }
const NO_BODY = new Uint8Array(0)

const admitted = (ctx: RouteContext) =>
  keyed(ctx, {
    read: () => Effect.void,
    candidates: () => Credentials.queryKeyPlaces(queryOf(ctx))
  })

type Failure = Effect.Effect.Error<ReturnType<typeof admitted>> | Effect.Effect.Error<ReturnType<typeof Cancel.cancel>>

/** The route's error table: every failure as one of the interface's answers, never cached. */
const answer = <R>(self: Effect.Effect<Reply, Failure, R>): Effect.Effect<Reply, never, R> =>
  self.pipe(
    Effect.catchTags({
      IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked, noStore)),
      InvalidTrackingNumber: () => Effect.succeed(failure(400, Messages.invalidTrackingNumber, noStore)),
      TransitionRejected: (e) =>
        Effect.succeed(
          failure(409, e.code === "already-canceled" ? Messages.alreadyCanceled : Messages.notCancelable, noStore)
        ),
      // Interface 7.4 allows six messages only: a provider failure is "cannot be canceled" (502).
      CancelProviderFailed: (e) =>
        Effect.logWarning("cancel provider failed", e.message).pipe(
          Effect.as(failure(502, Messages.notCancelable, noStore))
        ),
      VersionConflict: () => Effect.succeed(failure(409, Messages.notCancelable, noStore)),
      ...credentialErrors,
      // A key given twice is refused like any unusable key, in the interface's own words.
      InvalidCredential: () =>
        Effect.succeed(
          failure(401, Messages.accessDenied, {
            ...noStore,
            "www-authenticate": 'Bearer realm="waybill", error="invalid_token"'
          })
        ),
      ...admissionErrors,
      ...storageErrors
    }),
    Effect.map((reply) => withHeaders(reply, noStore))
  )

/** The cancel's answer, or the failures `answer` maps. */
const cancelAnswer = Effect.fnUntraced(function* (ctx: RouteContext) {
  const { principal } = yield* admitted(ctx)
  const cancel = Effect.map(
    Cancel.cancel({ client: ctx.client, principal, id: paramsOf(CancelParams, ctx.url)("id") }),
    (payload) => success(payload, 200, noStore)
  )
  return yield* idempotent(ctx, principal, NO_BODY, cancel, answer)
})

export const cancelRoute: Route = {
  methods: ["GET"],
  run: (ctx) => answer(cancelAnswer(ctx))
}
