/**
 * Operating the host: request ids, the access log (captured as the JSON lines `serve` prints),
 * `/healthz` and `/readyz` (with draining), and `/metrics` scraped and parsed before and after a
 * booking and a refused request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Logger from "effect/Logger"
import parse, { type ParsedFamily } from "parse-prometheus-text-format"
import { IpBlocks } from "@waybill/core"
import { OPERATOR_TOKEN, postJson, shipment, startHost, type TestAccount, type TestHost } from "./harness.js"

/** The JSON lines the host logs, exactly as `--log-format json` prints them. */
const lines: Array<string> = []
const capture = Logger.map(Logger.jsonLogger, (line) => {
  lines.push(line)
})

interface LogLine {
  readonly message: unknown
  readonly logLevel: string
  readonly timestamp: string
  readonly annotations: Record<string, unknown>
}

const logged = (): Array<LogLine> => lines.map((l) => JSON.parse(l) as LogLine)

let t: TestHost
let account: TestAccount

beforeAll(async () => {
  t = await startHost({ log: { logger: capture } })
  account = await t.newAccount("Observed customer")
})
afterAll(() => t.close())

const book = (headers: Record<string, string>, data: Record<string, unknown> = {}) =>
  postJson(`${t.url}/api/v1/order/json/`, { data: { ...data, shipments: [shipment()] } }, headers)

const scrape = async (): Promise<{ readonly families: Array<ParsedFamily>; readonly text: string }> => {
  const response = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4")
  const text = await response.text()
  return { families: parse(text), text }
}

/**
 * The `_count` of a labelled histogram, read from the text: the parser keeps the buckets, sum and
 * count only of unlabelled histograms.
 */
