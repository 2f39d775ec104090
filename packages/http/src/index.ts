/**
 * @module @waybill/http
 *
 * The `/api/v1` wire protocol as one Fetch-standard function:
 * `createHandler(layer, options) -> { handler(Request): Promise<Response>, dispose() }`.
 */
export {
  createHandler,
  handle,
  type ConnectionInfo,
  type HandlerOptions,
  type HandlerRequirements,
  type WaybillHandler
} from "./Handler.js"
export { safeUrlForLog } from "./internal/redact.js"
