/**
 * `handleRaw` against `handler`: the same answers from a plain request (body as `bodyBytes`) as
 * from a Fetch `Request`, and `toResponse` keeping every field. The layer provides only what the
 * requests below reach (configuration, an empty IP blocklist, no ZIP codes, the memory rate limiter); the
 * handler is typed for the full set of ports.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Config, Geo, RateLimits, WaybillConfig } from "@waybill/core"
import { readBody } from "../src/internal/body.js"
import {
  createHandler,
  type HandlerRequirements,
  rawHandlerOf,
  type Reply,
  toResponse,
  type WaybillRequest
} from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const LIMIT = 2048
const config = { ...Config.defaults, booking: { ...Config.defaults.booking, maxBodyBytes: LIMIT } }
const noZips = Layer.succeed(Geo, { lookup: () => Effect.succeed(Option.none()) })
const layer = Layer.mergeAll(
  WaybillConfig.layer(config),
  noBlocks,
  noZips,
  RateLimits.memory
) as unknown as Layer.Layer<HandlerRequirements, never>

interface Case {
  readonly method: string
  readonly path: string
  readonly headers?: ReadonlyArray<readonly [string, string]>
  readonly body?: string
}

const ORIGIN = "http://127.0.0.1"
const encoder = new TextEncoder()

const fetchRequest = (c: Case) =>
  new Request(`${ORIGIN}${c.path}`, {
    method: c.method,
    headers: c.headers?.map(([n, v]) => [n, v] as [string, string]) ?? [],
    ...(c.body === undefined ? {} : { body: encoder.encode(c.body) })
  })

/** The plain shape a server bridge builds: header lookup only, the body already read. */
const rawRequest = (c: Case): WaybillRequest => {
  const headers = new Headers(c.headers?.map(([n, v]) => [n, v] as [string, string]) ?? [])
  return {
    method: c.method,
    url: `${ORIGIN}${c.path}`,
    headers: { get: (name) => headers.get(name) },
    body: null,
    ...(c.body === undefined ? {} : { bodyBytes: encoder.encode(c.body) })
  }
}

const json = ["content-type", "application/json"] as const
const cases: ReadonlyArray<Case> = [
  { method: "POST", path: "/api/v1/order/json/", headers: [["authorization", "Bearer a, Bearer b"], json], body: "{}" },
  { method: "POST", path: "/api/v1/order/json/", headers: [["content-type", "text/plain"]], body: "{}" },
  { method: "POST", path: "/api/v1/order/json/", headers: [json], body: "{not json" },
  { method: "POST", path: "/api/v1/order/json/", headers: [json], body: `{"x":"${"y".repeat(LIMIT)}"}` },
  {
    method: "POST",
    path: "/api/v1/order/json/",
    headers: [json, ["content-length", String(LIMIT * 2)]],
    body: "{}"
  },
  { method: "GET", path: "/api/v1/order/json/" },
  { method: "HEAD", path: "/api/v1/nowhere/" },
  { method: "PUT", path: "/api/v1/accountsetup/verify/" },
  { method: "DELETE", path: "/api/v1/order/docs/download/" },
  { method: "GET", path: "/api/v1/utilities/quote/?origin=x" },
  { method: "GET", path: "/ops/v1/shipments/ABC/" }
]

