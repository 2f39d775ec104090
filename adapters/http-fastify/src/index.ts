/**
 * @module @waybill/http-fastify
 *
 * Serves the Waybill handler from a Fastify app: `app.register(waybillFastify, { waybill })`
 * routes every method under `/api/v1/*` and `/ops/v1/*` to `waybill.handleRaw` and writes the
 * answer through Fastify's own `reply`, so the app's hooks (logging, CORS headers, `onSend`) see
 * Waybill's answers like any other route's.
 *
 * Fastify's body parsing stays out of the way: inside the plugin (and only there, thanks to
 * Fastify's encapsulation) every content type is accepted unread, so the request body reaches
 * Waybill as the untouched byte stream, under Waybill's own size limits and media-type rules
 * rather than Fastify's `bodyLimit` and JSON parser. The rest of the app keeps its parsers.
 */
import { Readable } from "node:stream"
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify"
import { RawHeaders, type Reply, type WaybillHandler, type WaybillRequest } from "@waybill/http"

/** Where Waybill's routes live; it routes on the full path, so the trees are mounted as they are. */
export type WaybillTree = "/api/v1" | "/ops/v1"

/** Options of {@link waybillFastify}. */
export interface WaybillFastifyOptions {
  /** The handler `createHandler` returned (anything with its `handleRaw`). */
  readonly waybill: Pick<WaybillHandler, "handleRaw">
  /** The trees to route to Waybill; both by default. Leave out `/ops/v1` to keep the operator API off this app. */
  readonly trees?: ReadonlyArray<WaybillTree>
  /**
   * Origin used to build the request URL (defaults to `https://` on TLS sockets, `http://`
   * otherwise, plus the Host header). The handler decides HTTPS-only rules from this URL, so a
   * plain-HTTP server must not claim `https` here unless a proxy in front of it terminates TLS.
   */
  readonly origin?: string
}

const METHODS_WITHOUT_BODY = new Set(["GET", "HEAD"])

/**
 * The handler's request over the Node request Fastify wraps: the path as it arrived (Waybill
 * routes on the full path), headers with Fetch semantics (`RawHeaders`), and the body as the
 * untouched stream of bytes.
 */
const waybillRequest = (request: FastifyRequest, origin: string | undefined): WaybillRequest => {
  const raw = request.raw
  const headers = new RawHeaders(raw.rawHeaders)
  const encrypted = (raw.socket as { encrypted?: boolean }).encrypted === true
  const base = origin ?? `${encrypted ? "https" : "http"}://${headers.first("host") ?? "localhost"}`
  let url: string
  try {
    url = new URL(raw.url ?? "/", base).href
  } catch {
    url = new URL("/", base).href
  }
  const method = raw.method ?? "GET"
  const body = METHODS_WITHOUT_BODY.has(method) ? null : (Readable.toWeb(raw) as unknown as ReadableStream<Uint8Array>)
  return { method, url, headers, body }
}

/** A string body without a media type is text, as a Fetch `Response` (and `@waybill/http-node`) labels it. */
const TEXT_PLAIN = "text/plain;charset=UTF-8"

/** The last resort when answering failed, as `@waybill/http-node` writes it. */
const INTERNAL_ERROR = JSON.stringify({ data: null, error: { message: "Internal error.", exception: null } })

/** Copies the `Reply`'s fields onto Fastify's reply: `set-cookie` one line per value, other repeats joined. */
const setFields = (reply: FastifyReply, answer: Reply): void => {
  const fields = answer.headers
  for (const name of Object.keys(fields)) {
    const value = fields[name]!
    if (typeof value === "string") reply.header(name, value)
    else if (value.length > 0) reply.header(name, name === "set-cookie" ? [...value] : value.join(", "))
  }
  if (typeof answer.body === "string" && fields["content-type"] === undefined) reply.header("content-type", TEXT_PLAIN)
}

const answer = async (
  waybill: Pick<WaybillHandler, "handleRaw">,
  origin: string | undefined,
  request: FastifyRequest,
  reply: FastifyReply
): Promise<FastifyReply> => {
  const raw = request.raw
  const remoteAddress = raw.socket.remoteAddress
  // The socket's address, not `request.ip`: Waybill applies its own `trustedProxies` to
  // X-Forwarded-For, so Fastify's `trustProxy` must not decide who the client is.
  const result = await waybill.handleRaw(
    waybillRequest(request, origin),
    remoteAddress === undefined ? {} : { remoteAddress }
  )
  reply.code(result.status)
  setFields(reply, result)
  // An answer given before the request body was read (413, an early 401) leaves unread bytes on
  // the socket; closing the connection keeps them from being parsed as the next request.
  if (!raw.complete) reply.header("connection", "close")
  const body = result.body
  if (body === null || raw.method === "HEAD") {
    // A stream nobody will read still holds its source (a file handle): release it.
    if (body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) body.cancel().catch(() => undefined)
    return reply.send(null)
  }
  // Bytes, text and web streams (sent with back-pressure) are all payloads Fastify writes as they are.
  return reply.send(body)
}

/**
 * The Fastify plugin. Register it at the root (no `prefix`: Waybill routes on the full path and a
 * prefixed mount would never match); the app's other routes are untouched.
 *
 * ```ts
 * app.register(waybillFastify, { waybill })
 * ```
 *
 * Throws at registration when registered under a prefix.
 */
export const waybillFastify: FastifyPluginCallback<WaybillFastifyOptions> = (
  instance: FastifyInstance,
  options: WaybillFastifyOptions,
  done: (error?: Error) => void
) => {
  if (instance.prefix !== "") {
    done(new Error(`waybillFastify must be registered without a prefix (got "${instance.prefix}")`))
    return
  }
  const { waybill, trees = ["/api/v1", "/ops/v1"], origin } = options
  // Every body reaches Waybill unread: no JSON parsing, no bodyLimit, no 415 from Fastify.
  instance.removeAllContentTypeParsers()
  instance.addContentTypeParser("*", (_request, _payload, parsed) => parsed(null, undefined))
  const reached = new WeakSet<FastifyRequest>()
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    reached.add(request)
    return answer(waybill, origin, request, reply)
  }
  // Fastify refuses a few requests before any handler runs (a malformed Content-Type is its 415).
  // Those are Waybill's to answer, in its envelope: the body is still unread, so hand them over.
  // Anything failing inside the handler is a defect: the JSON 500 envelope, nothing more.
  instance.setErrorHandler((_error, request, reply) =>
    reached.has(request)
      ? reply.code(500).header("content-type", "application/json; charset=utf-8").send(INTERNAL_ERROR)
      : handler(request, reply)
  )
  for (const tree of trees) instance.all(`${tree}/*`, handler)
  done()
}
