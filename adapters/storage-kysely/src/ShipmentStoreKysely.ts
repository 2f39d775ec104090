/**
 * @module ShipmentStoreKysely
 *
 * `ShipmentStore` over Kysely: shipments with their stops, legs and pieces.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Shipment } from "@waybill/core"
import { sql } from "kysely"
import type { BatchStatement } from "./Engine.js"
import { eventWrites } from "./EventOutboxKysely.js"
import type { Connection } from "./internal/connection.js"
import * as Rows from "./internal/rows.js"
import {
  DuplicateKey,
  Page,
  type ShipmentChange,
  type ShipmentStoreShape,
  StorageError,
  VersionConflict
} from "./internal/core.js"
import { keyset } from "./internal/paging.js"

const num = (v: number | string | bigint): number => Number(v)

type ShipmentSummary = Shipment.ShipmentSummary

/** `ShipmentStore` over Kysely: shipments with their stops, legs and pieces. */
export const makeShipmentStore = (conn: Connection): ShipmentStoreShape => {
  const { batch, compileInsert, first, rows, write, withSnapshot, withTransaction } = conn
  const eventStatements = eventWrites(conn)

  /**
   * The statements that store a shipment and its parts, the shipment's row first. A taken
   * tracking number is reported without raising an error (`on conflict do nothing` and the
   * batch's `mustChange`): inside an enclosing PostgreSQL transaction (an `Idempotency-Key`
   * booking runs in one) a unique violation would abort the whole transaction, and the caller
   * could not draw another number. A string: the parts do not fit together.
   */
  const shipmentStatements = (s: Parameters<ShipmentStoreShape["insert"]>[0]): Array<BatchStatement> | string => {
    const stops = Rows.stopRows(s.trackNo, s.stops, s.legs)
    if (typeof stops === "string") return stops
    const row = compileInsert("waybill_shipments", [Rows.shipmentRow(s)])
    const statements: Array<BatchStatement> = [
      { sql: `${row.sql} on conflict do nothing`, parameters: row.parameters, mustChange: true }
    ]
    if (stops.length > 0) statements.push(compileInsert("waybill_stops", stops))
    if (s.pieceDetails.length > 0)
      statements.push(compileInsert("waybill_pieces", s.pieceDetails.map(Rows.pieceRow(s.trackNo))))
    return statements
  }
  const store = (operation: string, statements: Array<BatchStatement> | string) =>
    typeof statements === "string"
      ? Effect.fail(new StorageError({ operation, cause: new Error(statements) }))
      : Effect.flatMap(batch(operation, statements), (outcome) =>
          outcome.unchanged === undefined ? Effect.void : Effect.fail(new DuplicateKey({ what: "track_no" }))
        )

  const children = (trackNo: string) =>
    Effect.all([
      rows("stops.select", (c) =>
        c.selectFrom("waybill_stops").selectAll().where("track_no", "=", trackNo).orderBy("seq")
      ),
      rows("pieces.select", (c) =>
        c.selectFrom("waybill_pieces").selectAll().where("track_no", "=", trackNo).orderBy("seq")
      )
    ]).pipe(
      Effect.map(([stops, pieces]) => ({
        stops: stops.map(Rows.toStop),
        legs: Rows.toLegs(stops),
        pieces: pieces.map(Rows.toPiece)
      }))
    )

  /**
   * The tracking numbers a search term names, as a derived table: the tracking number itself
   * (primary key), the account's shipments with that customer reference (`(customer_no,
   * lower(billing_reference))`), and the orders with that invoice number (`lower(invoice_no)`).
   * Each branch is one index lookup, and the search starts from these few rows (SQLite keeps
   * the left table of a CROSS JOIN outside), so it costs its matches, not the account's size.
   */
  const matching = (customerNo: string, q: string) =>
    sql<{ readonly track_no: string }>`(
      select t.track_no from waybill_shipments t where t.track_no = ${q}
      union select r.track_no from waybill_shipments r
        where r.customer_no = ${customerNo} and lower(r.billing_reference) = lower(${q})
      union select i.track_no from waybill_orders i where lower(i.invoice_no) = lower(${q}))`.as("m")

  const findShipment = Effect.fnUntraced(function* (trackNo: string) {
    const row = yield* first("shipments.select", (c) =>
      c.selectFrom("waybill_shipments").selectAll().where("track_no", "=", trackNo)
    )
    if (row === undefined) return Option.none()
    const { legs, pieces, stops } = yield* children(trackNo)
    return Option.some(Rows.toShipment(row, stops, legs, pieces))
  })

  const applyChange = Effect.fnUntraced(function* (change: ShipmentChange) {
    // The version guard and the write are one statement: whichever writer's UPDATE runs
    // second matches no row (PostgreSQL re-checks the WHERE after the first commits).
    const row = yield* first("shipments.update", (c) =>
      c
        .updateTable("waybill_shipments")
        .set({
          state: change.state,
          driver_id: change.driverId,
          updated_at: change.updatedAt,
          version: change.expectedVersion + 1
        })
        .where("track_no", "=", change.trackNo)
        .where("version", "=", change.expectedVersion)
        .returningAll()
    )
    if (row === undefined) return yield* new VersionConflict({ trackNo: change.trackNo })
    if (change.stops.length > 0) {
      // One statement for all changed stops; the last status given for a seq wins.
      const statuses = new Map(change.stops.map((s) => [s.seq, s.status] as const))
      const whens = [...statuses].map(([seq, status]) => sql`when ${seq} then ${status}`)
      yield* write("stops.update", (c) =>
        c
          .updateTable("waybill_stops")
          .set({ status: sql<string>`case seq ${sql.join(whens, sql` `)} else status end` })
          .where("track_no", "=", change.trackNo)
          .where("seq", "in", [...statuses.keys()])
      )
    }
    const { legs, pieces, stops } = yield* children(change.trackNo)
    return Rows.toShipment(row, stops, legs, pieces)
  })

  const searchPage = Effect.fnUntraced(function* (
    { customerNo, q }: Parameters<ShipmentStoreShape["search"]>[0],
    page: Parameters<ShipmentStoreShape["search"]>[1]
  ) {
    const columns = [
      "s.track_no",
      "s.customer_no",
      "s.livemode",
      "s.created_at",
      "s.state",
      "s.billing_reference",
      "s.service_type",
      "s.vehicle_type",
      "s.charge_total",
      "o.invoice_no"
    ] as const
    const found = yield* rows("shipments.search", (c) =>
      q === undefined || q === ""
        ? keyset(
            c
              .selectFrom("waybill_shipments as s")
              .leftJoin("waybill_orders as o", "o.track_no", "s.track_no")
              .select(columns)
              .where("s.customer_no", "=", customerNo),
            ["s.created_at", "s.track_no"],
            page
          )
        : keyset(
            c
              .selectFrom(matching(customerNo, q))
              .crossJoin("waybill_shipments as s")
              .leftJoin("waybill_orders as o", "o.track_no", "s.track_no")
              .select(columns)
              .whereRef("s.track_no", "=", "m.track_no")
              .where("s.customer_no", "=", customerNo),
            ["s.created_at", "s.track_no"],
            page
          )
    )
    const slice = Page.sliceOf(found, page.limit)
    if (slice.items.length === 0) return { items: [], hasMore: false }
    const ends = yield* rows("shipments.search-stops", (c) =>
      c
        .selectFrom("waybill_stops")
        .select(["track_no", "seq", "city", "state"])
        .where(
          "track_no",
          "in",
          slice.items.map((r) => r.track_no)
        )
    )
    const first = new Map<string, { seq: number; city: string; state: string }>()
    const last = new Map<string, { seq: number; city: string; state: string }>()
    for (const e of ends) {
      const stop = { seq: num(e.seq), city: e.city, state: e.state }
      const f = first.get(e.track_no)
      if (f === undefined || stop.seq < f.seq) first.set(e.track_no, stop)
      const l = last.get(e.track_no)
      if (l === undefined || stop.seq > l.seq) last.set(e.track_no, stop)
    }
    const place = (p: { city: string; state: string } | undefined) => ({
      city: p?.city ?? "",
      state: p?.state ?? ""
    })
    const items = slice.items.map(
      (r): ShipmentSummary => ({
        trackNo: r.track_no,
        customerNo: r.customer_no,
        livemode: num(r.livemode) !== 0,
        createdAt: num(r.created_at),
        state: r.state as ShipmentSummary["state"],
        reference: r.billing_reference,
        invoice: r.invoice_no ?? "",
        serviceType: r.service_type,
        vehicleType: r.vehicle_type,
        from: place(first.get(r.track_no)),
        to: place(last.get(r.track_no)),
        total: num(r.charge_total)
      })
    )
    return { items, hasMore: slice.hasMore }
  })

  const shipments: ShipmentStoreShape = {
    // The booking: one batch (legs ride on the stop rows they arrive at).
    book: (s, booked) => {
      const statements = shipmentStatements(s)
      return store(
        "shipments.book",
        typeof statements === "string" ? statements : [...statements, ...eventStatements(booked)]
      )
    },

    insert: (s) => store("shipments.insert", shipmentStatements(s)),

    // In one snapshot so the shipment row and its stops come from the same moment (a
    // concurrent update cannot land between the reads and pair an old version with new
    // stop statuses; on PostgreSQL this takes `repeatable read`, see `withSnapshot`).
    findByTrackNo: (trackNo) => withSnapshot(findShipment(trackNo)),

    update: (change) => withTransaction(applyChange(change)),

    // The page's rows (the keyset is one backward range of `(customer_no, created_at,
    // track_no)`), then the first and last stop of each, in one snapshot.
    search: (filter, page) => withSnapshot(searchPage(filter, page))
  }

  return shipments
}
