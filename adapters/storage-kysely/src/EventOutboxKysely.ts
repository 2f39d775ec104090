/**
 * @module EventOutboxKysely
 *
 * `EventOutbox` over Kysely: domain events with a per-shipment sequence.
 */
import * as Effect from "effect/Effect"
import type { Connection, Statement } from "./internal/connection.js"
import * as Rows from "./internal/rows.js"
import { type DomainEvent, type EventOutboxShape } from "./internal/core.js"
import { fanOut } from "./WebhookStoreKysely.js"

/**
 * The statements that store an event whose sequence is known: its row, then its webhook
 * deliveries (one per endpoint that selected its type). `EventOutbox.append` and
 * `ShipmentStore.book` both write events through these.
 */
export const eventWrites = (conn: Connection) => {
  const fanOutSql = conn.prepare((c, event: Parameters<typeof fanOut>[2]) => fanOut(c, conn.dialect, event))
  return (event: DomainEvent): readonly [Statement, Statement] => [
    conn.compileInsert("waybill_events", [Rows.eventRow(event)]),
    fanOutSql({
      id: event.id,
      customerNo: event.customerNo,
      trackNo: event.trackNo,
      type: event.type,
      sequence: event.sequence,
      occurredAt: event.occurredAt
    })
  ]
}

/** `EventOutbox` over Kysely: domain events with a per-shipment sequence. */
export const makeEventOutbox = (conn: Connection): EventOutboxShape => {
  const { execute, first, rows, withTransaction } = conn
  const writes = eventWrites(conn)

  const appendEvent = Effect.fnUntraced(function* (event: Parameters<EventOutboxShape["append"]>[0]) {
    const top =
      event.sequence === undefined
        ? yield* first("events.next-sequence", (c) =>
            c
              .selectFrom("waybill_events")
              .select((eb) => eb.fn.max("sequence").as("top"))
              .where("track_no", "=", event.trackNo)
          )
        : { top: event.sequence - 1 }
    const stored = {
      id: event.id,
      type: event.type,
      customerNo: event.customerNo,
      trackNo: event.trackNo,
      sequence: top?.top === null || top?.top === undefined ? 1 : Number(top.top) + 1,
      livemode: event.livemode,
      occurredAt: event.occurredAt,
      data: event.data
    }
    // Webhook deliveries commit with the event.
    const [insert, deliveries] = writes(stored)
    yield* execute("events.insert", insert)
    yield* execute("events.webhook-fan-out", deliveries)
    return stored
  })

  const outbox: EventOutboxShape = {
    // Two statements in one transaction. Concurrent appends for one shipment are serialized
    // by the shipment's own version check (events are appended in the transaction of the
    // update they record); a lost race anyway surfaces as a StorageError from the unique
    // (track_no, sequence) constraint, never as a duplicate sequence.
    append: (event) => withTransaction(appendEvent(event)),

    listByShipment: (trackNo) =>
      rows("events.select", (c) =>
        c.selectFrom("waybill_events").selectAll().where("track_no", "=", trackNo).orderBy("sequence")
      ).pipe(Effect.map((rows) => rows.map(Rows.toEvent)))
  }

  return outbox
}
