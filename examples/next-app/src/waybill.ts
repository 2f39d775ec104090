/**
 * The app's one Waybill, built on the first request and kept for the process: the example host's
 * composition (`openDatabase`, `waybillLayer`, `createHandler`) over the SQLite file named by
 * `WAYBILL_DB`. Building it lazily keeps `next build`, which loads route modules, away from the
 * database.
 *
 * `WAYBILL_BASE_URL` is the public origin for the links Waybill returns (document downloads):
 * the URL of the `Request` Next hands a route is not the one the client used (`next start`
 * names the host `localhost` whatever the client asked for), so links must not be built from it.
 */
import * as Redacted from "effect/Redacted"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { openDatabase, waybillLayer } from "@waybill/example-http-host/src/host.js"

let waybill: Promise<WaybillHandler> | undefined

const open = async (): Promise<WaybillHandler> => {
  const dbFile = process.env["WAYBILL_DB"] ?? ".waybill/next.db"
  const operatorToken = process.env["WAYBILL_OPERATOR_TOKEN"]
  const baseUrl = process.env["WAYBILL_BASE_URL"]
  const database = await openDatabase(dbFile, { backgroundCheckpoints: true })
  return createHandler(waybillLayer(database.engine, { dbFile }), {
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(operatorToken === undefined ? {} : { operatorToken: Redacted.make(operatorToken) }),
    // Development only: documents over plain HTTP (next start serves HTTP; production sits behind TLS).
    ...(process.env["WAYBILL_ALLOW_INSECURE_HTTP"] === "1" ? { allowInsecureHttp: true } : {})
  })
}

/** Every method of the route modules: Waybill's Fetch handler, with the Request Next hands over. */
export const handler = async (request: Request): Promise<Response> => {
  waybill ??= open()
  return (await waybill).handler(request)
}
