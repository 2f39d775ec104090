/**
 * The paging parameters of every list route (`?limit=N&starting_after=CURSOR`), read once here
 * so every list refuses the same bad values with the same 400.
 */
import * as Effect from "effect/Effect"
import { Page } from "@waybill/core"

/** `limit` and `starting_after` of the request's query; `InvalidPage` when unusable. */
export const pageQuery = (url: URL): Effect.Effect<Page.Query, Page.InvalidPage> =>
  Page.parseQuery(url.searchParams.get("limit"), url.searchParams.get("starting_after"))
