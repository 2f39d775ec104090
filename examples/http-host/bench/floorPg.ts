/**
 * The PostgreSQL floor (`floor-pg`, the floor of the `book-single-pg` scenario): node:http, a
 * `pg` pool of the same size as Waybill's, and, for every booking request, the statements
 * Waybill sends for it on PostgreSQL, text for text and in the same order and transaction:
 *
 * - the IP block check and the API key lookup (HMAC-SHA-256 of the key, joined with its account);
 * - one transaction (`begin` ... `commit` on one pooled connection): the shipment row
 *   (`on conflict do nothing`, a taken tracking number draws again), its two stop rows (the
 *   delivery stop carrying the leg), the `shipment.booked` event and the webhook fan-out.
 *
 * It leaves out everything but HTTP and those statements, as the SQLite ceiling does (ceiling.ts):
 * no validation beyond the floor's required fields, no ZIP lookup, dates, ETA or rating (the
 * derived columns hold the bench shipment's values, fixed), no effect runtime, no query builder.
 * It runs on Waybill's schema, migrated by the orchestrator before it starts (pgSchema.ts), so
 * this module loads no Waybill code. bench.test.ts checks that one booking here and one through
 * Waybill leave the same rows in the same tables.
 */
import { createHmac, randomBytes, randomInt } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { ACTIVITY_COLUMNS, activityBatcher, activityValues } from "./handActivity.js"
import { REQUIRED_FIELDS } from "./floor.js"
import { CUSTOMER_NO, DERIVED, digits, eventId } from "./handBooking.js"
import { bookingBody, closeServer, fail, type Json, listen, missingFields, readBody, sendJson } from "./plainHttp.js"
import { BENCH_POOL_SIZE, pgSettings } from "./postgres.js"
import type { StartTarget } from "./target.js"

/** Waybill's statements on PostgreSQL, as Kysely compiles them (numbered parameters). */
export const STATEMENTS = {
  ipBlock: `select * from "waybill_ip_blocks" where "ip_key" = $1`,
  keyLookup:
    `select "k".*, "a"."name" as "account_name", "a"."cancel_mode" as "account_cancel_mode", ` +
    `"a"."rate_card" as "account_rate_card", "a"."ip_allowlist" as "account_ip_allowlist", ` +
    `"a"."created_at" as "account_created_at" from "waybill_api_keys" as "k" inner join "waybill_accounts" as "a" ` +
    `on "a"."customer_no" = "k"."customer_no" where "k"."hash" = $1 and "k"."hash" <> ''`,
  shipment:
    `insert into "waybill_shipments" ("track_no", "customer_no", "livemode", "state", "version", "driver_id", ` +
    `"contact", "phone", "email", "billing_reference", "service_type", "vehicle_type", "pieces", "weight_lb", ` +
    `"signature_required", "liftgate_required", "pickup_instructions", "deliver_instructions", "ready_at", ` +
    `"requested_delivery_at", "estimated_delivery_at", "guaranteed_delivery_at", "charge_transport", ` +
    `"charge_weight", "charge_stops", "charge_fuel", "charge_extras", "charge_discount", "charge_total", ` +
    `"jsonstrn", "created_at", "updated_at") values (${params(1, 32)}) on conflict do nothing`,
  stops:
    `insert into "waybill_stops" ("track_no", "seq", "role", "external_id", "name", "address", "city", "state", ` +
    `"zip", "contact_name", "phone", "note", "latitude", "longitude", "time_zone", "status", "eta_at", "leg_seq", ` +
    `"leg_from", "leg_miles") values (${params(1, 20)}), (${params(21, 40)})`,
  event:
    `insert into "waybill_events" ("id", "track_no", "customer_no", "type", "sequence", "livemode", ` +
    `"occurred_at", "data") values (${params(1, 8)})`,
  fanOut:
    `insert into "waybill_webhook_deliveries" ("endpoint_id", "event_id", "track_no", "sequence", "status", ` +
    `"attempts", "next_attempt_at", "lease_owner", "lease_until", "last_status", "created_at", "updated_at", ` +
    `"claimable") ` +
    `select "endpoint_id", $1 as "event_id", $2 as "track_no", $3 as "sequence", $4 as "status", ` +
    `$5 as "attempts", $6 as "next_attempt_at", null as "lease_owner", $7 as "lease_until", ` +
    `null as "last_status", $8 as "created_at", $9 as "updated_at", ` +
    `case when exists (select 1 as "one" from "waybill_webhook_deliveries" as "p" ` +
    `where "p"."endpoint_id" = "waybill_webhook_subscriptions"."endpoint_id" and "p"."track_no" = $2 ` +
    `and "p"."status" = 'pending' for share) then 0 else 1 end as "claimable" ` +
    `from "waybill_webhook_subscriptions" ` +
    `where "customer_no" = $10 and "event_type" = $11 and "enabled" = $12`
} as const

function params(from: number, to: number): string {
  return Array.from({ length: to - from + 1 }, (_, i) => `$${from + i}`).join(", ")
}

