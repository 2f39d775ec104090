/**
 * @module WebhookStoreKysely
 *
 * `WebhookStore` over Kysely: endpoints with a subscription row per selected event type (the
 * lookup the outbox makes for every appended event), the delivery queue, and the delivery log.
 * A claim is a conditional `UPDATE` per candidate that only matches the row as the scan saw it
 * (pending, due, unleased, same attempt count), so only one dispatcher can win it and a scan that
 * went stale (another host sent that attempt and scheduled a retry meanwhile) wins nothing. On
 * PostgreSQL the scan itself runs in the claim's transaction with `FOR UPDATE OF d SKIP LOCKED`:
 * hosts claiming at once skip each other's candidates instead of queueing behind them.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ExpressionBuilder, type Insertable, type Kysely, type Selectable, sql } from "kysely"
import type { Connection, Statement } from "./internal/connection.js"
import { Page, type StorageError, type WebhookStoreShape } from "./internal/core.js"
import { keyset } from "./internal/paging.js"
import type { Webhook } from "@waybill/core"
import type {
  EventsTable,
  WaybillDatabase,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable
} from "./Tables.js"

type EndpointRecord = Webhook.EndpointRecord
type DeliveryRecord = Webhook.DeliveryRecord
type AttemptRecord = Webhook.AttemptRecord

const num = (v: number | string | bigint): number => Number(v)
const numOrNull = (v: number | string | bigint | null): number | null => (v === null ? null : Number(v))

const endpointRow = (e: EndpointRecord): Insertable<WebhookEndpointsTable> => ({
  id: e.id,
  customer_no: e.customerNo,
  url: e.url,
  event_types: e.eventTypes.join(","),
  secret: e.secret,
  previous_secret: e.previousSecret,
  previous_secret_until: e.previousSecretUntil,
  enabled: e.enabled ? 1 : 0,
  disabled_reason: e.disabledReason,
  failing_since: e.failingSince,
  created_at: e.createdAt,
  updated_at: e.updatedAt
})

const toEndpoint = (r: Selectable<WebhookEndpointsTable>): EndpointRecord => ({
  id: r.id,
  customerNo: r.customer_no,
  url: r.url,
  eventTypes: r.event_types === "" ? [] : (r.event_types.split(",") as Array<EndpointRecord["eventTypes"][number]>),
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretUntil: numOrNull(r.previous_secret_until),
  enabled: num(r.enabled) !== 0,
  disabledReason: r.disabled_reason,
  failingSince: numOrNull(r.failing_since),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at)
})

const toDelivery = (r: Selectable<WebhookDeliveriesTable>): DeliveryRecord => ({
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  trackNo: r.track_no,
  sequence: num(r.sequence),
  status: r.status as DeliveryRecord["status"],
  attempts: num(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  leaseOwner: r.lease_owner,
  leaseUntil: num(r.lease_until),
  lastStatus: numOrNull(r.last_status),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at)
})

const toAttempt = (r: Selectable<WebhookAttemptsTable>): AttemptRecord => ({
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  attempt: num(r.attempt),
  at: num(r.at),
  status: numOrNull(r.status),
  ok: num(r.ok) !== 0,
  durationMs: num(r.duration_ms),
  response: r.response
})

const toStoredEvent = (r: Selectable<EventsTable>): Webhook.StoredEvent => ({
  id: r.id,
  type: r.type as Webhook.StoredEvent["type"],
  customerNo: r.customer_no,
  trackNo: r.track_no,
  sequence: num(r.sequence),
  livemode: num(r.livemode) !== 0,
  occurredAt: num(r.occurred_at),
  dataJson: r.data
})

type Db = Kysely<WaybillDatabase>

/** The columns of a new delivery row, in the order every delivery insert selects them. */
const DELIVERY_COLUMNS = [
  "endpoint_id",
  "event_id",
  "track_no",
  "sequence",
  "status",
  "attempts",
  "next_attempt_at",
  "lease_owner",
  "lease_until",
  "last_status",
  "created_at",
  "updated_at",
  "claimable"
] as const

/** The state columns of a new pending delivery due at `now`, in `DELIVERY_COLUMNS` order after the first four. */
const pendingState = <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>, now: number) =>
  [
    eb.val("pending").as("status"),
    eb.val(0).as("attempts"),
    eb.val(now).as("next_attempt_at"),
    sql<null>`null`.as("lease_owner"),
    eb.val(0).as("lease_until"),
    sql<null>`null`.as("last_status"),
    eb.val(now).as("created_at"),
    eb.val(now).as("updated_at")
  ] as const

/**
 * A new pending delivery's `claimable` when its statement settles the endpoint's deliveries
 * afterwards ({@link settleClaimable}): 0, so nothing is claimable out of order in between.
 */
