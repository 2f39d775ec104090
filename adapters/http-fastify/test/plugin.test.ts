/**
 * The Fastify plugin over real sockets: what reaches `handleRaw` (method, full URL, headers with
 * Fetch semantics, the body as untouched bytes past Fastify's parsers and `bodyLimit`, the peer
 * address) and what reaches the client (status, fields, streamed and HEAD bodies). A recording
 * `handleRaw` stands in for Waybill where the test is about the bridge; the real handler (over an
 * empty layer: routing needs no port) checks that Waybill's own envelopes come through. Booking
 * and downloading through Fastify with every port is `examples/frameworks/test/fastify.test.ts`.
 */
import type { AddressInfo } from "node:net"
import Fastify, { type FastifyInstance } from "fastify"
import * as Layer from "effect/Layer"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { createHandler, type HandlerRequirements, type Reply, type WaybillRequest } from "@waybill/http"
import { waybillFastify, type WaybillFastifyOptions } from "../src/index.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly authorization: string | null
  readonly contentType: string | null
  readonly bodyLength: number
  readonly bodyText: string
  readonly remoteAddress: string | null
}

/** A `handleRaw` that reads the whole body and answers what it saw, as JSON. */
const recording = {
  handleRaw: async (request: WaybillRequest, info?: { remoteAddress?: string }): Promise<Reply> => {
    const bytes =
      request.body === null ? new Uint8Array(0) : new Uint8Array(await new Response(request.body).arrayBuffer())
    const seen: Seen = {
      method: request.method,
      url: request.url,
      authorization: request.headers.get("authorization"),
      contentType: request.headers.get("content-type"),
      bodyLength: bytes.byteLength,
      bodyText: bytes.byteLength < 1000 ? new TextDecoder().decode(bytes) : "",
      remoteAddress: info?.remoteAddress ?? null
    }
    return {
      status: 201,
      headers: { "content-type": "application/json; charset=utf-8", "set-cookie": ["a=1", "b=2"], vary: ["x", "y"] },
      body: JSON.stringify(seen)
    }
  }
}

const apps: Array<FastifyInstance> = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

