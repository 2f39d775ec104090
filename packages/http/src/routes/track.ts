/**
 * `GET /api/v1/utilities/track/?idx=[&key=]`: where a shipment stands, at ZIP precision without
 * the owner's key, precisely with it (interface 4.6). Unknown and malformed tracking numbers get
 * one uniform `200 No records found.` envelope, like the documents endpoint (7.2). See
 * docs/api/track.md.
 */
import * as Effect from "effect/Effect"
import { Credentials, Track } from "@waybill/core"
import { admissionErrors, credentialErrors, Messages, storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import { withHeaders } from "../Raw.js"
import { optionallyKeyed, queryOf } from "../internal/access.js"
import type { Route } from "./Route.js"
import { paramsOf } from "../internal/params.js"
import { TrackParams } from "../openapi/wire.js"

const NO_STORE = { "cache-control": "no-store" }

export const trackRoute: Route = {
  methods: ["GET"],
  run: (ctx) =>
    optionallyKeyed(ctx, {
      read: () => Effect.void,
      candidates: () => Credentials.queryKeyPlaces(queryOf(ctx))
    }).pipe(
      Effect.flatMap(({ principal }) =>
        Track.track({ client: ctx.client, principal, idx: paramsOf(TrackParams, ctx.url)("idx") })
      ),
      Effect.map((view) => success(view)),
      Effect.catchTags({
        IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked)),
        TrackingNotFound: () => Effect.succeed(failure(200, Messages.noRecords)),
        ...credentialErrors,
        ...admissionErrors,
        ...storageErrors
      }),
      // A shipment's status changes, and the URL may hold a key: never cache.
      Effect.map((reply) => withHeaders(reply, NO_STORE))
    )
}
