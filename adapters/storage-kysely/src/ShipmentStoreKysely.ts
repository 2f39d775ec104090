/**
 * @module ShipmentStoreKysely
 *
 * `ShipmentStore` over Kysely: shipments with their stops, legs and pieces.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sql } from "kysely"
import type { Connection } from "./internal/connection.js"
import * as Rows from "./internal/rows.js"
import { DuplicateKey, type ShipmentStoreShape, StorageError, VersionConflict } from "./internal/core.js"

/** `ShipmentStore` over Kysely: shipments with their stops, legs and pieces. */
export const makeShipmentStore = (conn: Connection): ShipmentStoreShape => {
  const { compileInsert, execute, first, rows, write, withSnapshot, withTransaction } = conn

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

  const shipments: ShipmentStoreShape = {
    // The booking hot path: one statement per table, in one transaction (legs ride on the stop
    // rows they arrive at).
    insert: (s) =>
      withTransaction(
        Effect.gen(function* () {
          const stops = Rows.stopRows(s.trackNo, s.stops, s.legs)
          if (typeof stops === "string") {
            return yield* new StorageError({ operation: "shipments.insert", cause: new Error(stops) })
          }
          // A taken tracking number is reported without raising an error: inside an enclosing
          // PostgreSQL transaction (an `Idempotency-Key` booking runs in one) a unique violation
          // would abort the whole transaction, and the caller could not draw another number.
          const row = compileInsert("waybill_shipments", [Rows.shipmentRow(s)])
          const inserted = yield* execute("shipments.insert", {
            sql: `${row.sql} on conflict do nothing`,
            parameters: row.parameters
          })
          if (Number(inserted.numAffectedRows ?? 0n) === 0) return yield* new DuplicateKey({ what: "track_no" })
          if (stops.length > 0) yield* execute("stops.insert", compileInsert("waybill_stops", stops))
          if (s.pieceDetails.length > 0) {
            yield* execute(
              "pieces.insert",
              compileInsert("waybill_pieces", s.pieceDetails.map(Rows.pieceRow(s.trackNo)))
            )
          }
        })
      ),

    // In one snapshot so the shipment row and its stops come from the same moment (a
    // concurrent update cannot land between the reads and pair an old version with new
    // stop statuses; on PostgreSQL this takes `repeatable read`, see `withSnapshot`).
    findByTrackNo: (trackNo) =>
      withSnapshot(
        Effect.gen(function* () {
          const row = yield* first("shipments.select", (c) =>
            c.selectFrom("waybill_shipments").selectAll().where("track_no", "=", trackNo)
          )
          if (row === undefined) return Option.none()
          const { legs, pieces, stops } = yield* children(trackNo)
          return Option.some(Rows.toShipment(row, stops, legs, pieces))
        })
      ),

    update: (change) =>
      withTransaction(
        Effect.gen(function* () {
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
      )
  }

  return shipments
}