const notYetClaimable = <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>) => eb.lit(0).as("claimable")

/** Which pending deliveries a settle looks at: an endpoint's, an event's shipment's, or all. */
type SettleScope =
  | { readonly endpointId?: undefined; readonly eventId?: undefined }
  | { readonly endpointId: string; readonly eventId?: undefined }
  | { readonly endpointId: string; readonly eventId: string }
  | { readonly endpointId?: undefined; readonly eventId: string }

const inScope = (eb: ExpressionBuilder<WaybillDatabase, "waybill_webhook_deliveries">, scope: SettleScope) => {
  const terms = [eb("waybill_webhook_deliveries.status", "=", sql.lit("pending"))]
  if (scope.endpointId !== undefined) terms.push(eb("waybill_webhook_deliveries.endpoint_id", "=", scope.endpointId))
  if (scope.eventId !== undefined) {
    const eventId = scope.eventId
    terms.push(
      eb(
        "waybill_webhook_deliveries.track_no",
        "=",
        eb.selectFrom("waybill_events").select("track_no").where("id", "=", eventId)
      )
    )
    if (scope.endpointId === undefined)
      terms.push(
        eb(
          "waybill_webhook_deliveries.endpoint_id",
          "in",
          eb.selectFrom("waybill_webhook_deliveries as x").select("x.endpoint_id").where("x.event_id", "=", eventId)
        )
      )
  }
  return eb.and(terms)
}

/**
 * Marks claimable the pending deliveries of `scope` that should be: each shipment's earliest
 * pending one to an enabled endpoint. For the writes that can put a delivery in front of others
 * or bring an endpoint back (enqueue, requeue, recover, enabling), and for the prune's sweep;
 * the dispatcher's own path keeps the flag as it goes (fan-out, outcome). It only ever sets the
 * flag: one left on a delivery that is no longer first costs a claim a skipped row (the claim
 * still checks the order), never a wrong send.
 */
const settleClaimable = (c: Db, scope: SettleScope) =>
  c
    .updateTable("waybill_webhook_deliveries")
    .set({ claimable: sql.lit(1) })
    .where((eb) => inScope(eb, scope))
    .where("claimable", "=", sql.lit(0))
    .where(({ exists, not, selectFrom }) =>
      not(
        exists(
          selectFrom("waybill_webhook_deliveries as p")
            .select(sql.lit(1).as("one"))
            .whereRef("p.endpoint_id", "=", "waybill_webhook_deliveries.endpoint_id")
            .whereRef("p.track_no", "=", "waybill_webhook_deliveries.track_no")
            .where("p.status", "=", sql.lit("pending"))
            .whereRef("p.sequence", "<", "waybill_webhook_deliveries.sequence")
        )
      )
    )
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom("waybill_webhook_endpoints as e")
          .select(sql.lit(1).as("one"))
          .whereRef("e.id", "=", "waybill_webhook_deliveries.endpoint_id")
          .where("e.enabled", "=", sql.lit(1))
      )
    )

/**
 * PostgreSQL, before a settle: share-locks the scope's pending deliveries, so an outcome being
 * recorded for one of them meanwhile is waited for and then seen (that outcome makes the next
 * delivery claimable, but cannot see one this transaction is queueing). Not inside the settle's
 * own statement: rows a statement updates are invisible to its own locking reads.
 */
const lockScope = (c: Db, scope: SettleScope) =>
  c
    .selectFrom("waybill_webhook_deliveries")
    .select(sql.lit(1).as("one"))
    .where((eb) => inScope(eb, scope))
    .forShare()

/**
 * Stored events joined to the subscriptions that select them, shaped as new pending delivery
 * rows due at `now`: what requeue and recover insert, each narrowed by its own `where`.
 */
const newDeliveries = (c: Db, now: number) =>
  c
    .selectFrom("waybill_events as ev")
    .innerJoin("waybill_webhook_subscriptions as s", (j) =>
      j.onRef("s.customer_no", "=", "ev.customer_no").onRef("s.event_type", "=", "ev.type")
    )
    .select((eb) => [
      "s.endpoint_id",
      "ev.id",
      "ev.track_no",
      "ev.sequence",
      ...pendingState(eb, now),
      notYetClaimable(eb)
    ])

/**
 * The deliveries of one just-appended event: one per enabled endpoint of the account that
 * selected its type, in one `INSERT ... SELECT` (not yet run; the outbox prepares it once and
 * runs it inside the append's transaction, so an event and its deliveries commit or roll back
 * together).
 */
