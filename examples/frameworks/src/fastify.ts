/**
 * Waybill inside a Fastify app: the code docs/embedding.md shows under "Fastify", quoted from the
 * region below and run by test/fastify.test.ts.
 */
// #region fastify
import Fastify from "fastify"
import type { WaybillHandler } from "@waybill/http"
import { waybillFastify } from "@waybill/http-fastify"

/** The team's Fastify app: its own routes, and the plugin routing `/api/v1/*` and `/ops/v1/*` to Waybill. */
export function fastifyApp(waybill: WaybillHandler) {
  const app = Fastify()
  app.get("/health", async () => "ok")
  app.register(waybillFastify, { waybill }) // at the root: no prefix
  return app
}
// #endregion fastify
