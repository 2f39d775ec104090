/**
 * @module @waybill/http-node
 *
 * Serves the Waybill handler from `node:http` / `node:https` servers and Express. Hono, Next.js,
 * Bun and Deno speak Fetch already and need none of this; Fastify has its own plugin
 * (`@waybill/http-fastify`).
 *
 * Given Waybill's own handler (the `WaybillHandler` from `createHandler`, or its `handler`
 * function), the listener takes the raw path: it hands `handleRaw` a light request over the
 * Node request (headers read from `rawHeaders`, a small body already buffered) and writes the
 * plain `Reply` straight to the `ServerResponse`, without building a Fetch `Request` or reading
 * a Fetch `Response` back. Any other Fetch function goes through `toRequest` / `writeResponse`.
 * Both paths put the same bytes on the wire (apart from methods a Fetch `Request` refuses, such
 * as TRACE: the raw path routes them like any other method, the Fetch path answers 500).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import {
  type ConnectionInfo,
  type RawHandler,
  rawHandlerOf,
  RawHeaders,
  type Reply,
  type WaybillHandler,
  type WaybillRequest
} from "@waybill/http"

/** The Fetch handler as `createHandler` returns it. */
export type FetchHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>

/**
 * What `toNodeListener` serves: the `WaybillHandler` of `createHandler` (or anything with its
 * `handleRaw`), or a Fetch function. `createHandler`'s own `handler` function is recognised and
 * served through `handleRaw` as well; any other function is called with a Fetch `Request`.
 */
export type NodeHandler = FetchHandler | Pick<WaybillHandler, "handleRaw">

export interface ListenerOptions {
  /**
   * Origin used to build the request URL when the server cannot know it (defaults to
   * `https://` for TLS sockets, `http://` otherwise, plus the Host header). The handler decides
   * HTTPS-only rules from this URL, so a plain-HTTP server must not claim `https` here unless a
   * proxy in front of it terminates TLS.
   */
  readonly origin?: string
}

const METHODS_WITHOUT_BODY = new Set(["GET", "HEAD"])

/** Bodies up to this size (with a Content-Length) are buffered and sent in one write. */
const SMALL_BODY = 64 * 1024

/** The request URL: the origin (option, or scheme + Host) and the path Node or Express saw. */
const requestUrl = (req: IncomingMessage, options: ListenerOptions, host: string | undefined): URL => {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true
  const origin = options.origin ?? `${encrypted ? "https" : "http"}://${host ?? "localhost"}`
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/"
  try {
    return new URL(path, origin)
  } catch {
    return new URL("/", origin)
  }
}

/**
 * Converts a Node request into a Fetch `Request`. The body streams (`Readable.toWeb`), so the
 * handler's own size limits apply as bytes arrive; `body` passes one already read instead.
 */
export const toRequest = (req: IncomingMessage, options: ListenerOptions = {}, body?: Uint8Array): Request => {
  const headers: Array<[string, string]> = []
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!])
  const method = req.method ?? "GET"
  const init: RequestInit & { duplex?: "half" } = { method, headers }
  if (!METHODS_WITHOUT_BODY.has(method)) {
    init.body =
      (body as Uint8Array<ArrayBuffer> | undefined) ?? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>)
    init.duplex = "half"
  }
  return new Request(requestUrl(req, options, req.headers.host), init)
}

/**
 * Converts a Node request into the handler's `WaybillRequest` without Fetch objects: the same
 * URL and header values `toRequest` gives, the body as `bodyBytes` when already read, else as a
 * stream (`Readable.toWeb`) for methods that may have one.
 */
export const toWaybillRequest = (
  req: IncomingMessage,
  options: ListenerOptions = {},
  bodyBytes?: Uint8Array
): WaybillRequest => waybillRequest(req, options, new RawHeaders(req.rawHeaders), bodyBytes)

