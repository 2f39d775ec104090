/**
 * @module @waybill/http-node
 *
 * Serves the Fetch-standard Waybill handler from `node:http` / `node:https` servers and Express.
 * Hono, Next.js, Bun and Deno speak Fetch already and need none of this.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import type { ConnectionInfo } from "@waybill/http"

/** The Fetch handler as `createHandler` returns it. */
export type FetchHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>

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

/**
 * Converts a Node request into a Fetch `Request`. The body streams (`Readable.toWeb`), so the
 * handler's own size limits apply as bytes arrive.
 */
export const toRequest = (req: IncomingMessage, options: ListenerOptions = {}, body?: Uint8Array): Request => {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true
  const host = req.headers.host ?? "localhost"
  const origin = options.origin ?? `${encrypted ? "https" : "http"}://${host}`
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/"
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
  let url: URL
  try {
    url = new URL(path, origin)
  } catch {
    url = new URL("/", origin)
  }
  return new Request(url, init)
}

/**
 * Collects a body whose declared Content-Length is at most `SMALL_BODY` (Node's parser never
 * delivers more than the declared length), so `Request` gets bytes instead of a stream: much
 * cheaper for the small JSON bodies that make up most API traffic. Larger or chunked bodies
 * stream.
 */
const smallBody = (req: IncomingMessage): Promise<Uint8Array> | undefined => {
  const declared = req.headers["content-length"]
  if (METHODS_WITHOUT_BODY.has(req.method ?? "GET") || declared === undefined || !/^\d+$/.test(declared))
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
  const reader = response.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve))
    }
  } finally {
    res.end()
  }
}

/**
 * A `(req, res)` listener for `http.createServer` / `https.createServer`, also usable as an
 * Express middleware (`app.use(toNodeListener(handler))`: it answers every request it is given,
 * so mount it on the paths Waybill owns, e.g. `app.use("/api/v1", ...)`).
 */
export const toNodeListener =
  (handler: FetchHandler, options: ListenerOptions = {}) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    const remoteAddress = req.socket.remoteAddress
    const info = remoteAddress === undefined ? {} : { remoteAddress }
    const buffered = smallBody(req)
    ;(buffered === undefined
      ? handler(toRequest(req, options), info)
      : buffered.then((body) => handler(toRequest(req, options, body), info))
    )
      .then((response) => writeResponse(response, res, req.method, !req.complete))
      .catch(() => {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json; charset=utf-8" })
          res.end(JSON.stringify({ data: null, error: { message: "Internal error.", exception: null } }))
        } else res.destroy()
      })
  }
