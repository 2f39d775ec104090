/**
 * @module @waybill/http
 *
 * The `/api/v1` wire protocol as one Fetch-standard function:
 * `createHandler(layer, options) -> { handler(Request): Promise<Response>, handleRaw, dispose() }`.
 * `handleRaw(WaybillRequest): Promise<Reply>` gives the same answers without Fetch objects, for
 * server bridges such as `@waybill/http-node`.
 */
export {
  createHandler,
  handle,
  handleReply,
  rawHandlerOf,
  type ConnectionInfo,
  type HandlerOptions,
  type HandlerRequirements,
  type MetricsPage,
  parseTraceparent,
  type RawHandler,
  type ReadinessCheck,
  type WaybillHandler
} from "./Handler.js"
export * as ActivityRecording from "./ActivityRecorder.js"
export {
  ActivityRecorder,
  type ActivityRecorderOptions,
  type ActivityRecorderShape,
  type RecordedCall
} from "./ActivityRecorder.js"
export { RawHeaders, type Reply, type ReplyHeaders, toResponse, type WaybillRequest } from "./Raw.js"
export { safeUrlForLog } from "./internal/redact.js"
export * as OperatorViews from "./views/OperatorViews.js"
export { type Json, openApiDocument, type OpenApiDocument } from "./openapi/document.js"
export * as Wire from "./openapi/wire.js"
