/**
 * The raw path of the bridge: `toNodeListener(waybill)` hands `handleRaw` a light request built
 * from the Node request and writes the `Reply` itself. These tests pin that it puts the same
 * bytes on the wire as the Fetch path (`toRequest` / `writeResponse`) and keeps Fetch's header
 * semantics where Node's differ (a doubled Authorization is joined, and so refused).
 *
 * The Waybill handler here runs over an empty layer: the requests below are answered before any
 * port is needed (routing, the operator guard, body limits, media types, JSON parsing).
 */
import { createServer, type Server } from "node:http"
import { connect, type AddressInfo } from "node:net"
import express from "express"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import {
  createHandler,
  type HandlerRequirements,
  rawHandlerOf,
  type Reply,
  toResponse,
  type WaybillRequest
} from "@waybill/http"
import { toNodeListener, toWaybillRequest } from "../src/index.js"

const OPERATOR = "op-token-123"
const waybill = createHandler(Layer.empty as unknown as Layer.Layer<HandlerRequirements>, {
  operatorToken: Redacted.make(OPERATOR)
})
afterAll(() => waybill.dispose())

const servers: Array<Server> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
})

const listen = async (listener: Parameters<typeof createServer>[1]): Promise<number> => {
  const s = createServer(listener)
  servers.push(s)
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()))
  return (s.address() as AddressInfo).port
}

/**
 * Sends exact request bytes and collects every byte of the answer until the server closes the
 * connection (requests say `Connection: close`, or the server closes after an early answer; a
 * reset while the rest of an unread body is still being sent is expected then).
 */
const exchange = (port: number, request: string): Promise<string> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request))
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", () => undefined)
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")))
  })

/** The answer without its Date field, the one line that legitimately differs between two servers. */
/** The answer without what differs on every request: the date, and the request id Waybill makes. */
const withoutDate = (answer: string) =>
  answer.replace(/\r\nDate: [^\r]*/, "").replace(/\r\nx-request-id: [^\r]*/, "\r\nx-request-id: _")