export const startFloorPg: StartTarget = async ({ host, port, databaseUrl }) => {
  if (databaseUrl === undefined) throw new Error("floor-pg runs on PostgreSQL: give it a database URL")
  const pool = new pg.Pool({ connectionString: databaseUrl, max: BENCH_POOL_SIZE })
  pool.on("error", () => undefined) // an idle connection that broke is replaced at the next checkout
  const pepper = randomBytes(32)
  const keyHash = (key: string): string => createHmac("sha256", pepper).update(key).digest("hex")
  const apiKey = `wb_live_${randomBytes(24).toString("hex")}`
  await pool.query(
    `insert into waybill_accounts (customer_no, name, cancel_mode, rate_card, ip_allowlist, created_at)
     values ($1, 'Bench customer', 'immediate', null, '[]', $2)`,
    [CUSTOMER_NO, Date.now()]
  )
  await pool.query(
    `insert into waybill_api_keys (customer_no, mode, id, status, generation, hash, hint, updated_at)
     values ($1, 'live', $2, 'active', 1, $3, $4, $5)`,
    [CUSTOMER_NO, `key_${CUSTOMER_NO}_live`, keyHash(apiKey), apiKey.slice(-4), Date.now()]
  )
  const activity = activityBatcher(async (rows) => {
    const values = rows.map((_, r) => `(${Array.from({ length: 9 }, (_, c) => `$${r * 9 + c + 1}`).join(", ")})`)
    await pool.query(
      `insert into "waybill_activity" ${ACTIVITY_COLUMNS} values ${values.join(", ")}`,
      rows.flatMap(activityValues)
    )
  })
  const pragmas = await pgSettings(async (text) => (await pool.query(text)).rows, BENCH_POOL_SIZE)

  /** One shipment in one transaction; false when its tracking number was taken (nothing written). */
  const bookOne = async (s: Json, customerNo: string, jsonstrn: string, now: number, trackNo: string) => {
    const d = DERIVED
    const c = d.charge
    const eta = now + d.etaMs
    const client = await pool.connect()
    let broken = false
    try {
      await client.query("begin")
      const inserted = await client.query(STATEMENTS.shipment, [
        ...[trackNo, customerNo, 1, "booked", 1, null, String(s["Contact"]), digits(s["Phone"])],
        ...[String(s["Email"] ?? ""), String(s["BillingReference"] ?? "")],
        ...[String(s["ServiceType"]), String(s["VehicleType"]), d.pieces, d.weightLb, 0, 0, "", ""],
        ...[now, now, eta, now + d.guaranteedMs, c.transport, c.weight, c.stops, c.fuel, c.extras, c.discount],
        ...[c.total, jsonstrn, now, now]
      ])
      if (inserted.rowCount === 0) {
        await client.query("rollback")
        return false
      }
      // Waybill's pickup stop carries the shipment's contact; its delivery stop the deliver contact.
      await client.query(STATEMENTS.stops, [
        ...[trackNo, 0, "pickup", null, d.pickup.name, String(s["PickupAddress"]), d.pickup.city, d.pickup.state],
        ...[String(s["PickupZip"]), String(s["Contact"]), digits(s["Phone"]), "", d.pickup.lat, d.pickup.lon],
        ...[d.timeZone, "pending", now, null, null, null],
        ...[trackNo, 1, "delivery", null, d.delivery.name, String(s["DeliverAddress"]), d.delivery.city],
        ...[d.delivery.state, String(s["DeliverZip"]), "", "", "", d.delivery.lat, d.delivery.lon, d.timeZone],
        ...["pending", eta, 0, 0, d.miles]
      ])
      const id = eventId(now)
      const data = JSON.stringify({
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
      await client.query(STATEMENTS.event, [id, trackNo, customerNo, "shipment.booked", 1, 1, now, data])
      await client.query(STATEMENTS.fanOut, [
        ...[id, trackNo, 1, "pending", 0, now, 0, now, now],
        ...[customerNo, "shipment.booked", 1]
      ])
      await client.query("commit")
      return true
    } catch (error) {
      broken = await client.query("rollback").then(
        () => false,
        () => true
      )
      throw error
    } finally {
      client.release(broken)
    }
  }

  /** Books with a fresh 8-digit tracking number, drawing again on the rare clash (as Waybill). */
  const book = async (s: Json, customerNo: string, jsonstrn: string, now: number): Promise<string> => {
    for (let attempt = 0; attempt <= 10; attempt++) {
      const trackNo = String(randomInt(10_000_000, 100_000_000))
      if (await bookOne(s, customerNo, jsonstrn, now, trackNo)) return trackNo
    }
    throw new Error("no free tracking number in 11 draws")
  }

  const createShipments = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const blocked = await pool.query(STATEMENTS.ipBlock, [req.socket.remoteAddress ?? ""])
    if (blocked.rows.length > 0) return fail(res, 403, "Access denied.")
    const authorization = req.headers.authorization ?? ""
    const key = authorization.startsWith("Bearer ") ? authorization.slice(7) : ""
    const row = key === "" ? undefined : ((await pool.query(STATEMENTS.keyLookup, [keyHash(key)])).rows[0] as Json)
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
    const shipments: Array<Json> = []
    for (const [i, s] of (body.shipments as ReadonlyArray<Json>).entries()) {
      shipments.push({
        order: i + 1,
        result: "success",
        track_no: await book(s, customerNo, jsonstrn, now),
        billing_reference: String(s["BillingReference"] ?? ""),
        service_type: s["ServiceType"],
        vehicle_type: s["VehicleType"],
        ...DERIVED.answer,
        estimated_charge: DERIVED.charge.total,
        errors: []
      })
    }
    sendJson(res, 200, { data: { jsonstrn, shipments_with_errors: 0, shipments }, error: null })
  }

  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    if (req.method !== "POST" || req.url !== "/api/v1/order/json/") return fail(res, 404, "Not found.")
    createShipments(req, res).catch(() => {
      if (!res.headersSent) fail(res, 503, "The service is temporarily unavailable.")
      else res.destroy()
    })
  })
  const url = await listen(server, host, port)
  const count = async (table: string) => Number((await pool.query(`select count(*)::int as n from ${table}`)).rows[0].n)
  return {
    url,
    apiKey,
    pragmas,
    rowCounts: async () => ({ shipments: await count("waybill_shipments"), events: await count("waybill_events") }),
    close: async () => {
      await closeServer(server)
      await activity.close()
      await pool.end()
    }
  }
}
