// app/ops/v1/[...path]/route.ts: the operator API, the same route as app/api/v1/[...path]/route.ts
import { handler } from "../../../../src/waybill.js"

export const runtime = "nodejs" // better-sqlite3 and sharp are Node addons
export const dynamic = "force-dynamic" // never cached or prerendered: every request reaches Waybill
export {
  handler as GET,
  handler as HEAD,
  handler as POST,
  handler as PUT,
  handler as PATCH,
  handler as DELETE,
  handler as OPTIONS
}
