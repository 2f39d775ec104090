/**
 * @module @waybill/testkit
 *
 * What an adapter author needs to prove an adapter right: the storage conformance suite,
 * record builders, and deterministic entropy. Import it from test files only; it registers
 * vitest suites and so depends on `vitest` and `@effect/vitest` as peers.
 */
export * as Fixtures from "./Fixtures.js"
export * as StorageContract from "./StorageContract.js"
export { storageContract } from "./StorageContract.js"
export * as DocumentStoreContract from "./DocumentStoreContract.js"
export { documentStoreContract } from "./DocumentStoreContract.js"
export * as RateLimiterContract from "./RateLimiterContract.js"
export { rateLimiterContract } from "./RateLimiterContract.js"
export * as ProvisioningStoreContract from "./ProvisioningStoreContract.js"
export { provisioningStoreContract } from "./ProvisioningStoreContract.js"
export * as WebhookStoreContract from "./WebhookStoreContract.js"
export { webhookStoreContract } from "./WebhookStoreContract.js"
export * as TestEntropy from "./TestEntropy.js"
export { sequenceEntropy } from "./TestEntropy.js"
export { entropyContract } from "./EntropyContract.js"
export * as IdempotencyStoreContract from "./IdempotencyStoreContract.js"
export { idempotencyStoreContract } from "./IdempotencyStoreContract.js"
export * as UserStoreContract from "./UserStoreContract.js"
export { userStoreContract } from "./UserStoreContract.js"
export * as BlobStoreContract from "./BlobStoreContract.js"
export { blobStoreContract } from "./BlobStoreContract.js"
export * as ShipmentSearchContract from "./ShipmentSearchContract.js"
export { shipmentSearchContract } from "./ShipmentSearchContract.js"
export * as ActivityStoreContract from "./ActivityStoreContract.js"
export { activityStoreContract } from "./ActivityStoreContract.js"
