/**
 * `GET /api/v1/utilities/quote/?origin=&destination=&weight=[&key=]`: list rates without a key,
 * the account's negotiated rates with one (interface 4.6). See docs/api/quote.md.
 */
import * as Effect from "effect/Effect"
import { Credentials, Quote } from "@waybill/core"
import { admissionErrors, credentialErrors, Messages, storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import { withHeaders } from "../Raw.js"
import { optionallyKeyed, queryOf } from "../internal/access.js"
import type { Route } from "./Route.js"

export const quoteRoute: Route = {
  methods: ["GET"],
  run: (ctx) => {
    // The URL may hold a key, and a quote is only true at the instant it was made.
    const noStore = { "cache-control": "no-store" }
    return optionallyKeyed(ctx, {
      read: () => Effect.void,
      candidates: () => Credentials.queryKeyPlaces(queryOf(ctx))
    }).pipe(
      // Core asks for the names itself; test/openapi.test.ts pins them to the document's QuoteParams.
      Effect.flatMap(({ principal }) =>
        Quote.quote({ client: ctx.client, principal, query: (name) => ctx.url.searchParams.getAll(name) })
      ),
      Effect.map((data) => success(data, 200, noStore)),
      Effect.catchTags({
        IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked)),
        ValidationFailed: (e) => Effect.succeed(failure(400, e.problems.join("; "))),
        ...credentialErrors,
        ...admissionErrors,
        ...storageErrors
      }),
      Effect.map((reply) => withHeaders(reply, noStore))
    )
  }
}
