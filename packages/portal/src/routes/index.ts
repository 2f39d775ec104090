/**
 * @module routes
 *
 * The portal's route table: each group's routes (`src/routes/<group>.tsx`), plus the start page.
 * A new group adds its list here.
 */
import * as Effect from "effect/Effect"
import { redirect } from "../internal/answer.js"
import { type Route, viewerRoute } from "../internal/context.js"
import { sessionRoutes } from "./session.js"
import { shipmentRoutes } from "./shipments.js"
import { webhookRoutes } from "./webhooks.js"
import { keysRoutes } from "./keys.js"
import { confirmRoutes } from "./confirm.js"
import { accountRoutes } from "./account.js"

/** `GET /`: the start page is API Access and Activity (a visitor without a session signs in first). */
const start = viewerRoute("GET", "/", (ctx) => Effect.succeed(redirect(ctx.href("/keys"))))

/** Every route of the portal. */
export const routes: ReadonlyArray<Route> = [
  start,
  ...sessionRoutes,
  ...keysRoutes,
  ...confirmRoutes,
  ...accountRoutes,
  ...webhookRoutes,
  ...shipmentRoutes
]