export const fanOut = (
  c: Db,
  dialect: Connection["dialect"],
  event: {
    readonly id: string
    readonly customerNo: string
    readonly trackNo: string
    readonly type: string
    readonly sequence: number
    readonly occurredAt: number
  }
) =>
  c
    .insertInto("waybill_webhook_deliveries")
    .columns(DELIVERY_COLUMNS)
    .expression((eb) =>
      eb
        .selectFrom("waybill_webhook_subscriptions")
        .select((sb) => [
          "endpoint_id",
          sb.val(event.id).as("event_id"),
          sb.val(event.trackNo).as("track_no"),
          sb.val(event.sequence).as("sequence"),
          ...pendingState(sb, event.occurredAt),
          // Claimable at once unless the shipment already has a delivery waiting for this endpoint
          // (the subscription is enabled only while its endpoint is). On PostgreSQL the waiting
          // delivery is share-locked: an outcome being recorded for it meanwhile (which makes
          // the next one claimable, but cannot see this row yet) is waited for and then seen.
          sb
            .case()
            .when(
              sb.exists(
                sb
                  .selectFrom("waybill_webhook_deliveries as p")
                  .select(sql.lit(1).as("one"))
                  .whereRef("p.endpoint_id", "=", "waybill_webhook_subscriptions.endpoint_id")
                  .where("p.track_no", "=", event.trackNo)
                  .where("p.status", "=", sql.lit("pending"))
                  .$if(dialect === "postgres", (q) => q.forShare())
              )
            )
            .then(sql.lit(0))
            .else(sql.lit(1))
            .end()
            .as("claimable")
        ])
        .where("customer_no", "=", event.customerNo)
        .where("event_type", "=", event.type)
        .where("enabled", "=", 1)
    )

/** The account of endpoint `id`, as a subquery (subscriptions are keyed by account first). */
const endpointCustomer = (c: Kysely<WaybillDatabase>, id: string) =>
  c.selectFrom("waybill_webhook_endpoints").select("customer_no").where("id", "=", id)

/**
 * Due deliveries that are next in their shipment's order, oldest first, with their endpoint and
 * event: what a claim hands out, read in the scan so a won claim needs no second read.
 */
const claimScan = (c: Kysely<WaybillDatabase>, now: number, limit: number) =>
  c
    .selectFrom("waybill_webhook_deliveries as d")
    .innerJoin("waybill_webhook_endpoints as e", "e.id", "d.endpoint_id")
    .innerJoin("waybill_events as ev", "ev.id", "d.event_id")
    .selectAll("d")
    .select([
      "e.id as e_id",
      "e.customer_no as e_customer_no",
      "e.url as e_url",
      "e.event_types as e_event_types",
      "e.secret as e_secret",
      "e.previous_secret as e_previous_secret",
      "e.previous_secret_until as e_previous_secret_until",
      "e.enabled as e_enabled",
      "e.disabled_reason as e_disabled_reason",
      "e.failing_since as e_failing_since",
      "e.created_at as e_created_at",
      "e.updated_at as e_updated_at",
      "ev.id as ev_id",
      "ev.type as ev_type",
      "ev.customer_no as ev_customer_no",
      "ev.track_no as ev_track_no",
      "ev.sequence as ev_sequence",
      "ev.livemode as ev_livemode",
      "ev.occurred_at as ev_occurred_at",
      "ev.data as ev_data"
    ])
    // Literals, so the planner may walk the index of claimable deliveries (`claimable_idx`): a
    // shipment's later deliveries and a disabled endpoint's backlog are not in it, however many.
    .where("d.status", "=", sql.lit("pending"))
    .where("d.claimable", "=", sql.lit(1))
    .where("d.next_attempt_at", "<=", now)
    .where("d.lease_until", "<=", now)
    .where("e.enabled", "=", 1)
    .where(({ exists, not, selectFrom }) =>
      not(
        exists(
          selectFrom("waybill_webhook_deliveries as p")
            .select(sql.lit(1).as("one"))
            // The endpoint's id through the join (the same value as d.endpoint_id): so SQLite
            // checks the order only after the endpoint is known to be enabled, and a disabled
            // endpoint's backlog costs the index walk alone (34 ms -> 8 ms a scan over a 60,000
            // delivery backlog, measured).
            .whereRef("p.endpoint_id", "=", "e.id")
            .whereRef("p.track_no", "=", "d.track_no")
            .whereRef("p.sequence", "<", "d.sequence")
            // A literal, not a parameter: only then may the planner use the order index, which
            // holds the pending rows alone.
            .where("p.status", "=", sql.lit("pending"))
        )
      )
    )
    .orderBy("d.next_attempt_at")
    .limit(limit)

/** A row of the claim's scan: the delivery with its endpoint's and event's columns. */
type ClaimRow = Awaited<ReturnType<ReturnType<typeof claimScan>["execute"]>>[number]

