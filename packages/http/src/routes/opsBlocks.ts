/**
 * `/ops/v1/blocks/`: the IP blocks in force, the list `ip list` prints, guarded by the operator
 * token like the rest of `/ops/v1`.
 *
 * - `GET /ops/v1/blocks/?limit=1..100&starting_after=CURSOR`   a page of blocks, newest first:
 *   `{ data: [{ ip, until, reason, strikes, created_at }], has_more, next_starting_after }`
 */
import * as Effect from "effect/Effect"
import { IpBlocks } from "@waybill/core"
import { pageErrors, storageErrors } from "../internal/errors.js"
import { pageQuery } from "../internal/paging.js"
import { success } from "../internal/respond.js"
import type { Route } from "./Route.js"
import * as OperatorViews from "../views/OperatorViews.js"

/** `/ops/v1/blocks/` */
export const opsBlocksRoute: Route = {
  methods: ["GET"],
  operator: true,
  run: (ctx) =>
    Effect.flatMap(pageQuery(ctx.url), IpBlocks.active).pipe(
      Effect.map((page) => success(OperatorViews.page(page, OperatorViews.ipBlock))),
      Effect.catchTags({ ...pageErrors, ...storageErrors })
    )
}