interface Parsed {
  readonly status: number
  readonly head: string
  readonly fields: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

const parse = (answer: string): Parsed => {
  const end = answer.indexOf("\r\n\r\n")
  const head = answer.slice(0, end)
  const [statusLine, ...lines] = head.split("\r\n")
  const fields = lines.map(
    (l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as const
  )
  let body = answer.slice(end + 4)
  if (fields.some(([n, v]) => n === "transfer-encoding" && v === "chunked")) {
    let out = ""
    for (;;) {
      const lineEnd = body.indexOf("\r\n")
      const size = parseInt(body.slice(0, lineEnd), 16)
      if (size === 0) break
      out += body.slice(lineEnd + 2, lineEnd + 2 + size)
      body = body.slice(lineEnd + 2 + size + 2)
    }
    body = out
  }
  return { status: Number(statusLine!.split(" ")[1]), head, fields, body }
}

const field = (p: Parsed, name: string) => p.fields.find(([n]) => n === name)?.[1]

/** A request with `Connection: close`, so `exchange` ends when the answer is complete. */
const http = (method: string, path: string, lines: ReadonlyArray<string> = [], body?: string) =>
  [
    `${method} ${path} HTTP/1.1`,
    "Host: bridge.test",
    "Connection: close",
    ...lines,
    ...(body === undefined ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
    "",
    body ?? ""
  ].join("\r\n")

/** Chunked upload of `body` in `size`-byte chunks, without a Content-Length. */
const chunked = (method: string, path: string, lines: ReadonlyArray<string>, body: string, size = 4096) => {
  let out = [`${method} ${path} HTTP/1.1`, "Host: bridge.test", "Transfer-Encoding: chunked", ...lines, "", ""].join(
    "\r\n"
  )
  for (let i = 0; i < body.length; i += size) {
    const part = body.slice(i, i + size)
    out += `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`
  }
  return `${out}0\r\n\r\n`
}

const bearer = `Authorization: Bearer ${OPERATOR}`

describe("toNodeListener raw path", () => {
  it("recognises createHandler's handler function and serves it through handleRaw", () => {
    expect(rawHandlerOf(waybill.handler)).toBe(waybill.handleRaw)
    expect(rawHandlerOf((r: Request) => waybill.handler(r))).toBeUndefined()
    expect(rawHandlerOf(undefined)).toBeUndefined()
  })

  it("builds the request Fetch would: URL, joined header values, lowercase-insensitive lookup", async () => {
    let seen: WaybillRequest | undefined
    const port = await listen(
      toNodeListener({
        handleRaw: async (request) => {
          seen = request
          return { status: 204, headers: {}, body: null }
        }
      })
    )
    await exchange(
      port,
      http("GET", "/api/v1/x/?a=1&b=%20", ["X-Multi: one", "x-multi: two", "Cookie: a=1", "Cookie: b=2", "X-Empty:"])
    )
    expect(seen!.method).toBe("GET")
    expect(seen!.url).toBe("http://bridge.test/api/v1/x/?a=1&b=%20")
    expect(seen!.body).toBeNull()
    const fetchHeaders = new Headers([
      ["X-Multi", "one"],
      ["x-multi", "two"],
      ["Cookie", "a=1"],
      ["Cookie", "b=2"],
      ["X-Empty", ""]
    ])
    for (const name of ["x-multi", "X-MULTI", "cookie", "x-empty", "x-absent", "host"]) {
      const expected = name === "host" ? "bridge.test" : fetchHeaders.get(name)
      expect(seen!.headers.get(name), name).toBe(expected)
    }
  })

  it("refuses a doubled Authorization with the 401 JSON envelope (Node's req.headers would keep the first)", async () => {
    const port = await listen(toNodeListener(waybill))
    const doubled = parse(await exchange(port, http("GET", "/ops/v1/shipments/ABC/", [bearer, bearer])))
    expect(doubled.status).toBe(401)
    expect(field(doubled, "www-authenticate")).toBe('Bearer realm="waybill-ops"')
    expect(JSON.parse(doubled.body)).toEqual({
      data: null,
      error: { message: "An operator token is required.", exception: null }
    })
    // One copy of the same header passes the guard (the action name is checked next).
    const single = parse(await exchange(port, http("POST", "/ops/v1/shipments/ABC/no-such-action/", [bearer], "")))
    expect(single.status).toBe(404)
    expect(JSON.parse(single.body).error.message).toMatch(/^Unknown action/)
  })

  it("hands a small body over as bytes, and reads a chunked one as a stream", async () => {
    const seen: Array<WaybillRequest> = []
    const recorder = {
      handleRaw: (request: WaybillRequest) => {
        seen.push(request)
        return waybill.handleRaw(request)
      }
    }
    const port = await listen(toNodeListener(recorder))
    const path = "/ops/v1/shipments/ABC/assign/"
    const json = ["Content-Type: application/json", bearer]
    const small = parse(await exchange(port, http("POST", path, json, "{not json")))
    expect(seen[0]!.bodyBytes).toBeInstanceOf(Uint8Array)
    expect(seen[0]!.body).toBeNull()
    expect(small.status).toBe(400)
    expect(JSON.parse(small.body).error.message).toBe("The body is not valid JSON.")
    const streamed = parse(await exchange(port, chunked("POST", path, [...json, "Connection: close"], "{not json")))
    expect(seen[1]!.bodyBytes).toBeUndefined()
    expect(seen[1]!.body).not.toBeNull()
    expect(streamed.status).toBe(400)
    expect(JSON.parse(streamed.body).error.message).toBe("The body is not valid JSON.")
    const media = parse(await exchange(port, http("POST", path, ["Content-Type: text/plain", bearer], "{}")))
    expect(media.status).toBe(415)
  })

  it("answers 413 over the limit, declared or streamed, and closes the connection", async () => {
    const port = await listen(toNodeListener(waybill))
    const big = "x".repeat(70 * 1024)
    const path = "/ops/v1/shipments/ABC/assign/"
    for (const request of [http("POST", path, [bearer], big), chunked("POST", path, [bearer], big)]) {
      const answer = parse(await exchange(port, request))
      expect(answer.status).toBe(413)
      expect(field(answer, "connection")).toBe("close")
      expect(JSON.parse(answer.body)).toEqual({
        data: null,
        error: { message: "The body is too large.", exception: null }
      })
    }
    // A buffered body (declared, small) over a route's own smaller limit (invoice: 4096 bytes).
    const invoice = parse(await exchange(port, http("POST", "/ops/v1/orders/ABC/invoice/", [bearer], "y".repeat(5000))))
    expect(invoice.status).toBe(413)
    expect(JSON.parse(invoice.body).error.message).toBe("The body exceeds the limit of 4096 bytes.")
  })

  it("answers HEAD with the fields and no body, and releases a stream body nobody reads", async () => {
    const port = await listen(toNodeListener(waybill))
    const head = await exchange(port, http("HEAD", "/api/v1/nowhere/"))
    const answer = parse(head)
    expect(answer.status).toBe(404)
    expect(field(answer, "content-length")).toBe(String(Buffer.byteLength(JSON.stringify(notFound))))
    expect(head.endsWith("\r\n\r\n")).toBe(true)

    let canceled = false
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(10)),
      cancel: () => {
        canceled = true
      }
    })
    const port2 = await listen(
      toNodeListener({ handleRaw: async () => ({ status: 200, headers: { "content-length": "10" }, body: stream }) })
    )
    expect(parse(await exchange(port2, http("HEAD", "/"))).body).toBe("")
    expect(canceled).toBe(true)
  })

  it("releases a stream body when the client goes away before reading it all", async () => {
    let canceled: () => void = () => undefined
    const released = new Promise<void>((resolve) => (canceled = resolve))
    let pulled = 0
    // An endless body: only a reader that stops and cancels ends it.
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => {
        pulled++
        c.enqueue(new Uint8Array(256 * 1024))
      },
      cancel: () => canceled()
    })
    const port = await listen(toNodeListener({ handleRaw: async () => ({ status: 200, headers: {}, body: stream }) }))
    await new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(http("GET", "/")))
      // Read the first bytes, then stop reading and go away: the server's writes back up, then fail.
      socket.once("data", () => {
        socket.pause()
        setTimeout(() => {
          socket.destroy()
          resolve()
        }, 100)
      })
    })
    const outcome = await Promise.race([
      released.then(() => "released"),
      new Promise<string>((resolve) => setTimeout(() => resolve("still held"), 2000))
    ])
    expect(outcome).toBe("released")
    const after = pulled
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(pulled).toBe(after)
  })

  it("streams a large body both ways with back-pressure", async () => {
    const big = "z".repeat(3 * 1024 * 1024)
    const port = await listen(
      toNodeListener({ handleRaw: async (request) => ({ status: 200, headers: {}, body: request.body }) })
    )
    const answer = await fetch(`http://127.0.0.1:${port}/`, { method: "PUT", body: big })
    expect((await answer.text()).length).toBe(big.length)
  })

  it("writes every set-cookie on its own line and joins other repeated fields, like a Fetch Response", async () => {
    const reply: Reply = {
      status: 201,
      headers: { "set-cookie": ["a=1; Path=/", "b=2; HttpOnly"], vary: ["accept", "origin"], "x-one": "1" },
      body: new TextEncoder().encode("created")
    }
    const raw = await listen(toNodeListener({ handleRaw: async () => reply }))
    const viaFetch = await listen(toNodeListener(async () => toResponse(reply)))
    const answer = await exchange(raw, http("GET", "/"))
    expect(answer).toContain("\r\nset-cookie: a=1; Path=/\r\nset-cookie: b=2; HttpOnly\r\n")
    expect(answer).toContain("\r\nvary: accept, origin\r\n")
    expect(withoutDate(answer)).toBe(withoutDate(await exchange(viaFetch, http("GET", "/"))))
  })

  it("survives requests a Fetch Request refuses (TRACE, a malformed Host) on both paths", async () => {
    const trace = "TRACE /api/v1/order/json/ HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    // The raw path routes TRACE like any method the route does not allow; `new Request` throws on it.
    expect(parse(await exchange(await listen(toNodeListener(waybill)), trace)).status).toBe(405)
    expect(parse(await exchange(await listen(toNodeListener((r: Request) => waybill.handler(r))), trace)).status).toBe(
      500
    )
    for (const listener of [toNodeListener(waybill), toNodeListener((r: Request) => waybill.handler(r))]) {
      const port = await listen(listener)
      const host = parse(await exchange(port, "GET / HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n"))
      expect(host.status).toBe(500)
      expect(JSON.parse(host.body)).toEqual({ data: null, error: { message: "Internal error.", exception: null } })
    }
  })

  it("gives the same bytes as the Fetch path (handler(Request) through toRequest / writeResponse)", async () => {
    const raw = await listen(toNodeListener(waybill))
    const viaFetch = await listen(toNodeListener((request: Request, info) => waybill.handler(request, info)))
    const requests = [
      http("GET", "/api/v1/nowhere/"),
      http("GET", "/api/v1/order/json/"),
      http("HEAD", "/api/v1/order/json/"),
      http("PUT", "/api/v1/accountsetup/verify/", [], "x"),
      http("DELETE", "/api/v1/order/docs/download/"),
      http("GET", "/api/v1/order/docs/?control_no=1"),
      http("GET", "/ops/v1/shipments/%E0%A4%A/", [bearer]),
      http("GET", "/ops/v1/shipments/ABC/", [bearer, bearer]),
      http("GET", "/ops/v1/shipments/ABC/", ["Authorization: Bearer wrong"]),
      http("POST", "/ops/v1/shipments/ABC/assign/", ["Content-Type: application/json", bearer], "[1,2"),
      http("POST", "/ops/v1/shipments/ABC/assign/", ["Content-Type: application/json", bearer], '{"stop":-1}'),
      http("POST", "/ops/v1/shipments/ABC/assign/", [bearer], "x".repeat(70 * 1024)),
      chunked("POST", "/ops/v1/shipments/ABC/assign/", [bearer, "Connection: close"], "x".repeat(70 * 1024)),
      http("POST", "/ops/v1/webhooks/", ["Content-Type: application/json", bearer], "{"),
      http("POST", "/ops/v1/webhooks/", ["Content-Type: text/plain", bearer], "{}"),
      http("GET", "/ops/v1/../api/v1/./x/?key=secret", [])
    ]
    for (const request of requests) {
      const a = withoutDate(await exchange(raw, request))
      const b = withoutDate(await exchange(viaFetch, request))
      expect(a, request.split("\r\n")[0]).toBe(b)
      expect(a.length).toBeGreaterThan(0)
    }
  })

  it("works as Express middleware on a mount path, seeing the full URL", async () => {
    const app = express()
    app.use("/api/v1", toNodeListener(waybill))
    const answer = parse(await exchange(await listen(app), http("GET", "/api/v1/nowhere/")))
    expect(answer.status).toBe(404)
    expect(field(answer, "x-powered-by")).toBe("Express")
    expect(JSON.parse(answer.body)).toEqual(notFound)
  })

  it("toWaybillRequest carries a body read ahead as bodyBytes", async () => {
    let seen: WaybillRequest | undefined
    const port = await listen((req, res) => {
      seen = toWaybillRequest(req, { origin: "https://api.example.com" }, new Uint8Array([1, 2]))
      res.end()
    })
    await exchange(port, http("POST", "/p/?q", [], "ab"))
    expect(seen!.url).toBe("https://api.example.com/p/?q")
    expect(seen!.bodyBytes).toEqual(new Uint8Array([1, 2]))
    expect(seen!.body).toBeNull()
  })
})

const notFound = { data: null, error: { message: "Not found.", exception: null } }
