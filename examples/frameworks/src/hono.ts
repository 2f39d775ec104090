/**
 * Waybill inside a Hono app on `@hono/node-server`: the code docs/embedding.md shows under
 * "Hono", quoted from the region below and run by test/hono.test.ts. No bridge: Hono speaks Fetch.
 */
// #region hono
import { getConnInfo } from "@hono/node-server/conninfo"
import { type Context, Hono } from "hono"
import type { WaybillHandler } from "@waybill/http"

/** The team's Hono app: its own routes, and every method under Waybill's two trees. */
export function honoApp(waybill: WaybillHandler) {
  // The socket's address, so IP blocks apply (Waybill's trustedProxies decide X-Forwarded-For).
  const peer = (c: Context) => {
    const address = getConnInfo(c).remote.address
    return address === undefined ? {} : { remoteAddress: address }
  }
  const app = new Hono()
  app.get("/health", (c) => c.text("ok"))
  app.all("/api/v1/*", (c) => waybill.handler(c.req.raw, peer(c)))
  app.all("/ops/v1/*", (c) => waybill.handler(c.req.raw, peer(c)))
  return app
}
// #endregion hono