const waybillRequest = (
  req: IncomingMessage,
  options: ListenerOptions,
  headers: RawHeaders,
  bodyBytes: Uint8Array | undefined
): WaybillRequest => {
  const method = req.method ?? "GET"
  const url = requestUrl(req, options, headers.first("host")).href
  if (bodyBytes !== undefined) return { method, url, headers, body: null, bodyBytes }
  const body = METHODS_WITHOUT_BODY.has(method) ? null : (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>)
  return { method, url, headers, body }
}

/**
 * Collects a body whose declared Content-Length is at most `SMALL_BODY` (Node's parser never
 * delivers more than the declared length), so the handler gets bytes instead of a stream: much
 * cheaper for the small JSON bodies that make up most API traffic. Larger or chunked bodies
 * stream.
 */
const smallBody = (req: IncomingMessage, declared: string | null | undefined): Promise<Uint8Array> | undefined => {
  if (METHODS_WITHOUT_BODY.has(req.method ?? "GET") || typeof declared !== "string" || !/^\d+$/.test(declared))
    return undefined
  const length = Number(declared)
  if (length > SMALL_BODY) return undefined
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    req.once("error", reject)
  })
}

/** Reads a whole stream into one array. */
const readAll = async (stream: ReadableStream<Uint8Array>): Promise<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/**
 * Whether the response can take more after a write that returned false: true at `drain`, false
 * when the connection closed first (a client that went away never drains).
 */
const drained = (res: ServerResponse): Promise<boolean> =>
  res.destroyed
    ? Promise.resolve(false)
    : new Promise((resolve) => {
        const onDrain = () => {
          res.off("close", onClose)
          resolve(true)
        }
        const onClose = () => {
          res.off("drain", onDrain)
          resolve(false)
        }
        res.once("drain", onDrain)
        res.once("close", onClose)
      })

/**
 * Writes a stream with back-pressure, then ends the response. When the client goes away first,
 * the stream is cancelled, so its source (a file handle) is released at once.
 */
const pipeStream = async (stream: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> => {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value) && !(await drained(res))) {
        await reader.cancel().catch(() => undefined)
        return
      }
    }
  } finally {
    res.end()
  }
}

/** Writes a Fetch `Response` to a Node response, streaming the body and honouring back-pressure. */
export const writeResponse = async (
  response: Response,
  res: ServerResponse,
  method = "GET",
  closeAfter = false
): Promise<void> => {
  const headers: Record<string, string | Array<string>> = {}
  // An answer given before the request body was read (413, early 401) leaves unread bytes on the
  // socket; closing the connection keeps them from being parsed as the next request.
  if (closeAfter) headers["connection"] = "close"
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers["set-cookie"] = cookies
  if (response.body === null || method === "HEAD") {
    res.writeHead(response.status, headers)
    res.end()
    return
  }
  // A small body of known length goes out with the headers in one write.
  const length = Number(response.headers.get("content-length") ?? Number.NaN)
  if (length <= SMALL_BODY) {
    const bytes = new Uint8Array(await response.arrayBuffer())
    res.writeHead(response.status, headers)
    res.end(bytes)
    return
  }
  res.writeHead(response.status, headers)
  await pipeStream(response.body, res)
}

/** A string body without a media type is text, as a Fetch `Response` labels it. */
const TEXT_PLAIN = "text/plain;charset=UTF-8"

/**
 * Writes the handler's `Reply` to a Node response with the status line, fields (in the sorted
 * order a Fetch `Response` iterates them, every `set-cookie` on its own line) and body bytes
 * `writeResponse` would write for the same answer as a `Response`: bytes and strings in one
 * write, streams with back-pressure (or in one write when their Content-Length is small), and no
 * body for HEAD.
 */
