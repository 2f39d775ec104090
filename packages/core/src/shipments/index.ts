/**
 * @module shipments
 *
 * The only door into `shipments/`: other capability folders and the package entry import from here.
 */
export * as Shipment from "./Shipment.js"
export * as Document from "./Document.js"
export * as Event from "./Event.js"
export * as Lifecycle from "./Lifecycle.js"
export * as Operations from "./Operations.js"
export * as Cancel from "./Cancel.js"
export * as Track from "./Track.js"
export * as Shipments from "./Shipments.js"
export { type DomainEvent, type EventType } from "./Event.js"
export { EventOutbox } from "./EventOutbox.js"
export { ShipmentNotFound } from "./Operations.js"
export {
  type ChargeBreakdown,
  type LegRecord,
  type Place,
  type ShipmentRecord,
  type ShipmentSummary,
  type StopRecord
} from "./Shipment.js"
export { ShipmentStore, type ShipmentSearch, type ShipmentStoreShape } from "./ShipmentStore.js"
export {
  type ContentType,
  type DocumentKind,
  type DocumentRecord,
  isImage,
  type OrderRecord,
  type Rotation,
  ROTATIONS,
  sniffContentType,
  visible,
  type VisibilityFields
} from "./Document.js"
export {
  DocumentStore,
  type ListedDocument,
  type ListedOrder,
  type LookupField,
  type OrderListing,
  type TicketGrant
} from "./DocumentStore.js"
