/**
 * The bench scenarios: a small registry. Each scenario names one HTTP request that every target
 * is loaded with, a full check of one answer (run once per target before any load, so a broken
 * target fails loudly instead of benchmarking its error path), a cheap check applied to every
 * answer during the load, and the rows each successful answer must leave behind.
 *
 * To add a scenario (document lookup, label download, webhook delivery, ...): write one more
 * `Scenario`, append it to {@link SCENARIOS}, and give the floor (floor.ts) a minimal handler
 * for the same route. If it needs data first (a booked shipment to look up), do that in
 * `prepare` through the target's own API, so both targets are set up the same way.
 */
import { sampleShipment } from "../src/sample.js"
import type { Scenario, Session } from "./scenarioTypes.js"
import type { TargetName } from "./target.js"
import { docsDownload, docsLookup100 } from "./documentScenarios.js"

export type { RequestSpec, Scenario, Session } from "./scenarioTypes.js"

/** The targets, of those selected, that `scenario` runs against. */
export const targetsOf = (scenario: Scenario, selected: ReadonlyArray<TargetName>): ReadonlyArray<TargetName> =>
  scenario.targets === undefined ? selected : selected.filter((t) => scenario.targets!.includes(t))

const bearer = (session: Session) => ({ authorization: `Bearer ${session.apiKey}` })

/**
 * A valid single-stop shipment in Chicago, bookable at any time of day (`src/sample.ts`, which
 * imports nothing, so the load generator still does not load the host).
 */
export const SHIPMENT = sampleShipment()

/** The booking body, byte for byte the same for every target and every request. */
export const BOOKING_BODY = JSON.stringify({ data: { jsonstrn: "bench", shipments: [SHIPMENT] } })

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The create-shipments success envelope for exactly one booked shipment. */
export const checkSingleBooking = (status: number, body: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (status !== 200) problems.push(`status ${status}, expected 200`)
  if (!isObject(body)) return [...problems, `body is not a JSON object: ${JSON.stringify(body)}`]
  if (body["error"] !== null) problems.push(`error is ${JSON.stringify(body["error"])}, expected null`)
  const data = body["data"]
  if (!isObject(data)) return [...problems, "data is not an object"]
  if (data["jsonstrn"] !== "bench")
    problems.push(`data.jsonstrn is ${JSON.stringify(data["jsonstrn"])}, expected "bench"`)
  if (data["shipments_with_errors"] !== 0)
    problems.push(`data.shipments_with_errors is ${JSON.stringify(data["shipments_with_errors"])}`)
  const shipments = data["shipments"]
  if (!Array.isArray(shipments) || shipments.length !== 1)
    return [...problems, "data.shipments does not hold exactly one result"]
  const s: unknown = shipments[0]
  if (!isObject(s)) return [...problems, "data.shipments[0] is not an object"]
  if (s["order"] !== 1) problems.push(`shipments[0].order is ${JSON.stringify(s["order"])}`)
  if (s["result"] !== "success")
    problems.push(`shipments[0].result is ${JSON.stringify(s["result"])}: ${JSON.stringify(s["errors"])}`)
  if (typeof s["track_no"] !== "string" || !/^[1-9]\d{7}$/.test(s["track_no"])) {
    problems.push(`shipments[0].track_no is ${JSON.stringify(s["track_no"])}, expected 8 digits`)
  }
  return problems
}

export const bookSingle: Scenario = {
  name: "book-single",
  description:
    "POST /api/v1/order/json/ with one valid shipment (Bearer key): validation, rating, shipment + event write",
  request: (session) => ({
    method: "POST",
    path: "/api/v1/order/json/",
    headers: { "content-type": "application/json", ...bearer(session) },
    body: BOOKING_BODY
  }),
  check: checkSingleBooking,
  quickCheck: (body) => body.includes('"result":"success"') && body.includes('"error":null'),
  writesPerRequest: { shipments: 1, events: 1 }
}

/**
 * Booking on PostgreSQL (issue 14): Waybill's host on a fresh database against the PostgreSQL
 * floor (floorPg.ts: node:http, a `pg` pool and Waybill's own statements for the booking).
 */
export const bookSinglePg: Scenario = {
  ...bookSingle,
  name: "book-single-pg",
  description:
    "POST /api/v1/order/json/ on PostgreSQL: Waybill's host against node:http + pg sending Waybill's statements",
  targets: ["waybill", "floor"],
  database: "postgres"
}

/**
 * Two Waybill hosts on one PostgreSQL database, the load split across them: what a second host
 * adds, or costs, on this machine (docs/benchmarks.md says what it can and cannot show).
 */
export const bookSinglePg2Hosts: Scenario = {
  ...bookSinglePg,
  name: "book-single-pg-2hosts",
  description: "the same booking on PostgreSQL, two Waybill hosts on one database, the load split across them",
  targets: ["waybill"],
  hosts: 2
}

export const SCENARIOS: ReadonlyArray<Scenario> = [
  bookSingle,
  docsLookup100,
  docsDownload,
  bookSinglePg,
  bookSinglePg2Hosts
]

/**
 * The webhook drain (bench/webhooks.ts): not an HTTP request a client sends, so not a
 * `Scenario`, but selected by the same `BENCH_SCENARIOS` list.
 */
export const WEBHOOK_DRAIN = "webhook-drain"

const namesOf = (filter: string | undefined): ReadonlyArray<string> | undefined => {
  if (filter === undefined || filter.trim() === "") return undefined
  const names = filter
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const known = [...SCENARIOS.map((s) => s.name), WEBHOOK_DRAIN]
  const unknown = names.filter((n) => !known.includes(n))
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(", ")}; known: ${known.join(", ")}`)
  return names
}

/** The HTTP scenarios named in `filter` (comma-separated), or all of them; unknown names throw. */
export const selectScenarios = (filter: string | undefined): ReadonlyArray<Scenario> => {
  const names = namesOf(filter)
  return names === undefined ? SCENARIOS : SCENARIOS.filter((s) => names.includes(s.name))
}

/** Whether `filter` selects the webhook drain (it does when empty). */
export const selectsWebhookDrain = (filter: string | undefined): boolean => {
  const names = namesOf(filter)
  return names === undefined || names.includes(WEBHOOK_DRAIN)
}