const histogramCount = (text: string, name: string, labels: string): number =>
  Number(new RegExp(`^${name}_count\\{${labels.replace(/[/.]/g, "\\$&")}\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0)

/** The value of the sample of `name` whose labels include `labels` (0 when absent). */
const sample = (families: ReadonlyArray<ParsedFamily>, name: string, labels: Record<string, string> = {}): number => {
  const family = families.find((f) => f.name === name)
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  return Number(found?.value ?? found?.count ?? 0)
}

describe("request ids", () => {
  it("keeps a well-formed X-Request-Id and replaces anything else by a new ULID", async () => {
    const kept = await fetch(`${t.url}/healthz`, { headers: { "x-request-id": "edge-7.Ab_9" } })
    expect(kept.headers.get("x-request-id")).toBe("edge-7.Ab_9")
    for (const bad of ["has space", "x".repeat(129), "semi;colon", ""]) {
      const replaced = await fetch(`${t.url}/healthz`, { headers: { "x-request-id": bad } })
      expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    }
    const made = await fetch(`${t.url}/api/v1/nowhere/`)
    expect(made.status).toBe(404)
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
  })
})

describe("access log", () => {
  it("logs one JSON line per request with the route, status, duration, customer and client, and no secret", async () => {
    lines.length = 0
    const byHeader = await book({ authorization: `Bearer ${account.testKey}`, "x-request-id": "req-header-1" })
    expect(byHeader.status).toBe(200)
    const byBody = await book({ "x-request-id": "req-body-1" }, { key: account.testKey })
    expect(byBody.status).toBe(200)
    const quote = await fetch(
      `${t.url}/api/v1/utilities/quote/?origin=60601&destination=60201&weight=5&key=${account.liveKey}`,
      { headers: { "x-request-id": "req-query-1" } }
    )
    expect(quote.status).toBe(200)
    const refused = await book({
      authorization: "Bearer wb_test_not_a_real_key_000000000000",
      "x-request-id": "req-bad-1"
    })
    expect(refused.status).toBe(401)
    await fetch(`${t.url}/healthz`, { headers: { "x-request-id": "req-probe-1" } })

    const requestLines = logged().filter((l) => l.message === "request")
    const of = (id: string) => requestLines.filter((l) => l.annotations["request_id"] === id)
    expect(of("req-header-1")).toHaveLength(1)
    const line = of("req-header-1")[0]!
    expect(line.logLevel).toBe("INFO")
    expect(Number.isNaN(Date.parse(line.timestamp))).toBe(false)
    expect(line.annotations).toMatchObject({
      request_id: "req-header-1",
      method: "POST",
      route: "/api/v1/order/json/",
      status: 200,
      customer_no: account.customerNo,
      client: "127.0.0.1"
    })
    expect(typeof line.annotations["duration_ms"]).toBe("number")
    expect(of("req-body-1")[0]?.annotations).toMatchObject({ status: 200, customer_no: account.customerNo })
    expect(of("req-query-1")[0]?.annotations).toMatchObject({
      route: "/api/v1/utilities/quote/",
      status: 200,
      customer_no: account.customerNo
    })
    expect(of("req-bad-1")[0]?.annotations).toMatchObject({ status: 401, customer_no: null })
    // Probes are not logged at info level.
    expect(of("req-probe-1")).toHaveLength(0)

    const all = lines.join("\n")
    for (const secret of [account.testKey, account.liveKey, "wb_test_not_a_real_key", OPERATOR_TOKEN]) {
      expect(all).not.toContain(secret)
    }
  })
})

describe("probes", () => {
  it("answers /healthz and /readyz without credentials, and /readyz turns 503 while draining", async () => {
    const health = await fetch(`${t.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })
    const ready = await fetch(`${t.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: {
        draining: { ok: true },
        database: { ok: true },
        migrations: { ok: true },
        blobs: { ok: true },
        mail: { ok: true }
      }
    })
  })

  it("names the failed check when not ready", async () => {
    const other = await startHost()
    try {
      other.host.setDraining()
      const ready = await fetch(`${other.url}/readyz`)
      expect(ready.status).toBe(503)
      const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean; detail?: string }> }
      expect(body.status).toBe("not ready")
      expect(body.checks["draining"]).toEqual({ ok: false, detail: "shutting down" })
      expect(body.checks["database"]).toEqual({ ok: true })
      // Still alive: only readiness turns.
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200)
    } finally {
      await other.close()
    }
  })
})

describe("/metrics", () => {
  it("needs the operator token", async () => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401)
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401)
  })

  it("counts a booking and a refused request", async () => {
    const before = await scrape()
    expect((await book({ authorization: `Bearer ${account.testKey}` })).status).toBe(200)
    await t.run(IpBlocks.block("127.0.0.1", 60_000, "observability test"))
    try {
      const refused = await fetch(`${t.url}/api/v1/utilities/quote/?origin=60601&destination=60201&weight=5`)
      expect(refused.status).toBe(403)
    } finally {
      await t.run(IpBlocks.unblock("127.0.0.1"))
    }
    const after = await scrape()
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sample(after.families, name, labels) - sample(before.families, name, labels)
    expect(moved("waybill_bookings_total", { mode: "test" })).toBe(1)
    expect(moved("waybill_admission_refusals_total", { reason: "ip_blocked" })).toBe(1)
    expect(moved("waybill_http_requests_total", { route: "/api/v1/order/json/", status: "200" })).toBe(1)
    expect(moved("waybill_http_requests_total", { route: "/api/v1/utilities/quote/", status: "403" })).toBe(1)
    const bookedLatency = (text: string) =>
      histogramCount(text, "waybill_http_request_duration_seconds", 'route="/api/v1/order/json/",status="200"')
    expect(bookedLatency(after.text) - bookedLatency(before.text)).toBe(1)
    expect(after.families.find((f) => f.name === "waybill_http_request_duration_seconds")?.type).toBe("HISTOGRAM")
    expect(after.families.find((f) => f.name === "waybill_webhook_queue_depth")?.metrics[0]?.value).toBe("0")
  })
})