/** A Fastify app with its own JSON route and Waybill registered; resolves to its base URL. */
const start = async (options: WaybillFastifyOptions): Promise<string> => {
  const app = Fastify()
  apps.push(app)
  app.post("/team/echo", async (request) => ({ parsed: request.body }))
  await app.register(waybillFastify, options)
  await app.listen({ port: 0, host: "127.0.0.1" })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

describe("waybillFastify", () => {
  it("hands Waybill the full URL, the method, the peer address and Fetch-joined headers", async () => {
    const url = await start({ waybill: recording })
    const r = await fetch(`${url}/api/v1/order/json/?a=1`, {
      method: "POST",
      headers: [
        ["content-type", "application/json"],
        ["authorization", "Bearer one"],
        ["authorization", "Bearer two"]
      ],
      body: '{"data":{}}'
    })
    expect(r.status).toBe(201)
    expect(r.headers.getSetCookie()).toEqual(["a=1", "b=2"])
    expect(r.headers.get("vary")).toBe("x, y")
    expect(await r.json()).toEqual({
      method: "POST",
      url: `${url}/api/v1/order/json/?a=1`,
      // A doubled Authorization reads as both values (so Waybill refuses it), as Fetch reads it.
      authorization: "Bearer one, Bearer two",
      contentType: "application/json",
      bodyLength: 11,
      bodyText: '{"data":{}}',
      remoteAddress: "127.0.0.1"
    })
  })

  it("keeps Fastify's body parsing away: invalid JSON, a body past bodyLimit and odd media types arrive as bytes", async () => {
    const url = await start({ waybill: recording })
    const invalid = await fetch(`${url}/api/v1/order/json/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json"
    })
    expect(((await invalid.json()) as Seen).bodyText).toBe("{not json")
    // Fastify's default bodyLimit is 1 MiB; Waybill applies its own limits while reading.
    const big = new Uint8Array(3 * 1024 * 1024).fill(65)
    const large = await fetch(`${url}/api/v1/order/json/`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: big
    })
    expect(((await large.json()) as Seen).bodyLength).toBe(big.byteLength)
    // A Content-Type Fastify finds malformed (its own 415) is Waybill's to judge.
    const odd = await fetch(`${url}/api/v1/order/json/`, {
      method: "POST",
      headers: { "content-type": "not a media type" },
      body: "x"
    })
    expect(odd.status).toBe(201)
    expect(await odd.json()).toMatchObject({ contentType: "not a media type", bodyText: "x" })
    // Chunked, without a Content-Type.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("chunk-1 "))
        controller.enqueue(new TextEncoder().encode("chunk-2"))
        controller.close()
      }
    })
    const chunked = await fetch(`${url}/ops/v1/webhooks/`, {
      method: "POST",
      body: stream,
      duplex: "half"
    } as RequestInit)
    expect(await chunked.json()).toMatchObject({ contentType: null, bodyText: "chunk-1 chunk-2" })
  })

  it("leaves the app's other routes and their JSON parsing as they were", async () => {
    const url = await start({ waybill: recording })
    const r = await fetch(`${url}/team/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"x":1}'
    })
    expect(await r.json()).toEqual({ parsed: { x: 1 } })
    const outside = await fetch(`${url}/api/v2/order/json/`)
    expect(outside.status).toBe(404)
    expect(await outside.json()).toMatchObject({ message: "Route GET:/api/v2/order/json/ not found" })
  })

  it("routes only the trees it is given", async () => {
    const url = await start({ waybill: recording, trees: ["/api/v1"] })
    expect((await fetch(`${url}/api/v1/anything/`)).status).toBe(201)
    const ops = await fetch(`${url}/ops/v1/shipments/X/`)
    expect(ops.status).toBe(404)
    expect(await ops.json()).toMatchObject({ message: "Route GET:/ops/v1/shipments/X/ not found" })
  })

  it("streams a large answer with back-pressure, and answers HEAD with the fields but no body", async () => {
    const size = 4 * 1024 * 1024
    const file = {
      handleRaw: async (request: WaybillRequest): Promise<Reply> => {
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= size) return controller.close()
            const chunk = new Uint8Array(Math.min(256 * 1024, size - sent)).fill(sent % 251)
            sent += chunk.byteLength
            controller.enqueue(chunk)
          }
        })
        return {
          status: 200,
          headers: { "content-type": "application/pdf", "content-length": String(size), "x-method": request.method },
          body
        }
      }
    }
    const url = await start({ waybill: file })
    const r = await fetch(`${url}/api/v1/order/docs/download/?ticket=t`)
    expect(r.headers.get("content-type")).toBe("application/pdf")
    expect(r.headers.get("content-length")).toBe(String(size))
    expect((await r.arrayBuffer()).byteLength).toBe(size)
    const head = await fetch(`${url}/api/v1/order/docs/download/?ticket=t`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("x-method")).toBe("HEAD")
    expect(head.headers.get("content-length")).toBe(String(size))
    expect(await head.text()).toBe("")
  })

  it("a handler that rejects becomes the JSON 500 envelope", async () => {
    const url = await start({ waybill: { handleRaw: () => Promise.reject(new Error("boom")) } })
    const r = await fetch(`${url}/api/v1/order/json/`, { method: "POST", body: "{}" })
    expect(r.status).toBe(500)
    expect(await r.json()).toEqual({ data: null, error: { message: "Internal error.", exception: null } })
  })

  it("refuses to be registered under a prefix (Waybill routes on the full path)", async () => {
    const app = Fastify()
    apps.push(app)
    await expect(app.register(waybillFastify, { prefix: "/waybill", waybill: recording }).ready()).rejects.toThrow(
      /without a prefix/
    )
  })
})

describe("waybillFastify with Waybill's handler", () => {
  const waybill = createHandler(Layer.empty as unknown as Layer.Layer<HandlerRequirements>, {})
  afterAll(() => waybill.dispose())

  it("answers Waybill's own envelopes: 404 under /api/v1, 405 with Allow, 404 for /ops/v1 without a token", async () => {
    const url = await start({ waybill })
    const missing = await fetch(`${url}/api/v1/nope/`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
    const wrongMethod = await fetch(`${url}/api/v1/order/docs/download/`, { method: "DELETE" })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD")
    const ops = await fetch(`${url}/ops/v1/shipments/X/`)
    expect(ops.status).toBe(404)
    expect(await ops.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
  })
})
