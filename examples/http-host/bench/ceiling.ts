/**
 * The ceiling: Waybill's own storage work for a booking, written by hand like the floor. It
 * runs on Waybill's schema (created by Waybill's `migrate`) and, for every booking request,
 * issues the statements Waybill issues, in the same order and transactions:
 *
 * - the IP block check and the API key lookup (HMAC-SHA-256 of the key, joined with its account);
 * - per shipment, one unit: the shipment row, its two stop rows (the delivery stop carrying the
 *   leg that arrives at it), the `shipment.booked` event and the webhook fan-out for it
 *   (Waybill's `insert ... select` over the account's subscriptions), under a savepoint of the
 *   transaction that the group commit opens for the bookings of one turn of the event loop and
 *   commits before any of them is answered (as Waybill's SQLite engine does);
 * - the call in the account's activity log, batched (`handActivity.ts`).
 *
 * What it leaves out is everything but storage: no validation beyond the floor's required
 * fields, no sanitizing, ZIP lookup, dates, ETA or rating (the derived columns hold the bench
 * shipment's values, fixed), no effect runtime, no query builder. So ceiling/floor is the most
 * any implementation of Waybill's data model could reach against the floor, and
 * waybill/ceiling is the price of Waybill's code on top of its own writes. bench.test.ts checks
 * that one booking here and one through Waybill leave the same rows in the same tables.
 *
 * Booking only: the documents scenarios do not run against it.
 */
import { createHmac, randomBytes, randomInt } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { migrate, sqliteEngine } from "@waybill/storage-kysely"
import { REQUIRED_FIELDS } from "./floor.js"
import { CUSTOMER_NO, DERIVED, digits, eventId } from "./handBooking.js"
import { ACTIVITY_COLUMNS, activityBatcher, activityValues } from "./handActivity.js"
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

const SHIPMENT_INSERT = `insert into "waybill_shipments" ("track_no", "customer_no", "livemode", "state", "version",
  "driver_id", "contact", "phone", "email", "billing_reference", "service_type", "vehicle_type", "pieces", "weight_lb",
  "signature_required", "liftgate_required", "pickup_instructions", "deliver_instructions", "ready_at",
  "requested_delivery_at", "estimated_delivery_at", "guaranteed_delivery_at", "charge_transport", "charge_weight",
  "charge_stops", "charge_fuel", "charge_extras", "charge_discount", "charge_total", "jsonstrn", "created_at",
  "updated_at") values (?, ?, 1, 'booked', 1, null, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, '', '', ?, ?, ?, ?, ?, ?, ?, ?, ?,
  ?, ?, ?, ?, ?)`

const STOP_COLUMNS = `("track_no", "seq", "role", "external_id", "name", "address", "city", "state", "zip",
  "contact_name", "phone", "note", "latitude", "longitude", "time_zone", "status", "eta_at", "leg_seq", "leg_from",
  "leg_miles")`
// The pickup has no arriving leg; the delivery stop carries leg 0 (from the pickup).
const PICKUP_VALUES = "(?, ?, ?, null, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, 'pending', ?, null, null, null)"
const DELIVERY_VALUES = "(?, ?, ?, null, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, 'pending', ?, 0, 0, ?)"

const KEY_LOOKUP = `select "k".*, "a"."name" as "account_name", "a"."cancel_mode" as "account_cancel_mode",
  "a"."rate_card" as "account_rate_card", "a"."ip_allowlist" as "account_ip_allowlist",
  "a"."created_at" as "account_created_at" from "waybill_api_keys" as "k"
  inner join "waybill_accounts" as "a" on "a"."customer_no" = "k"."customer_no"
  where "k"."hash" = ? and "k"."hash" <> ''`

const FAN_OUT = `insert into "waybill_webhook_deliveries" ("endpoint_id", "event_id", "track_no", "sequence", "status",
  "attempts", "next_attempt_at", "lease_owner", "lease_until", "last_status", "created_at", "updated_at", "claimable")
  select "endpoint_id", ?, ?, 1, 'pending', 0, ?, null, 0, null, ?, ?,
  case when exists (select 1 from "waybill_webhook_deliveries" as "p"
    where "p"."endpoint_id" = "waybill_webhook_subscriptions"."endpoint_id" and "p"."track_no" = ?
    and "p"."status" = 'pending') then 0 else 1 end
  from "waybill_webhook_subscriptions"
  where "customer_no" = ? and "event_type" = 'shipment.booked' and "enabled" = 1`

