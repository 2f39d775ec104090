/**
 * `/healthz`, `/readyz` and `/metrics` through `createHandler`, with the hooks a host supplies:
 * readiness failures are named (a rejecting hook without its message), metrics need the operator
 * token and a hook, and probes log at debug level while other requests log at info with the
 * route's pattern.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Config, Geo, RateLimits, WaybillConfig } from "@waybill/core"
import { createHandler, type HandlerOptions, type HandlerRequirements } from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const ports = Layer.mergeAll(
  WaybillConfig.layer(Config.defaults),
  noBlocks,
  Layer.succeed(Geo, { lookup: () => Effect.succeed(Option.none()) }),
  RateLimits.memory
) as unknown as Layer.Layer<HandlerRequirements, never>

interface Line {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

const withHandler = async (
  options: HandlerOptions,
  body: (get: (path: string, headers?: Record<string, string>) => Promise<Response>) => Promise<void>
): Promise<ReadonlyArray<Line>> => {
  const lines: Array<Line> = []
  const capture = Logger.make<unknown, void>(({ logLevel, message, annotations }) => {
    lines.push({ level: logLevel.label, message, annotations: Object.fromEntries(annotations) })
  })
  const layer = Layer.mergeAll(
    ports,
    Logger.replace(Logger.defaultLogger, capture),
    Logger.minimumLogLevel(LogLevel.Debug)
  )
  const waybill = createHandler(layer, options)
  try {
    await body((path, headers = {}) =>
      waybill.handler(new Request(`http://127.0.0.1${path}`, { headers }), { remoteAddress: "192.0.2.9" })
    )
  } finally {
    await waybill.dispose()
  }
  return lines
}

const TOKEN = "op_probe_test_token"

describe("probes", () => {
  it("/readyz names the failing check, and reports a rejecting hook without its message", async () => {
    let fail = false
    const lines = await withHandler(
      {
        readiness: () =>
          fail
            ? Promise.reject(new Error("postgres://user:secret@db/prod refused"))
            : Promise.resolve([
                { name: "database", ok: true },
                { name: "mail", ok: false, detail: "the mail folder is not writable" }
              ])
      },
      async (get) => {
        const notReady = await get("/readyz")
        expect(notReady.status).toBe(503)
        expect(notReady.headers.get("cache-control")).toBe("no-store")
        expect(await notReady.json()).toEqual({
          status: "not ready",
          checks: { database: { ok: true }, mail: { ok: false, detail: "the mail folder is not writable" } }
        })
        fail = true
        const rejected = await get("/readyz/")
        expect(rejected.status).toBe(503)
        const text = await rejected.text()
        expect(JSON.parse(text)).toEqual({
          status: "not ready",
          checks: { readiness: { ok: false, detail: "the readiness check failed" } }
        })
        expect(text).not.toContain("secret")
      }
    )
    expect(lines.some((l) => JSON.stringify(l.message).includes("readiness hook failed"))).toBe(true)
    expect(JSON.stringify(lines)).not.toContain("secret")
  })

  it("/readyz is ready without a hook, /healthz always answers", async () => {
    await withHandler({}, async (get) => {
      expect(await (await get("/readyz")).json()).toEqual({ status: "ready", checks: {} })
      expect(await (await get("/healthz")).json()).toEqual({ status: "ok" })
    })
  })

  it("/metrics needs a token configured, the right token and a hook", async () => {
    const page = () => Promise.resolve({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "x 1\n" })
    await withHandler({ metrics: page }, async (get) => {
      // No operator token configured: the route does not exist.
      expect((await get("/metrics", { authorization: `Bearer ${TOKEN}` })).status).toBe(404)
    })
    await withHandler({ operatorToken: Redacted.make(TOKEN) }, async (get) => {
      expect((await get("/metrics", { authorization: `Bearer ${TOKEN}` })).status).toBe(404)
    })
    await withHandler({ operatorToken: Redacted.make(TOKEN), metrics: page }, async (get) => {
      expect((await get("/metrics")).status).toBe(401)
      expect((await get("/metrics", { authorization: "Bearer op_probe_test_tokeN" })).status).toBe(401)
      const ok = await get("/metrics", { authorization: `Bearer ${TOKEN}` })
      expect(ok.status).toBe(200)
      expect(ok.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      expect(await ok.text()).toBe("x 1\n")
    })
  })

  it("logs probes at debug and other requests at info, labelled by route pattern, with the request id", async () => {
    const lines = await withHandler({ operatorToken: Redacted.make(TOKEN) }, async (get) => {
      await get("/healthz", { "x-request-id": "probe-1" })
      await get("/ops/v1/shipments/ABC123/", { "x-request-id": "ops-1" })
      await get("/no/such/path?key=wb_live_secret", { "x-request-id": "miss-1" })
    })
    const request = (id: string) =>
      lines.find((l) => l.annotations["request_id"] === id && l.annotations["route"] !== undefined)
    expect(request("probe-1")).toMatchObject({ level: "DEBUG", annotations: { route: "/healthz/", status: 200 } })
    expect(request("ops-1")).toMatchObject({
      level: "INFO",
      annotations: { route: "/ops/v1/shipments/{track_no}/", status: 401, client: "192.0.2.9" }
    })
    expect(request("miss-1")).toMatchObject({ level: "INFO", annotations: { route: "unmatched", status: 404 } })
    expect(JSON.stringify(lines)).not.toContain("wb_live_secret")
  })
})
