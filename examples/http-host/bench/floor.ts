/**
 * The floor: the least a server can do and still honestly "book a shipment" over the same wire
 * request. node:http, no framework: read the body (with a size cap), JSON.parse it, check the
 * Bearer token against the one it issued and that each shipment names a few required fields,
 * then one better-sqlite3 transaction with prepared statements inserts a shipment row and an
 * event row per shipment, and a small JSON envelope goes back.
 *
 * What it deliberately does not do (and Waybill does): key hashing and lookup in storage,
 * per-field sanitizing, ZIP and time-zone resolution, date parsing, ETA, rating, stops and legs,
 * a query builder, an effect runtime, Fetch Request/Response objects. The ratio Waybill/floor
 * is therefore the price of all of that on top of the same HTTP and SQLite work.
 */
import { randomBytes, randomInt, randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { dirname } from "node:path"
import Database from "better-sqlite3"
import { floorDocuments } from "./floorDocuments.js"
import {
  bookingBody,
  fail,
  isPrimaryKeyClash,
  type Json,
  missingFields,
  readBody,
  sendJson,
  servePlainTarget
} from "./plainHttp.js"
import { PRAGMA_NAMES, PRAGMAS, pragmaValue } from "./sqlite.js"
import type { StartTarget } from "./target.js"

/** Fields whose presence the floor checks on every shipment (non-empty string or number). */
export const REQUIRED_FIELDS: ReadonlyArray<string> = [
  "Contact",
  "Phone",
  "PickupAddress",
  "PickupZip",
  "DeliverAddress",
  "DeliverZip",
  "ServiceType",
  "VehicleType"
]

const SCHEMA = `
create table if not exists floor_shipments (
  track_no     text primary key,
  customer_no  text not null,
  contact      text not null,
  phone        text not null,
  pickup_zip   text not null,
  deliver_zip  text not null,
  service_type text not null,
  vehicle_type text not null,
  jsonstrn     text not null,
  input        text not null,
  created_at   integer not null
);
create table if not exists floor_events (
  id          text primary key,
  track_no    text not null references floor_shipments(track_no),
  type        text not null,
  data        text not null,
  occurred_at integer not null
);
`

const CUSTOMER_NO = "1000001"

export const startFloor: StartTarget = async ({ dbFile, host, port }) => {
  const sqlite = new Database(dbFile)
  for (const p of PRAGMAS) sqlite.pragma(p)
  sqlite.exec(SCHEMA)
  const pragmas: Record<string, string> = {}
  for (const name of PRAGMA_NAMES) pragmas[name] = pragmaValue(sqlite.pragma(name) as ReadonlyArray<unknown>)

  const insertShipment = sqlite.prepare(
    `insert into floor_shipments
       (track_no, customer_no, contact, phone, pickup_zip, deliver_zip, service_type, vehicle_type, jsonstrn, input, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const insertEvent = sqlite.prepare(
    `insert into floor_events (id, track_no, type, data, occurred_at) values (?, ?, ?, ?, ?)`
  )

  /** Inserts every shipment with its event, atomically; returns the tracking numbers. */
  const book = sqlite.transaction(
    (shipments: ReadonlyArray<Json>, jsonstrn: string, now: number): Array<string> =>
      shipments.map((s) => {
        for (let attempt = 0; ; attempt++) {
          // 8 digits, first one non-zero, like Waybill's; retried on the rare clash.
          const trackNo = String(randomInt(10_000_000, 100_000_000))
          try {
            insertShipment.run(
              trackNo,
              CUSTOMER_NO,
              String(s["Contact"]),
              String(s["Phone"]),
              String(s["PickupZip"]),
              String(s["DeliverZip"]),
              String(s["ServiceType"]),
              String(s["VehicleType"]),
              jsonstrn,
              JSON.stringify(s),
              now
            )
          } catch (e) {
            if (isPrimaryKeyClash(e) && attempt < 10) continue
            throw e
          }
          insertEvent.run(
            `evt_${randomUUID()}`,
            trackNo,
            "shipment.booked",
            JSON.stringify({
              track_no: trackNo,
              state: "booked",
              service_type: s["ServiceType"],
              vehicle_type: s["VehicleType"]
            }),
            now
          )
          return trackNo
        }
      })
  )

  const apiKey = `floor_${randomBytes(24).toString("hex")}`
  const expectedAuthorization = `Bearer ${apiKey}`
  const documents = floorDocuments(sqlite, dirname(dbFile), expectedAuthorization, CUSTOMER_NO)

  const createShipments = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers.authorization !== expectedAuthorization) return fail(res, 401, "Access denied.")
    const bytes = await readBody(req)
    if (bytes === undefined) return fail(res, 413, "The body is too large.")
    const body = bookingBody(bytes)
    if ("problem" in body) return fail(res, 400, body.problem)
    const problems = missingFields(body.shipments, REQUIRED_FIELDS)
    if (problems.length > 0) return fail(res, 400, problems.join("; "))
    const jsonstrn = typeof body.data["jsonstrn"] === "string" ? body.data["jsonstrn"] : ""
    const trackNos = book(body.shipments as ReadonlyArray<Json>, jsonstrn, Date.now())
    sendJson(res, 200, {
      data: {
        jsonstrn,
        shipments_with_errors: 0,
        shipments: trackNos.map((track_no, i) => ({ order: i + 1, result: "success", track_no }))
      },
      error: null
    })
  }

  /** Exact-path routes, as in Waybill's handler; later scenarios add theirs here. */
  const routes: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>> = {
    "POST /api/v1/order/json/": createShipments
  }

  return servePlainTarget({
    host,
    port,
    apiKey,
    pragmas,
    sqlite,
    tables: { shipments: "floor_shipments", events: "floor_events" },
    route: (req, res) => {
      const route = routes[`${req.method} ${req.url}`]
      return route === undefined ? documents(req, res) : route(req, res)
    }
  })
}
