/**
 * @module @waybill/core
 *
 * Waybill's pure domain: schemas, rules, rating, time, ports (Context tags) and use cases as
 * Effect programs. Depends only on `effect`; adapters provide the ports.
 */
export * as Abuse from "./access/Abuse.js"
export * as Account from "./access/Account.js"
export * as Accounts from "./access/Accounts.js"
export * as Activity from "./access/Activity.js"
export * as Admission from "./access/Admission.js"
export * as ApiKey from "./access/ApiKey.js"
export * as Booking from "./booking/Booking.js"
export * as BusinessEmail from "./provisioning/BusinessEmail.js"
export * as Cancel from "./shipments/Cancel.js"
export * as Catalog from "./booking/Catalog.js"
export * as ClientIp from "./access/ClientIp.js"
export * as Config from "./shared/Config.js"
export * as Credentials from "./access/Credentials.js"
export * as DateInput from "./booking/DateInput.js"
export * as Document from "./shipments/Document.js"
export * as Documents from "./documents/Documents.js"
export * as Eta from "./booking/Eta.js"
export * as Event from "./shipments/Event.js"
export * as Idempotency from "./access/Idempotency.js"
export * as JsonInput from "./shared/JsonInput.js"
export * as Lifecycle from "./shipments/Lifecycle.js"
export * as Look from "./shared/Look.js"
export * as LocalTime from "./geo/LocalTime.js"
export * as Metrics from "./shared/Metrics.js"
export * as Operations from "./shipments/Operations.js"
export * as Page from "./shared/Page.js"
export * as PasswordPolicy from "./access/PasswordPolicy.js"
export * as Provisioning from "./provisioning/Provisioning.js"
export * as Quote from "./booking/Quote.js"
export * as Rating from "./booking/Rating.js"
export * as Registration from "./provisioning/Registration.js"
export * as RateLimits from "./access/RateLimiter.js"
export * as Route from "./geo/Route.js"
export * as Sanitize from "./booking/Sanitize.js"
export * as Sessions from "./access/Sessions.js"
export * as Shipment from "./shipments/Shipment.js"
export * as Shipments from "./shipments/Shipments.js"
export * as Ticket from "./documents/Ticket.js"
export * as Track from "./shipments/Track.js"
export * as Ulid from "./shared/Ulid.js"
export * as User from "./access/User.js"
export * as Users from "./access/Users.js"
export * as Ssrf from "./webhooks/Ssrf.js"
export * as WebhookSchedule from "./webhooks/WebhookSchedule.js"
export * as WebhookSignature from "./webhooks/WebhookSignature.js"
export * as Webhooks from "./webhooks/Webhooks.js"
export { AccountStore, type AccountStoreShape } from "./access/AccountStore.js"
export {
  ActivityStore,
  type ActivityEntry,
  type ActivityFilter,
  type ActivityQuery,
  type ActivityStoreShape,
  type StatusFilter,
  type StatusRange
} from "./access/ActivityStore.js"
export { WaybillConfig, type WaybillConfigShape } from "./shared/Config.js"
export { BlobStore, type BlobStoreShape, type OpenBlob } from "./documents/BlobStore.js"
export {
  DocumentStore,
  type DocumentStoreShape,
  type ListedDocument,
  type ListedOrder,
  type LookupField,
  type OrderListing,
  type OrderQuery,
  type TicketGrant
} from "./shipments/DocumentStore.js"
export { ImageTransform, ImageTransformFailed, type ImageTransformShape } from "./documents/ImageTransform.js"
export { Entropy, type EntropyShape } from "./shared/Entropy.js"
export * from "./shared/Errors.js"
export { EventOutbox, type EventOutboxShape } from "./shipments/EventOutbox.js"
export { Geo, type GeoShape, type ZipLocation } from "./geo/Geo.js"
export {
  IdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyScope,
  type IdempotencyStoreShape,
  type StoredAnswer
} from "./access/IdempotencyStore.js"
export { IpBlocklist, type IpBlock, type IpBlocklistShape } from "./access/IpBlocklist.js"
export * as IpBlocks from "./access/IpBlocklist.js"
export { RateLimiter, type Quota, type RateLimiterShape } from "./access/RateLimiter.js"
export {
  Mailer,
  MailFailed,
  type InviteMessage,
  type MailerShape,
  type MailMessage,
  type PasswordResetMessage,
  type VerificationMessage,
  type WebhookDisabledMessage
} from "./shared/Mailer.js"
export * as Mail from "./shared/Mailer.js"
export { PasswordHasher, type PasswordHasherShape } from "./access/PasswordHasher.js"
export { UserStore, type UserStoreShape } from "./access/UserStore.js"
export {
  InvalidEmail,
  NotAllowed,
  PasswordRejected,
  RecentAuthRequired,
  SignInRefused,
  TokenInvalid,
  UserExists,
  UserNotFound,
  type OneTimeTokenRecord,
  type Role,
  type SessionRecord,
  type TokenPurpose,
  type UserRecord,
  type UserSummary,
  type Viewer
} from "./access/User.js"
export {
  ProvisioningStore,
  type ProvisioningStoreShape,
  type RegistrationRecord
} from "./provisioning/ProvisioningStore.js"
export { KeyRing, type KeyRingShape, type KeySecret, type SecretPurpose } from "./shared/KeyRing.js"
export {
  ShipmentStore,
  type ShipmentChange,
  type ShipmentSearch,
  type ShipmentStoreShape
} from "./shipments/ShipmentStore.js"
export { Transactor, type TransactorShape } from "./shared/Transactor.js"
export * as Webhook from "./webhooks/WebhookStore.js"
export { WebhookStore, type WebhookStoreShape } from "./webhooks/WebhookStore.js"
export {
  WebhookTransport,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookTransportShape
} from "./webhooks/WebhookTransport.js"
export { constantTimeEqual } from "./shared/internal/bytes.js"
