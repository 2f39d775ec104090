/**
 * `GET /api/v1/utilities/quote/?origin=&destination=&weight=[&key=]`: list rates without a key,
 * the account's negotiated rates with one (interface 4.6). See docs/api/quote.md.
 */
import * as Effect from "effect/Effect"
import { Quote } from "@waybill/core"
import { admissionErrors, credentialErrors, Messages, storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import { withHeaders } from "../Raw.js"
import type { Route } from "./Route.js"

export const quoteRoute: Route = {
  methods: ["GET"],
  run: ({ request, url, client }) => {
    // The URL may hold a key, and a quote is only true at the instant it was made.
    const noStore = { "cache-control": "no-store" }
    return Quote.quote({
      client,
      authorization: request.headers.get("authorization"),
      query: (name) => url.searchParams.getAll(name)
    }).pipe(
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