describe("handleRaw", () => {
  it("answers what handler answers: status, every field, body", async () => {
    // One handler per side, so each has its own rate-limit counters.
    const fetchSide = createHandler(layer)
    const rawSide = createHandler(layer)
    // Seconds to the window's reset may tick between the two calls; request ids are new per answer.
    const fields = (r: Response) =>
      [...r.headers].map(([n, v]) => [n, n === "x-request-id" ? "_" : v.replace(/;t=\d+$/, ";t=_")])
    try {
      for (const c of cases) {
        const viaFetch = await fetchSide.handler(fetchRequest(c), { remoteAddress: "192.0.2.7" })
        const raw = toResponse(await rawSide.handleRaw(rawRequest(c), { remoteAddress: "192.0.2.7" }))
        const label = `${c.method} ${c.path}`
        expect(viaFetch.status, label).toBeLessThan(500) // answered by the route, not a missing port
        expect(raw.status, label).toBe(viaFetch.status)
        expect(fields(raw), label).toEqual(fields(viaFetch))
        expect(await raw.text(), label).toBe(await viaFetch.text())
      }
    } finally {
      await fetchSide.dispose()
      await rawSide.dispose()
    }
  })

  it("keeps the Fetch semantics the bridges rely on: doubled keys refused, limits, RateLimit fields", async () => {
    const waybill = createHandler(layer)
    try {
      const reply = async (c: Case) => {
        const r = await waybill.handleRaw(rawRequest(c), { remoteAddress: "192.0.2.8" })
        const body = typeof r.body === "string" ? r.body : new TextDecoder().decode(r.body as Uint8Array)
        return { ...r, json: JSON.parse(body) as { error: { message: string } | null } }
      }
      const doubled = await reply(cases[0]!)
      expect(doubled.status).toBe(401)
      expect(doubled.json.error?.message).toBe("Access denied.")
      expect((await reply(cases[3]!)).status).toBe(413)
      expect((await reply(cases[4]!)).status).toBe(413)
      const quote = await reply(cases[9]!)
      expect(quote.status).toBe(400)
      expect(quote.headers["ratelimit-policy"]).toMatch(/^"ip";q=\d+;w=\d+$/)
      expect(quote.headers["cache-control"]).toBe("no-store")
    } finally {
      await waybill.dispose()
    }
  })

  it("answers 503 on both entry points when the layer cannot be built", async () => {
    const broken = createHandler(Layer.fail("no database") as unknown as Layer.Layer<HandlerRequirements, string>)
    try {
      const raw = await broken.handleRaw(rawRequest({ method: "GET", path: "/api/v1/nowhere/" }))
      const viaFetch = await broken.handler(fetchRequest({ method: "GET", path: "/api/v1/nowhere/" }))
      expect(raw.status).toBe(503)
      expect(viaFetch.status).toBe(503)
      expect(await toResponse(raw).text()).toBe(await viaFetch.text())
    } finally {
      await broken.dispose()
    }
  })

  it("links createHandler's handler function to its raw entry point", async () => {
    const waybill = createHandler(layer)
    expect(rawHandlerOf(waybill.handler)).toBe(waybill.handleRaw)
    expect(rawHandlerOf(async () => new Response())).toBeUndefined()
    await waybill.dispose()
  })
})

describe("toResponse", () => {
  it("keeps every set-cookie, joins other repeated fields, and labels bare text", async () => {
    const reply: Reply = {
      status: 202,
      headers: { "set-cookie": ["a=1", "b=2"], vary: ["accept", "origin"], "x-one": "1" },
      body: "hello"
    }
    const response = toResponse(reply)
    expect(response.status).toBe(202)
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"])
    expect(response.headers.get("vary")).toBe("accept, origin")
    expect(response.headers.get("content-type")).toBe("text/plain;charset=UTF-8")
    expect(await response.text()).toBe("hello")
  })
})

describe("readBody with bodyBytes", () => {
  const withBytes = (bytes: Uint8Array, headers: Record<string, string> = {}): WaybillRequest => ({
    method: "POST",
    url: "https://x.test/",
    headers: { get: (name) => headers[name] ?? null },
    body: null,
    bodyBytes: bytes
  })

  it.effect("returns a copy the caller owns, as a plain Uint8Array", () =>
    Effect.gen(function* () {
      const pool = Buffer.from("..hello..")
      const view = pool.subarray(2, 7)
      const bytes = yield* readBody(withBytes(view), 10)
      expect(new TextDecoder().decode(bytes)).toBe("hello")
      expect(Buffer.isBuffer(bytes)).toBe(false)
      expect(bytes.byteOffset).toBe(0)
      expect(bytes.buffer.byteLength).toBe(5)
    })
  )

  it.effect("refuses bytes over the limit, and a declared length over it before looking at them", () =>
    Effect.gen(function* () {
      const over = yield* Effect.exit(readBody(withBytes(new Uint8Array(11)), 10))
      expect(Exit.isFailure(over) && JSON.stringify(over.cause)).toContain("BodyTooLarge")
      const declared = yield* Effect.exit(readBody(withBytes(new Uint8Array(1), { "content-length": "5000" }), 10))
      expect(Exit.isFailure(declared) && JSON.stringify(declared.cause)).toContain("BodyTooLarge")
    })
  )

  it.effect("prefers bodyBytes to the stream", () =>
    Effect.gen(function* () {
      const request = {
        ...withBytes(encoder.encode("bytes")),
        body: new ReadableStream<Uint8Array>({ start: (c) => c.error(new Error("not to be read")) })
      }
      expect(new TextDecoder().decode(yield* readBody(request, 10))).toBe("bytes")
    })
  )
})