export const writeReply = async (
  reply: Reply,
  res: ServerResponse,
  method = "GET",
  closeAfter = false
): Promise<void> => {
  const body = reply.body
  const fields =
    typeof body === "string" && reply.headers["content-type"] === undefined
      ? { ...reply.headers, "content-type": TEXT_PLAIN }
      : reply.headers
  const headers: Record<string, string | Array<string>> = {}
  // See writeResponse: unread request bytes must not be parsed as the next request.
  if (closeAfter) headers["connection"] = "close"
  for (const name of Object.keys(fields).sort()) {
    const value = fields[name]!
    if (typeof value === "string") headers[name] = value
    else if (value.length > 0) headers[name] = name === "set-cookie" ? [...value] : value.join(", ")
  }
  if (body === null || method === "HEAD") {
    res.writeHead(reply.status, headers)
    res.end()
    // A stream nobody will read still holds its source (a file handle): release it.
    if (body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) body.cancel().catch(() => undefined)
    return
  }
  if (typeof body === "string" || body instanceof Uint8Array) {
    res.writeHead(reply.status, headers)
    res.end(body)
    return
  }
  const declared = headers["content-length"]
  const length = typeof declared === "string" ? Number(declared) : Number.NaN
  if (length <= SMALL_BODY) {
    const bytes = await readAll(body)
    res.writeHead(reply.status, headers)
    res.end(bytes)
    return
  }
  res.writeHead(reply.status, headers)
  await pipeStream(body, res)
}

/** The last resort when answering failed: a JSON 500 envelope, or a cut connection mid-body. */
const internalError = (res: ServerResponse): void => {
  if (!res.headersSent) {
    res.writeHead(500, { "content-type": "application/json; charset=utf-8" })
    res.end(JSON.stringify({ data: null, error: { message: "Internal error.", exception: null } }))
  } else res.destroy()
}

const connectionInfo = (req: IncomingMessage): ConnectionInfo => {
  const remoteAddress = req.socket.remoteAddress
  return remoteAddress === undefined ? {} : { remoteAddress }
}

const rawListener =
  (handleRaw: RawHandler, options: ListenerOptions) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    let answer: Promise<Reply>
    try {
      const info = connectionInfo(req)
      const headers = new RawHeaders(req.rawHeaders)
      const buffered = smallBody(req, headers.get("content-length"))
      answer =
        buffered === undefined
          ? handleRaw(waybillRequest(req, options, headers, undefined), info)
          : buffered.then((bodyBytes) => handleRaw(waybillRequest(req, options, headers, bodyBytes), info))
    } catch (error) {
      answer = Promise.reject(error)
    }
    answer.then((reply) => writeReply(reply, res, req.method, !req.complete)).catch(() => internalError(res))
  }

const fetchListener =
  (handler: FetchHandler, options: ListenerOptions) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    let answer: Promise<Response>
    try {
      const info = connectionInfo(req)
      const buffered = smallBody(req, req.headers["content-length"])
      answer =
        buffered === undefined
          ? handler(toRequest(req, options), info)
          : buffered.then((body) => handler(toRequest(req, options, body), info))
    } catch (error) {
      // `new Request` refuses some methods (TRACE) and hosts: answer, never throw out of the listener.
      answer = Promise.reject(error)
    }
    answer.then((response) => writeResponse(response, res, req.method, !req.complete)).catch(() => internalError(res))
  }

/**
 * A `(req, res)` listener for `http.createServer` / `https.createServer`, also usable as an
 * Express middleware (`app.use(toNodeListener(waybill))`: it answers every request it is given,
 * so mount it on the paths Waybill owns, e.g. `app.use("/api/v1", ...)`).
 *
 * Pass the `WaybillHandler` from `createHandler` (or its `handler` function): requests then take
 * the raw path (`handleRaw`, no Fetch objects). Any other Fetch function is served through a
 * Fetch `Request` and `Response`. A handler that rejects or throws gets a JSON 500 envelope.
 */
export const toNodeListener = (
  handler: NodeHandler,
  options: ListenerOptions = {}
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const handleRaw = typeof handler === "function" ? rawHandlerOf(handler) : handler.handleRaw
  return handleRaw === undefined ? fetchListener(handler as FetchHandler, options) : rawListener(handleRaw, options)
}
