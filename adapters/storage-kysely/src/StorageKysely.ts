/**
 * @module StorageKysely
 *
 * Every storage port of `@waybill/core` (`ShipmentStore`, `AccountStore`, `EventOutbox`,
 * `IpBlocklist`, `Transactor`, `IdempotencyStore`, `UserStore`, `ActivityStore`, ...) over one database the host hands over: a better-sqlite3
 * handle ({@link sqlite}) or a `pg` pool ({@link postgres}), or an engine made from either
 * ({@link layer}). The host owns the handle or pool (options, WAL, lifetime); Waybill owns only
 * its `waybill_` tables, created by {@link migrate}.
 *
 * The stores build their queries with Kysely and run them through the engine (`Engine.ts`).
 * The fiber's open transaction is kept in a `FiberRef`: inside `Transactor.withTransaction`
 * every store call made by that fiber (and fibers it forks) runs on the transaction, so use cases
 * compose stores freely without passing a handle around. Store methods that write several
 * statements open their own transaction, or join the caller's.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type AccountStoreShape,
  AccountStoreTag,
  type ActivityStoreShape,
  ActivityStoreTag,
  type DocumentStoreShape,
  DocumentStoreTag,
  type EventOutboxShape,
  EventOutboxTag,
  type IdempotencyStoreShape,
  IdempotencyStoreTag,
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
  type UserStoreShape,
  UserStoreTag,
  type WebhookStoreShape,
  WebhookStoreTag
} from "./internal/core.js"
import { makeAccountStore } from "./AccountStoreKysely.js"
import { makeActivityStore } from "./ActivityStoreKysely.js"
import type { EngineOptions, StorageEngine } from "./Engine.js"
import { type PgPool, postgresEngine } from "./PostgresEngine.js"
import { type SqliteEngineOptions, type SqliteHandle, sqliteEngine } from "./SqliteEngine.js"
import { makeDocumentStore } from "./DocumentStoreKysely.js"
import { makeEventOutbox } from "./EventOutboxKysely.js"
import { makeConnection } from "./internal/connection.js"
import { makeIdempotencyStore } from "./IdempotencyStoreKysely.js"
import { makeIpBlocklist } from "./IpBlocklistKysely.js"
import { makePaymentEnablementStore } from "./PaymentEnablementStoreKysely.js"
import { makeProvisioningStore } from "./ProvisioningStoreKysely.js"
import { makeRateLimiter } from "./RateLimiterKysely.js"
import { makeShipmentStore } from "./ShipmentStoreKysely.js"
import { makeUserStore } from "./UserStoreKysely.js"
import { makeWebhookStore } from "./WebhookStoreKysely.js"

export { migrate, migrateToLatest } from "./Migrations.js"
export type { StorageServices } from "./internal/core.js"

/** The port implementations over one database, before they are put in a Layer. */
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
  readonly idempotency: IdempotencyStoreShape
  readonly users: UserStoreShape
  readonly activity: ActivityStoreShape
}

/**
 * Builds the stores over `engine`. Each call gets its own transaction `FiberRef`, so two
 * databases in one program never see each other's transactions.
 */
export const make = (engine: StorageEngine): Effect.Effect<Stores> =>
  Effect.sync(() => {
    const conn = makeConnection(engine)
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
      payments: makePaymentEnablementStore(conn),
      idempotency: makeIdempotencyStore(conn),
      users: makeUserStore(conn),
      activity: makeActivityStore(conn)
    }
  })

/**
 * Every storage port over `engine`, whose database must already be migrated ({@link migrate}).
 * The host keeps ownership of the engine: the layer never closes it.
 */
export const layer = (engine: StorageEngine): Layer.Layer<StorageServices> =>
  Layer.effectContext(
    Effect.map(make(engine), (stores) =>
      Context.make(ShipmentStoreTag, stores.shipments).pipe(
        Context.add(AccountStoreTag, stores.accounts),
        Context.add(EventOutboxTag, stores.outbox),
        Context.add(TransactorTag, stores.transactor),
        Context.add(IpBlocklistTag, stores.ipBlocks),
        Context.add(WebhookStoreTag, stores.webhooks),
        Context.add(DocumentStoreTag, stores.documents),
        Context.add(RateLimiterTag, stores.rateLimiter),
        Context.add(ProvisioningStoreTag, stores.registrations),
        Context.add(PaymentEnablementStoreTag, stores.payments),
        Context.add(IdempotencyStoreTag, stores.idempotency),
        Context.add(UserStoreTag, stores.users),
        Context.add(ActivityStoreTag, stores.activity)
      )
    )
  )

/**
 * Every storage port over a better-sqlite3 handle (`sqliteEngine(handle)`: synchronous
 * statements, group commit). Migrate first: `migrate(sqliteEngine(handle))`.
 */
export const sqlite = (handle: SqliteHandle, options?: SqliteEngineOptions): Layer.Layer<StorageServices> =>
  layer(sqliteEngine(handle, options))

/**
 * Every storage port over a `pg` pool (`postgresEngine(pool)`: plain transactions, one pooled
 * client each). Migrate first: `migrate(postgresEngine(pool))`.
 */
export const postgres = (pool: PgPool, options?: EngineOptions): Layer.Layer<StorageServices> =>
  layer(postgresEngine(pool, options))
