/**
 * The one place this adapter reaches into `@waybill/core`, so a change of core's entry shape
 * (which modules are flat, which are namespaces) is absorbed here and nowhere else.
 */
import type { Account, Event, Shipment } from "@waybill/core"
import type { AccountStore, EventOutbox, IpBlocklist, ShipmentStore, Transactor } from "@waybill/core"
import type { RateLimiter } from "@waybill/core"
import type { ProvisioningStore } from "@waybill/core"
import type { Document, DocumentStore } from "@waybill/core"
import type { WebhookStore } from "@waybill/core"
import type { IdempotencyStore } from "@waybill/core"
import type { ActivityStore, UserStore } from "@waybill/core"
import { Provisioning, User } from "@waybill/core"

/** Port tags, their shapes and the errors the adapter raises, under names that do not clash. */
export {
  AccountStore as AccountStoreTag,
  type ActivityEntry,
  ActivityStore as ActivityStoreTag,
  type ActivityStoreShape,
  type AccountStoreShape,
  DocumentStore as DocumentStoreTag,
  type DocumentStoreShape,
  DuplicateKey,
  EventOutbox as EventOutboxTag,
  IdempotencyStore as IdempotencyStoreTag,
  type IdempotencyRecord,
  type IdempotencyStoreShape,
  type EventOutboxShape,
  IpBlocklist as IpBlocklistTag,
  type IpBlocklistShape,
  ProvisioningStore as ProvisioningStoreTag,
  type ProvisioningStoreShape,
  type RegistrationRecord,
  RateLimiter as RateLimiterTag,
  type RateLimiterShape,
  RateLimits,
  Page,
  type ShipmentChange,
  ShipmentStore as ShipmentStoreTag,
  type ShipmentStoreShape,
  StorageError,
  Transactor as TransactorTag,
  UserStore as UserStoreTag,
  type UserStoreShape,
  type OneTimeTokenRecord,
  type SessionRecord,
  type UserRecord,
  type TransactorShape,
  VersionConflict,
  WebhookStore as WebhookStoreTag,
  type WebhookStoreShape
} from "@waybill/core"

/** The services `StorageKysely.layer` provides. */
export type StorageServices =
  | WebhookStore
  | AccountStore
  | EventOutbox
  | IpBlocklist
  | ShipmentStore
  | Transactor
  | DocumentStore
  | RateLimiter
  | ProvisioningStore
  | Provisioning.PaymentEnablementStore
  | IdempotencyStore
  | UserStore
  | ActivityStore

/** The payment enablements store's tag and shape (core keeps them in the `Provisioning` namespace). */
export const PaymentEnablementStoreTag = Provisioning.PaymentEnablementStore
export type PaymentEnablementStoreShape = Provisioning.PaymentEnablementStore["Type"]

/** The comparison key of an e-mail address (core's `User.emailKey`): what `email_key` holds. */
export const emailKey = User.emailKey

/** Record types re-exposed flat; see `@waybill/core`'s `Account`, `Event` and `Shipment` modules. */
export type AccountRecord = Account.AccountRecord
export type ApiKeyRecord = Account.ApiKeyRecord
export type KeyMode = Account.KeyMode
export type DomainEvent = Event.DomainEvent
export type ShipmentRecord = Shipment.ShipmentRecord
export type StopRecord = Shipment.StopRecord
export type LegRecord = Shipment.LegRecord
export type PieceRecord = Shipment.PieceRecord
export type DocumentRecord = Document.DocumentRecord
export type OrderRecord = Document.OrderRecord
