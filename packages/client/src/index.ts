/**
 * `@waybill/client`: a typed client of the Waybill /api/v1 API for Node, Deno, Bun and browsers.
 *
 * ```ts
 * const waybill = new WaybillClient({ baseUrl: "https://waybill.example.com", apiKey })
 * const booked = await waybill.createShipments([shipment])
 * ```
 *
 * The types come from the API's OpenAPI document (`paths`, `components`, `operations`, generated
 * by openapi-typescript); `client.raw` is the openapi-fetch client over them.
 */
export {
  type AccountSetupAction,
  type AccountSetupData,
  type AccountSetupForm,
  type CallOptions,
  type CancelData,
  type CreateShipmentsData,
  type CreateShipmentsRequest,
  type DocumentsData,
  type DocumentsQuery,
  type Download,
  type IdempotentCallOptions,
  type OrderDocument,
  type QuoteData,
  type QuoteQuery,
  type ShipmentInput,
  type TrackData,
  WaybillClient,
  type WaybillClientOptions
} from "./client.js"
export {
  type ErrorEnvelope,
  IdempotencyMessages,
  isWaybillError,
  WaybillApiError,
  type WaybillApiErrorKind,
  type WaybillError,
  WaybillNetworkError
} from "./errors.js"
export { backoffDelay, defaultRetry, type RetryOptions, type Runtime } from "./transport.js"
export type { components, operations, paths } from "./schema.js"
