/**
 * Waybill inside an Express app: the code docs/embedding.md shows under "Express", quoted from
 * the region below and run by test/express.test.ts.
 */
// #region express
import express, { type Express } from "express"
import type { WaybillHandler } from "@waybill/http"
import { toNodeListener } from "@waybill/http-node"

/** The team's Express app: its own routes, and Waybill's two trees (mounted with their full paths kept). */
export function expressApp(waybill: WaybillHandler): Express {
  const app = express()
  app.get("/health", (_req, res) => {
    res.type("text/plain").send("ok")
  })
  // No express.json() in front of these: Waybill reads the body itself (req.originalUrl keeps the path).
  app.use(["/api/v1", "/ops/v1"], toNodeListener(waybill))
  return app
}
// #endregion express
