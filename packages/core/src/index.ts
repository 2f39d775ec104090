/**
 * @module @waybill/core
 *
 * Waybill's pure domain: schemas, rules, rating, time, ports (Context tags) and use cases as
 * Effect programs. Depends only on `effect`; adapters provide the ports.
 */
export * as Account from "./Account.js"
export * as Accounts from "./Accounts.js"
export * as ApiKey from "./ApiKey.js"
export * as Booking from "./Booking.js"
export * as Catalog from "./Catalog.js"
export * as Config from "./Config.js"
export * as Credentials from "./Credentials.js"
export * as DateInput from "./DateInput.js"
export * as Eta from "./Eta.js"
export * as Event from "./Event.js"
export * as LocalTime from "./LocalTime.js"
export * as Rating from "./Rating.js"
export * as Route from "./Route.js"
export * as Sanitize from "./Sanitize.js"
export * as Shipment from "./Shipment.js"
export * as Ulid from "./Ulid.js"
export { AccountStore, type AccountStoreShape } from "./AccountStore.js"
export { WaybillConfig, type WaybillConfigShape } from "./Config.js"
export { Entropy, type EntropyShape } from "./Entropy.js"
export * from "./Errors.js"
export { EventOutbox, type EventOutboxShape } from "./EventOutbox.js"
export { Geo, type GeoShape, type ZipLocation } from "./Geo.js"
export { KeyRing, type KeyRingShape, type KeySecret, type SecretPurpose } from "./KeyRing.js"
export { ShipmentStore, type ShipmentChange, type ShipmentStoreShape } from "./ShipmentStore.js"
export { Transactor, type TransactorShape } from "./Transactor.js"
