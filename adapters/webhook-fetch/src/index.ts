/**
 * @module @waybill/webhook-fetch
 *
 * Waybill's `WebhookTransport` over HTTPS with an SSRF guard. Typical host wiring:
 *
 * ```ts
 * const transport = WebhookFetch.layer({ allowPrivate: [], ca: [] })
 * Effect.runFork(Webhooks.runDispatcher().pipe(Effect.provide(Layer.mergeAll(storage, transport, keyRing, entropy))))
 * ```
 */
export * as WebhookFetch from "./WebhookFetch.js"