/** The delivery, endpoint and event a claim hands the dispatcher, from a scan row it won. */
const claimedOf = (row: ClaimRow): Webhook.Claimed => ({
  delivery: toDelivery(row),
  endpoint: toEndpoint({
    id: row.e_id,
    customer_no: row.e_customer_no,
    url: row.e_url,
    event_types: row.e_event_types,
    secret: row.e_secret,
    previous_secret: row.e_previous_secret,
    previous_secret_until: row.e_previous_secret_until,
    enabled: row.e_enabled,
    disabled_reason: row.e_disabled_reason,
    failing_since: row.e_failing_since,
    created_at: row.e_created_at,
    updated_at: row.e_updated_at
  }),
  event: toStoredEvent({
    id: row.ev_id,
    type: row.ev_type,
    customer_no: row.ev_customer_no,
    track_no: row.ev_track_no,
    sequence: row.ev_sequence,
    livemode: row.ev_livemode,
    occurred_at: row.ev_occurred_at,
    data: row.ev_data
  })
})

/** `WebhookStore` over Kysely. */
export const makeWebhookStore = (conn: Connection): WebhookStoreShape => {
  const { batch, compileInsert, dialect, execute, first, prepare, rows, withTransaction, write } = conn
  // The dispatcher's statements, one set per delivery: compiled once (and, on SQLite, run
  // synchronously) instead of built and compiled by Kysely for every delivery.
  const scanSql = prepare((c, p: { readonly now: number; readonly limit: number }) => claimScan(c, p.now, p.limit))
  const lockingScanSql = prepare((c, p: { readonly now: number; readonly limit: number }) =>
    claimScan(c, p.now, p.limit).forUpdate("d").skipLocked()
  )
  const claimSql = prepare(
    (
      c,
      p: {
        readonly owner: string
        readonly leaseUntil: number
        readonly endpointId: string
        readonly eventId: string
        readonly pending: string
        readonly now: number
        readonly attempts: number
      }
    ) =>
      c
        .updateTable("waybill_webhook_deliveries")
        .set({ lease_owner: p.owner, lease_until: p.leaseUntil })
        .where("endpoint_id", "=", p.endpointId)
        .where("event_id", "=", p.eventId)
        .where("status", "=", p.pending as "pending")
        .where("lease_until", "<=", p.now)
        .where("next_attempt_at", "<=", p.now)
        .where("attempts", "=", p.attempts)
  )
  const renewSql = prepare(
    (
      c,
      p: {
        readonly owner: string
        readonly leaseUntil: number
        readonly endpointId: string
        readonly eventId: string
        readonly pending: string
      }
    ) =>
      c
        .updateTable("waybill_webhook_deliveries")
        .set({ lease_until: p.leaseUntil })
        .where("endpoint_id", "=", p.endpointId)
        .where("event_id", "=", p.eventId)
        .where("status", "=", p.pending as "pending")
        .where("lease_owner", "=", p.owner)
  )
  const completeSql = prepare(
    (
      c,
      p: {
        readonly status: string
        readonly attempts: number
        readonly nextAttemptAt: number
        readonly lastStatus: number | null
        readonly at: number
        readonly endpointId: string
        readonly eventId: string
        readonly owner: string
      }
    ) =>
      c
        .updateTable("waybill_webhook_deliveries")
        .set({
          status: p.status as "pending",
          attempts: p.attempts,
          next_attempt_at: p.nextAttemptAt,
          lease_owner: null,
          lease_until: 0,
          last_status: p.lastStatus,
          updated_at: p.at
        })
        .where("endpoint_id", "=", p.endpointId)
        .where("event_id", "=", p.eventId)
        .where("lease_owner", "=", p.owner)
        .returning("track_no")
  )
  // A delivery that is no longer pending makes the next pending one of its shipment claimable,
  // if its endpoint is still enabled (one seek into the order index; nothing when there is none).
  // The delivery's shipment is read by the delivery's key (one seek) so the statement needs
  // nothing from the outcome's.
  const promoteSql = prepare((c, p: { readonly endpointId: string; readonly eventId: string }) => {
    const trackNo = c
      .selectFrom("waybill_webhook_deliveries as t")
      .select("t.track_no")
      .where("t.endpoint_id", "=", p.endpointId)
      .where("t.event_id", "=", p.eventId)
    return c
      .updateTable("waybill_webhook_deliveries")
      .set({ claimable: sql.lit(1) })
      .where("endpoint_id", "=", p.endpointId)
      .where("track_no", "=", trackNo)
      .where("status", "=", sql.lit("pending"))
      .where("sequence", "=", (eb) =>
        eb
          .selectFrom("waybill_webhook_deliveries as n")
          .select((e) => e.fn.min("n.sequence").as("first"))
          .where("n.endpoint_id", "=", p.endpointId)
          .where("n.track_no", "=", trackNo)
          .where("n.status", "=", sql.lit("pending"))
      )
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("waybill_webhook_endpoints as e")
            .select(sql.lit(1).as("one"))
            .where("e.id", "=", p.endpointId)
            .where("e.enabled", "=", sql.lit(1))
        )
      )
  })
  const healthOkSql = prepare((c, p: { readonly endpointId: string }) =>
    c
      .updateTable("waybill_webhook_endpoints")
      .set({ failing_since: null })
      .where("id", "=", p.endpointId)
      .where("failing_since", "is not", null)
  )

  const writeSubscriptions = (e: EndpointRecord) =>
    Effect.zipRight(
      write("webhooks.subscriptions-delete", (c) =>
        // By the primary key's leading column: endpoint_id alone would scan every subscription.
        c
          .deleteFrom("waybill_webhook_subscriptions")
          .where("customer_no", "=", e.customerNo)
          .where("endpoint_id", "=", e.id)
      ),
      e.eventTypes.length === 0
        ? Effect.void
        : write("webhooks.subscriptions-insert", (c) =>
            c.insertInto("waybill_webhook_subscriptions").values(
              e.eventTypes.map((t) => ({
                customer_no: e.customerNo,
                event_type: t,
                endpoint_id: e.id,
                enabled: e.enabled ? 1 : 0
              }))
            )
          )
    )

  /** Marks claimable what should be in `scope` ({@link settleClaimable}), after {@link lockScope} on PostgreSQL. */
  const settle = (scope: SettleScope) =>
    Effect.zipRight(
      dialect === "postgres" ? rows("webhooks.settle-lock", (c) => lockScope(c, scope)) : Effect.void,
      write("webhooks.settle-claimable", (c) => settleClaimable(c, scope))
    )
  /** A disabled endpoint's backlog leaves the claim's index. */
  const unclaimable = (endpointId: string) =>
    write("webhooks.unclaimable", (c) =>
      c
        .updateTable("waybill_webhook_deliveries")
        .set({ claimable: sql.lit(0) })
        .where("endpoint_id", "=", endpointId)
        .where("status", "=", sql.lit("pending"))
        .where("claimable", "=", sql.lit(1))
    )

  const replaceEndpoint = Effect.fnUntraced(function* (e: EndpointRecord) {
    // Locked on PostgreSQL: a dispatcher disabling the endpoint meanwhile (5 days of
    // failures) is waited for, so an update that enables it again sees that it does.
    const before = yield* first("webhooks.endpoint-enabled", (c) =>
      c
        .selectFrom("waybill_webhook_endpoints")
        .select("enabled")
        .where("id", "=", e.id)
        .$if(dialect === "postgres", (q) => q.forUpdate())
    )
    if (before === undefined) return false
    const wasEnabled = num(before.enabled) !== 0
    const enabling = e.enabled && !wasEnabled
    const result = yield* write("webhooks.endpoint-update", (c) =>
      c.updateTable("waybill_webhook_endpoints").set(endpointRow(e)).where("id", "=", e.id)
    )
    if (result === 0) return false
    yield* writeSubscriptions(e)
    // Disabled: its backlog leaves the claim's index; enabled again: it comes back, in order.
    if (enabling) yield* settle({ endpointId: e.id })
    else if (!e.enabled && wasEnabled) yield* unclaimable(e.id)
    return true
  })

  const removeEndpoint = Effect.fnUntraced(function* (id: string) {
    // Subscriptions first, while the endpoint still names its account (their key's first column).
    yield* write("webhooks.endpoint-delete-subscriptions", (c) =>
      c
        .deleteFrom("waybill_webhook_subscriptions")
        .where("customer_no", "=", endpointCustomer(c, id))
        .where("endpoint_id", "=", id)
    )
    const removed = yield* write("webhooks.endpoint-delete", (c) =>
      c.deleteFrom("waybill_webhook_endpoints").where("id", "=", id)
    )
    if (removed === 0) return false
    yield* write("webhooks.endpoint-delete-deliveries", (c) =>
      c.deleteFrom("waybill_webhook_deliveries").where("endpoint_id", "=", id)
    )
    yield* write("webhooks.endpoint-delete-attempts", (c) =>
      c.deleteFrom("waybill_webhook_attempts").where("endpoint_id", "=", id)
    )
    return true
  })

  const noteEndpointHealth = Effect.fnUntraced(function* ({
    disableAfterMs,
    endpointId,
    now,
    ok
  }: Parameters<WebhookStoreShape["noteHealth"]>[0]) {
    if (ok) {
      yield* execute("webhooks.health-ok", healthOkSql({ endpointId }))
      return false
    }
    yield* write("webhooks.health-failing", (c) =>
      c
        .updateTable("waybill_webhook_endpoints")
        .set({ failing_since: now })
        .where("id", "=", endpointId)
        .where("failing_since", "is", null)
    )
    const disabled = yield* write("webhooks.health-disable", (c) =>
      c
        .updateTable("waybill_webhook_endpoints")
        .set({ enabled: 0, disabled_reason: "failing", updated_at: now })
        .where("id", "=", endpointId)
        .where("enabled", "=", 1)
        .where("failing_since", "<=", now - disableAfterMs)
    )
    if (disabled === 0) return false
    yield* unclaimable(endpointId)
    yield* write("webhooks.health-unsubscribe", (c) =>
      c
        .updateTable("waybill_webhook_subscriptions")
        .set({ enabled: 0 })
        .where("customer_no", "=", endpointCustomer(c, endpointId))
        .where("endpoint_id", "=", endpointId)
    )
    return true
  })

  const enqueueDelivery = Effect.fnUntraced(function* (endpointId: string, eventId: string, now: number) {
    yield* write("webhooks.enqueue", (c) =>
      c
        .insertInto("waybill_webhook_deliveries")
        .columns(DELIVERY_COLUMNS)
        .expression((eb) =>
          eb
            .selectFrom("waybill_events")
            .select([
              eb.val(endpointId).as("endpoint_id"),
              "id",
              "track_no",
              "sequence",
              ...pendingState(eb, now),
              notYetClaimable(eb)
            ])
            .where("id", "=", eventId)
        )
        .onConflict((oc) =>
          oc
            .columns(["endpoint_id", "event_id"])
            .doUpdateSet({ status: "pending", attempts: 0, next_attempt_at: now, updated_at: now })
        )
    )
    yield* settle({ endpointId, eventId })
  })

  const requeueDeliveries = Effect.fnUntraced(function* (eventId: string, now: number) {
    const updated = yield* write("webhooks.requeue", (c) =>
      c
        .updateTable("waybill_webhook_deliveries")
        .set({ status: "pending", attempts: 0, next_attempt_at: now, updated_at: now })
        .where("event_id", "=", eventId)
    )
    // Endpoints added after the event was written get it too.
    const inserted = yield* write("webhooks.requeue-missing", (c) =>
      c
        .insertInto("waybill_webhook_deliveries")
        .columns(DELIVERY_COLUMNS)
        .expression(newDeliveries(c, now).where("ev.id", "=", eventId).where("s.enabled", "=", 1))
        .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
    )
    yield* settle({ eventId })
    return updated + inserted
  })

  const recoverDeliveries = Effect.fnUntraced(function* (endpointId: string, since: number, now: number) {
    const queued = yield* write("webhooks.recover", (c) =>
      c
        .insertInto("waybill_webhook_deliveries")
        .columns(DELIVERY_COLUMNS)
        .expression(
          newDeliveries(c, now)
            // By the subscriptions' key (account first), not a scan of every subscription.
            .where("s.customer_no", "=", endpointCustomer(c, endpointId))
            .where("s.endpoint_id", "=", endpointId)
            .where("ev.occurred_at", ">=", since)
        )
        .onConflict((oc) =>
          oc
            .columns(["endpoint_id", "event_id"])
            .doUpdateSet({ status: "pending", attempts: 0, next_attempt_at: now, updated_at: now })
            .where("waybill_webhook_deliveries.status", "<>", "delivered")
        )
    )
    yield* settle({ endpointId })
    return queued
  })

  const pruneFinished = Effect.fnUntraced(function* (before: number) {
    // Both deletes go by an index, so an hourly prune with nothing to do costs nothing
    // (it scanned 470,000 attempts and walked every finished delivery: 17 and 60 ms).
    // Attempts: the (endpoint_id, at, ...) index, for each endpoint id the log holds, found
    // one index seek each (the recursive `ids`: the least id, then the least one after
    // it), so the log of an endpoint deleted while a send was in flight is pruned too.
    const attempts = yield* write("webhooks.prune-attempts", (c) =>
      c
        .withRecursive("ids(id)", (db) =>
          db
            .selectFrom("waybill_webhook_attempts")
            .select((eb) => eb.fn.min<string | null>("endpoint_id").as("id"))
            .unionAll((u) =>
              u
                .selectFrom("ids")
                .select((eb) =>
                  eb
                    .selectFrom("waybill_webhook_attempts as a")
                    .select((inner) => inner.fn.min<string | null>("a.endpoint_id").as("next"))
                    .whereRef("a.endpoint_id", ">", "ids.id")
                    .as("id")
                )
                .where("ids.id", "is not", null)
            )
        )
        .deleteFrom("waybill_webhook_attempts")
        .where("endpoint_id", "in", (eb) => eb.selectFrom("ids").select("ids.id").where("ids.id", "is not", null))
        .where("at", "<", before)
    )
    // A finished delivery's next_attempt_at is its last attempt's time, as is its
    // updated_at (complete writes both): the index of finished rows (`done_idx`, which
    // the literal lets the planner use) finds them.
    const deliveries = yield* write("webhooks.prune-deliveries", (c) =>
      c
        .deleteFrom("waybill_webhook_deliveries")
        .where("status", "<>", sql.lit("pending"))
        .where("next_attempt_at", "<", before)
        .where("updated_at", "<", before)
    )
    // A sweep of the flag the claim reads: marks claimable whatever should be and is not,
    // such as the deliveries a host of an earlier version queued or finished during a
    // rolling upgrade (it knows nothing of the flag).
    yield* write("webhooks.settle-claimable", (c) => settleClaimable(c, {}))
    return attempts + deliveries
  })

  const store: WebhookStoreShape = {
    insertEndpoint: (e) =>
      withTransaction(
        Effect.zipRight(
          write("webhooks.endpoint-insert", (c) => c.insertInto("waybill_webhook_endpoints").values(endpointRow(e))),
          writeSubscriptions(e)
        )
      ),

    updateEndpoint: (e) => withTransaction(replaceEndpoint(e)),

    deleteEndpoint: (id) => withTransaction(removeEndpoint(id)),

    findEndpoint: (id) =>
      first("webhooks.endpoint-find", (c) =>
        c.selectFrom("waybill_webhook_endpoints").selectAll().where("id", "=", id)
      ).pipe(Effect.map((r) => Option.map(Option.fromNullable(r), toEndpoint))),

    listEndpoints: ({ customerNo }, page) =>
      rows("webhooks.endpoint-list", (c) => {
        let q = c.selectFrom("waybill_webhook_endpoints").selectAll()
        if (customerNo !== undefined) q = q.where("customer_no", "=", customerNo)
        return keyset(q, ["created_at", "id"], page)
      }).pipe(Effect.map((rows) => Page.sliceOf(rows.map(toEndpoint), page.limit))),

    claimDue: ({ leaseMs, limit, now, owner, perEndpoint, skipEndpoints }) => {
      const skip = skipEndpoints ?? []
      // On PostgreSQL the scan locks its candidates for the claim's transaction; rows another
      // host is claiming right now are skipped rather than waited for, and each locked row is
      // rechecked against its newest version.
      const locking = dialect === "postgres"
      const scan: Effect.Effect<ReadonlyArray<ClaimRow>, StorageError> = skip.length === 0
        ? Effect.map(
            execute("webhooks.claim-scan", (locking ? lockingScanSql : scanSql)({ now, limit })),
            (r) => r.rows as ReadonlyArray<ClaimRow>
          )
        : (rows("webhooks.claim-scan", (c) => {
            const q = claimScan(c, now, limit).where("d.endpoint_id", "not in", skip)
            return locking ? q.forUpdate("d").skipLocked() : q
          }) as Effect.Effect<ReadonlyArray<ClaimRow>, StorageError>)
      // The candidates within each endpoint's share, and the conditional update that claims each:
      // a rival dispatcher that took one first has moved lease_until past now (or, having sent
      // it, the attempt count and the next attempt time), so its update matches no row.
      const attemptsOn = (candidates: ReadonlyArray<ClaimRow>) => {
        const tried: Array<ClaimRow> = []
        const taken = new Map<string, number>()
        for (const cand of candidates) {
          const already = taken.get(cand.endpoint_id) ?? 0
          if (perEndpoint !== undefined && already >= perEndpoint) continue
          taken.set(cand.endpoint_id, already + 1)
          tried.push(cand)
        }
        const statements = tried.map((cand) =>
          claimSql({
            owner,
            leaseUntil: now + leaseMs,
            endpointId: cand.endpoint_id,
            eventId: cand.event_id,
            pending: "pending",
            now,
            attempts: num(cand.attempts)
          })
        )
        return { tried, statements }
      }
      const won = (cand: ClaimRow, changed: number): ReadonlyArray<Webhook.Claimed> =>
        changed === 1 ? [claimedOf({ ...cand, lease_owner: owner, lease_until: now + leaseMs })] : []
      if (locking) {
        return withTransaction(
          Effect.flatMap(scan, (candidates) => {
            const { statements, tried } = attemptsOn(candidates)
            return Effect.map(
              Effect.forEach(statements, (statement, i) =>
                Effect.map(execute("webhooks.claim", statement), (r) => won(tried[i]!, Number(r.numAffectedRows ?? 0)))
              ),
              (claims) => claims.flat()
            )
          })
        )
      }
      // SQLite has no row locks: the scan runs outside any transaction (a read that turns into a
      // write inside one fails when another process wrote meanwhile), and the claims are one
      // batch, whose conditional updates decide.
      return Effect.flatMap(scan, (candidates) => {
        if (candidates.length === 0) return Effect.succeed([])
        const { statements, tried } = attemptsOn(candidates)
        return Effect.map(batch("webhooks.claim", statements), (done) =>
          tried.flatMap((cand, i) => won(cand, Number(done.results?.[i]?.numAffectedRows ?? 0)))
        )
      })
    },

    // One batch (on SQLite it joins the group commit's flush beside the other outcomes): the
    // attempt's log line, the outcome if `owner` still holds the lease, and, for a delivery that
    // is done, its shipment's next pending one made claimable. The last is right whether or not
    // the outcome applied (it marks the shipment's first pending delivery, whichever that is),
    // so it needs nothing from the outcome's statement.
    complete: ({ attempt, outcome, owner }) => {
      const statements: Array<Statement> = [
        compileInsert("waybill_webhook_attempts", [
          {
            endpoint_id: attempt.endpointId,
            event_id: attempt.eventId,
            attempt: attempt.attempt,
            at: attempt.at,
            status: attempt.status,
            ok: attempt.ok ? 1 : 0,
            duration_ms: attempt.durationMs,
            response: attempt.response
          }
        ]),
        completeSql({
          status: outcome._tag === "Delivered" ? "delivered" : outcome._tag === "Retry" ? "pending" : "failed",
          attempts: attempt.attempt,
          nextAttemptAt: outcome._tag === "Retry" ? outcome.nextAttemptAt : attempt.at,
          lastStatus: attempt.status,
          at: attempt.at,
          endpointId: attempt.endpointId,
          eventId: attempt.eventId,
          owner
        })
      ]
      if (outcome._tag !== "Retry") {
        statements.push(promoteSql({ endpointId: attempt.endpointId, eventId: attempt.eventId }))
      }
      return Effect.map(batch("webhooks.complete", statements), (done) => (done.results?.[1]?.rows.length ?? 0) > 0)
    },

    renewLeases: ({ deliveries, leaseUntil, owner }) =>
      deliveries.length === 0
        ? Effect.succeed(0)
        : withTransaction(
            Effect.reduce(deliveries, 0, (renewed, d) =>
              Effect.map(
                execute(
                  "webhooks.renew-lease",
                  renewSql({ owner, leaseUntil, endpointId: d.endpointId, eventId: d.eventId, pending: "pending" })
                ),
                (r) => renewed + Number(r.numAffectedRows ?? 0)
              )
            )
          ),

    releaseLeases: (owner) =>
      write("webhooks.release-leases", (c) =>
        c
          .updateTable("waybill_webhook_deliveries")
          .set({ lease_owner: null, lease_until: 0 })
          .where("lease_owner", "=", owner)
          // A literal: the pending rows are in partial indexes only.
          .where("status", "=", sql.lit("pending"))
      ),

    noteHealth: (options) => withTransaction(noteEndpointHealth(options)),

    listDeliveries: (endpointId, page) =>
      rows("webhooks.delivery-list", (c) =>
        keyset(
          c.selectFrom("waybill_webhook_deliveries").selectAll().where("endpoint_id", "=", endpointId),
          ["created_at", "event_id"],
          page
        )
      ).pipe(Effect.map((rows) => Page.sliceOf(rows.map(toDelivery), page.limit))),

    listAttempts: (endpointId, page) =>
      rows("webhooks.attempt-list", (c) =>
        keyset(
          c.selectFrom("waybill_webhook_attempts").selectAll().where("endpoint_id", "=", endpointId),
          ["at", "event_id", "attempt"],
          page
        )
      ).pipe(Effect.map((rows) => Page.sliceOf(rows.map(toAttempt), page.limit))),

    enqueue: (endpointId, eventId, now) => withTransaction(enqueueDelivery(endpointId, eventId, now)),

    findEvent: (eventId) =>
      first("webhooks.event-find", (c) => c.selectFrom("waybill_events").selectAll().where("id", "=", eventId)).pipe(
        Effect.map((row) => (row === undefined ? Option.none() : Option.some(toStoredEvent(row))))
      ),

    requeueEvent: (eventId, now) => withTransaction(requeueDeliveries(eventId, now)),

    recover: (endpointId, since, now) => withTransaction(recoverDeliveries(endpointId, since, now)),

    prune: (before) => withTransaction(pruneFinished(before))
  }

  return store
}
