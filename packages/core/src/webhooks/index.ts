/**
 * @module webhooks
 *
 * The only door into `webhooks/`: other capability folders and the package entry import from here.
 */
export * as WebhookStore from "./WebhookStore.js"
export * as WebhookTransport from "./WebhookTransport.js"
export * as WebhookSignature from "./WebhookSignature.js"
export * as WebhookSchedule from "./WebhookSchedule.js"
export * as Ssrf from "./Ssrf.js"
export * as Webhooks from "./Webhooks.js"
