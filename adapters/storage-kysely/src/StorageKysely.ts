/**
 * @module StorageKysely
 *
 * Every storage port of `@waybill/core` (`ShipmentStore`, `AccountStore`, `EventOutbox`, `IpBlocklist`,
 * `Transactor`, and the others of `StorageServices`) over one host-supplied Kysely instance. The host owns the connection (dialect,
 * pool, WAL, lifetime); Waybill owns only its `waybill_` tables, created by {@link migrate}.
 *
 * Transactions are Kysely controlled transactions kept in a `FiberRef`: inside
 * `Transactor.withTransaction` every store call made by that fiber (and fibers it forks) runs on
 * the transaction, so use cases compose stores freely without passing a handle around. Store
 * methods that write several statements open their own transaction, or join the caller's.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Kysely } from "kysely"
import {
  type AccountStoreShape,
  AccountStoreTag,
  type DocumentStoreShape,
  DocumentStoreTag,
  type EventOutboxShape,
  EventOutboxTag,
  type IpBlocklistShape,
  IpBlocklistTag,
  type PaymentEnablementStoreShape,
  PaymentEnablementStoreTag,
  type ProvisioningStoreShape,
  ProvisioningStoreTag,
  type RateLimiterShape,
  RateLimiterTag,
  type ShipmentStoreShape,
  ShipmentStoreTag,
  type StorageServices,
  type TransactorShape,
  TransactorTag,
  type WebhookStoreShape,
  WebhookStoreTag
} from "./internal/core.js"
import { makeAccountStore } from "./AccountStoreKysely.js"
import { makeDocumentStore } from "./DocumentStoreKysely.js"
import { makeEventOutbox } from "./EventOutboxKysely.js"
import { makeConnection } from "./internal/connection.js"
import { makeIpBlocklist } from "./IpBlocklistKysely.js"
import { makePaymentEnablementStore } from "./PaymentEnablementStoreKysely.js"
import { makeProvisioningStore } from "./ProvisioningStoreKysely.js"
import { makeRateLimiter } from "./RateLimiterKysely.js"
import { makeShipmentStore } from "./ShipmentStoreKysely.js"
import { makeWebhookStore } from "./WebhookStoreKysely.js"

export { migrate, migrateToLatest } from "./Migrations.js"
export type { StorageServices } from "./internal/core.js"

/** The four port implementations over one database, before they are put in a Layer. */
export interface Stores {
  readonly shipments: ShipmentStoreShape
  readonly accounts: AccountStoreShape
  readonly outbox: EventOutboxShape
  readonly transactor: TransactorShape
  readonly ipBlocks: IpBlocklistShape
  readonly webhooks: WebhookStoreShape
  readonly documents: DocumentStoreShape
  readonly rateLimiter: RateLimiterShape
  readonly registrations: ProvisioningStoreShape
  readonly payments: PaymentEnablementStoreShape
}

/**
 * Builds the stores for `database`. Each call gets its own transaction `FiberRef`, so two
 * databases in one program never see each other's transactions.
 */
export const make = (database: Kysely<any>): Effect.Effect<Stores> =>
  Effect.sync(() => {
    const conn = makeConnection(database)
    return {
      shipments: makeShipmentStore(conn),
      accounts: makeAccountStore(conn),
      outbox: makeEventOutbox(conn),
      transactor: { withTransaction: conn.withTransaction },
      ipBlocks: makeIpBlocklist(conn),
      webhooks: makeWebhookStore(conn),
      documents: makeDocumentStore(conn),
      rateLimiter: makeRateLimiter(conn),
      registrations: makeProvisioningStore(conn),
      payments: makePaymentEnablementStore(conn)
    }
  })

/**
 * All four storage ports over `db`, which must already be migrated ({@link migrate}). The host
 * keeps ownership of `db`: the layer never destroys it.
 */
export const layer = (db: Kysely<any>): Layer.Layer<StorageServices> =>
  Layer.effectContext(
    Effect.map(make(db), (stores) =>
      Context.make(ShipmentStoreTag, stores.shipments).pipe(
        Context.add(AccountStoreTag, stores.accounts),
        Context.add(EventOutboxTag, stores.outbox),
        Context.add(TransactorTag, stores.transactor),
        Context.add(IpBlocklistTag, stores.ipBlocks),
        Context.add(WebhookStoreTag, stores.webhooks),
        Context.add(DocumentStoreTag, stores.documents),
        Context.add(RateLimiterTag, stores.rateLimiter),
        Context.add(ProvisioningStoreTag, stores.registrations),
        Context.add(PaymentEnablementStoreTag, stores.payments)
      )
    )
  )