export const startCeiling: StartTarget = async ({ dbFile, host, port }) => {
  const sqlite = new Database(dbFile)
  for (const p of PRAGMAS) sqlite.pragma(p)
  await Effect.runPromise(migrate(sqliteEngine(sqlite)))
  const pragmas: Record<string, string> = {}
  for (const name of PRAGMA_NAMES) pragmas[name] = pragmaValue(sqlite.pragma(name) as ReadonlyArray<unknown>)

  const pepper = randomBytes(32)
  const keyHash = (key: string): string => createHmac("sha256", pepper).update(key).digest("hex")
  const apiKey = `wb_live_${randomBytes(24).toString("hex")}`
  sqlite
    .prepare(
      `insert into waybill_accounts (customer_no, name, cancel_mode, rate_card, ip_allowlist, created_at)
       values (?, 'Bench customer', 'immediate', null, '[]', ?)`
    )
    .run(CUSTOMER_NO, Date.now())
  sqlite
    .prepare(
      `insert into waybill_api_keys (customer_no, mode, id, status, generation, hash, hint, updated_at)
       values (?, 'live', ?, 'active', 1, ?, ?, ?)`
    )
    .run(CUSTOMER_NO, `key_${CUSTOMER_NO}_live`, keyHash(apiKey), apiKey.slice(-4), Date.now())

  const ipBlock = sqlite.prepare(`select * from "waybill_ip_blocks" where "ip_key" = ?`)
  const keyLookup = sqlite.prepare(KEY_LOOKUP)
  const insertShipment = sqlite.prepare(SHIPMENT_INSERT)
  const insertStops = sqlite.prepare(
    `insert into "waybill_stops" ${STOP_COLUMNS} values ${PICKUP_VALUES}, ${DELIVERY_VALUES}`
  )
  const insertEvent = sqlite.prepare(
    `insert into "waybill_events" ("id", "track_no", "customer_no", "type", "sequence", "livemode", "occurred_at", "data")
     values (?, ?, ?, 'shipment.booked', 1, 1, ?, ?)`
  )
  const fanOut = sqlite.prepare(FAN_OUT)
  const activity = activityBatcher(
    sqlite.transaction((rows) => {
      const values = rows.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")
      sqlite
        .prepare(`insert into "waybill_activity" ${ACTIVITY_COLUMNS} values ${values}`)
        .run(rows.flatMap(activityValues))
    })
  )

  /** One shipment, its stops (with the leg), event and deliveries, as one unit (a savepoint inside the group's transaction, as Waybill's `book`). */
  const bookOne = sqlite.transaction((s: Json, customerNo: string, jsonstrn: string, now: number, trackNo: string) => {
    const d = DERIVED
    const c = d.charge
    const eta = now + d.etaMs
    insertShipment.run(
      trackNo,
      customerNo,
      String(s["Contact"]),
      digits(s["Phone"]),
      String(s["Email"] ?? ""),
      String(s["BillingReference"] ?? ""),
      String(s["ServiceType"]),
      String(s["VehicleType"]),
      d.pieces,
      d.weightLb,
      now,
      now,
      eta,
      now + d.guaranteedMs,
      c.transport,
      c.weight,
      c.stops,
      c.fuel,
      c.extras,
      c.discount,
      c.total,
      jsonstrn,
      now,
      now
    )
    // Waybill's pickup stop carries the shipment's contact; its delivery stop the deliver contact.
    insertStops.run(
      ...[trackNo, 0, "pickup", d.pickup.name, String(s["PickupAddress"]), d.pickup.city, d.pickup.state],
      ...[
        String(s["PickupZip"]),
        String(s["Contact"]),
        digits(s["Phone"]),
        d.pickup.lat,
        d.pickup.lon,
        d.timeZone,
        now
      ],
      ...[trackNo, 1, "delivery", d.delivery.name, String(s["DeliverAddress"]), d.delivery.city, d.delivery.state],
      ...[String(s["DeliverZip"]), "", "", d.delivery.lat, d.delivery.lon, d.timeZone, eta, d.miles]
    )
    const id = eventId(now)
    insertEvent.run(
      id,
      trackNo,
      customerNo,
      now,
      JSON.stringify({
        track_no: trackNo,
        state: "booked",
        service_type: s["ServiceType"],
        vehicle_type: s["VehicleType"],
        ...d.answer,
        estimated_charge: c.total,
        stops: 2,
        pieces: d.pieces,
        weight: d.weightLb
      })
    )
    fanOut.run(id, trackNo, now, now, now, trackNo, customerNo)
  })

  /** Books with a fresh 8-digit tracking number, drawing again on the rare clash (as Waybill). */
  const book = (s: Json, customerNo: string, jsonstrn: string, now: number): string => {
    for (let attempt = 0; ; attempt++) {
      const trackNo = String(randomInt(10_000_000, 100_000_000))
      try {
        bookOne(s, customerNo, jsonstrn, now, trackNo)
        return trackNo
      } catch (e) {
        if (!isPrimaryKeyClash(e) || attempt >= 10) throw e
      }
    }
  }

  /**
   * Waybill's group commit: the bookings that arrive in one turn of the event loop run back to
   * back when it ends, each under its own savepoint (`bookOne`, a better-sqlite3 transaction,
   * nests as one), in one SQLite transaction, and each is answered once its COMMIT returned.
   */
  let queue: Array<{ readonly run: () => Array<string>; readonly done: (result: Array<string> | Error) => void }> = []
  const begin = sqlite.prepare("begin immediate")
  const commit = sqlite.prepare("commit")
  const flush = () => {
    const work = queue
    queue = []
    const results = new Array<Array<string> | Error>(work.length)
    begin.run()
    work.forEach((w, i) => {
      try {
        results[i] = w.run()
      } catch (e) {
        results[i] = e instanceof Error ? e : new Error(String(e))
      }
    })
    try {
      commit.run()
    } catch (e) {
      if (sqlite.inTransaction) sqlite.exec("rollback")
      for (const w of work) w.done(e instanceof Error ? e : new Error(String(e)))
      return
    }
    work.forEach((w, i) => w.done(results[i]!))
  }
  const committed = (run: () => Array<string>): Promise<Array<string>> =>
    new Promise((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ run, done: (result) => (result instanceof Error ? reject(result) : resolve(result)) })
    })

  const createShipments = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (ipBlock.get(req.socket.remoteAddress ?? "") !== undefined) return fail(res, 403, "Access denied.")
    const authorization = req.headers.authorization ?? ""
    const key = authorization.startsWith("Bearer ") ? authorization.slice(7) : ""
    const row = key === "" ? undefined : (keyLookup.get(keyHash(key)) as Json | undefined)
    if (row === undefined || row["status"] !== "active" || row["mode"] !== "live") {
      return fail(res, 401, "Access denied.")
    }
    const customerNo = String(row["customer_no"])
    activity.track(req, res, customerNo, "live")
    const bytes = await readBody(req)
    if (bytes === undefined) return fail(res, 413, "The body is too large.")
    const body = bookingBody(bytes)
    if ("problem" in body) return fail(res, 400, body.problem)
    const problems = missingFields(body.shipments, REQUIRED_FIELDS)
    if (problems.length > 0) return fail(res, 400, problems.join("; "))
    const jsonstrn = typeof body.data["jsonstrn"] === "string" ? body.data["jsonstrn"] : ""
    const now = Date.now()
    const input = body.shipments as ReadonlyArray<Json>
    const trackNos = await committed(() => input.map((s) => book(s, customerNo, jsonstrn, now)))
    const shipments = input.map((s, i) => ({
      order: i + 1,
      result: "success",
      track_no: trackNos[i]!,
      billing_reference: String(s["BillingReference"] ?? ""),
      service_type: s["ServiceType"],
      vehicle_type: s["VehicleType"],
      ...DERIVED.answer,
      estimated_charge: DERIVED.charge.total,
      errors: []
    }))
    sendJson(res, 200, { data: { jsonstrn, shipments_with_errors: 0, shipments }, error: null })
  }

  return servePlainTarget({
    host,
    port,
    apiKey,
    pragmas,
    sqlite,
    tables: { shipments: "waybill_shipments", events: "waybill_events" },
    beforeClose: activity.close,
    route: (req, res) =>
      req.method === "POST" && req.url === "/api/v1/order/json/" ? createShipments(req, res) : undefined
  })
}
