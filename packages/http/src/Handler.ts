/**
 * @module Handler
 *
 * The whole wire protocol as one Fetch-standard function, so it runs under node:http (through
 * `@waybill/http-node`), Hono, Next.js route handlers, Bun and Deno alike. Routing is a table of
 * exact paths plus a few patterns; every answer, including 404, 405, 413 and 415, is the
 * interface's JSON envelope.
 *
 * Inside, routes read a {@link WaybillRequest} (a Fetch `Request` is one) and answer a plain
 * {@link Reply}; `handler` turns the reply into a `Response` at the very end, and `handleRaw`
 * hands it over as it is to server bridges that write their own responses.
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { type Cancel, ClientIp } from "@waybill/core"
import { operatorDenial } from "./internal/access.js"
import { Messages } from "./internal/errors.js"
import { withRateLimitHeaders } from "./internal/ratelimit.js"
import { safeUrlForLog } from "./internal/redact.js"
import { failure } from "./internal/respond.js"
import { type Reply, toResponse, type WaybillRequest } from "./Raw.js"
import { accountSetupRoute, verifyLinkRoute } from "./routes/accountsetup.js"
import { createShipmentsRoute } from "./routes/booking.js"
import { cancelRoute } from "./routes/cancel.js"
import { documentsRoute } from "./routes/documents.js"
import { downloadRoute } from "./routes/download.js"
import { opsActionRoute, opsShowRoute } from "./routes/ops.js"
import { opsKeyRoute, opsPaymentRoute } from "./routes/opsAccounts.js"
import { opsDocumentRoute, opsOrderRoute } from "./routes/opsDocuments.js"
import { opsEndpointRoute, opsEventRoute, opsWebhookRoute, opsWebhooksRoute } from "./routes/opsWebhooks.js"
import { openApiRoute } from "./routes/openapi.js"
import { quoteRoute } from "./routes/quote.js"
import type { Route, RouteContext } from "./routes/Route.js"
import { trackRoute } from "./routes/track.js"
import type { ConnectionInfo, HandlerOptions, HandlerRequirements } from "./Options.js"

export type { ConnectionInfo, HandlerOptions, HandlerRequirements } from "./Options.js"

/** Answers a {@link WaybillRequest} with a {@link Reply}; never rejects. */
export type RawHandler = (request: WaybillRequest, info?: ConnectionInfo) => Promise<Reply>

export interface WaybillHandler {
  /**
   * Answers one Fetch request (Hono, Next.js, Bun, Deno, `@waybill/http-node`). Never rejects:
   * failures become envelopes.
   */
  readonly handler: (request: Request, info?: ConnectionInfo) => Promise<Response>
  /**
   * The same answer as {@link handler} (status, fields, body), as a plain {@link Reply} instead
   * of a Fetch `Response`, for any {@link WaybillRequest}. Meant for server bridges that own
   * their request and response objects and would otherwise build a `Request` and read a
   * `Response` back per request: `@waybill/http-node`'s `toNodeListener` uses it. Never rejects.
   */
  readonly handleRaw: RawHandler
  /** Releases the layer's resources (database handles are the host's). */
  readonly dispose: () => Promise<void>
}

/** Where a `handler` function made by {@link createHandler} keeps its {@link RawHandler}. */
const RAW = Symbol.for("@waybill/http/handleRaw")

/**
 * The {@link RawHandler} behind a `handler` function that {@link createHandler} made, or
 * `undefined` for any other function (a wrapper, another Fetch handler). Lets bridges given
 * `waybill.handler` take the raw path anyway.
 */
export const rawHandlerOf = (handler: unknown): RawHandler | undefined => {
  if (typeof handler !== "function") return undefined
  const raw = (handler as { readonly [RAW]?: unknown })[RAW]
  return typeof raw === "function" ? (raw as RawHandler) : undefined
}

const EXACT: Readonly<Record<string, Route>> = {
  "/api/v1/accountsetup/": accountSetupRoute,
  "/api/v1/accountsetup/verify/": verifyLinkRoute,
  "/api/v1/order/json/": createShipmentsRoute,
  "/api/v1/order/cancel/json/": cancelRoute,
  "/api/v1/order/docs/": documentsRoute,
  "/api/v1/order/docs/download/": downloadRoute,
  "/api/v1/utilities/quote/": quoteRoute,
  "/api/v1/utilities/track/": trackRoute,
  "/api/v1/openapi.json/": openApiRoute
}

const PATTERNS: ReadonlyArray<readonly [RegExp, Route]> = [
  [/^\/ops\/v1\/shipments\/([^/]{1,32})\/$/, opsShowRoute],
  [/^\/ops\/v1\/webhooks\/$/, opsWebhooksRoute],
  [/^\/ops\/v1\/webhooks\/([^/]{1,64})\/$/, opsEndpointRoute],
  [/^\/ops\/v1\/webhooks\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsWebhookRoute],
  [/^\/ops\/v1\/events\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsEventRoute],
  [/^\/ops\/v1\/shipments\/([^/]{1,32})\/([a-z-]{1,32})\/$/, opsActionRoute],
  [/^\/ops\/v1\/orders\/([^/]{1,32})\/([a-z-]{1,32})\/$/, opsOrderRoute],
  [/^\/ops\/v1\/documents\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsDocumentRoute],
  [/^\/ops\/v1\/accounts\/([^/]{1,32})\/payment\/$/, opsPaymentRoute],
  [/^\/ops\/v1\/accounts\/([^/]{1,32})\/keys\/([a-z]{1,8})\/([a-z]{1,16})\/$/, opsKeyRoute]
]

/** `decodeURIComponent` that answers undefined for a malformed escape instead of throwing. */
const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

const route = (ctx: Omit<RouteContext, "params">): Effect.Effect<Reply, never, HandlerRequirements> => {
  const path = ctx.url.pathname.endsWith("/") ? ctx.url.pathname : `${ctx.url.pathname}/`
  let found: Route | undefined = EXACT[path]
  let params: ReadonlyArray<string> = []
  if (found === undefined) {
    for (const [pattern, r] of PATTERNS) {
      const m = pattern.exec(path)
      if (m !== null) {
        found = r
        const decoded = m.slice(1).map(safeDecode)
        if (decoded.some((p) => p === undefined)) return Effect.succeed(failure(400, "The path is not valid."))
        params = decoded as Array<string>
        break
      }
    }
  }
  if (found === undefined) return Effect.succeed(failure(404, "Not found."))
  if (!found.methods.includes(ctx.request.method)) {
    if (found.methodNotAllowed !== undefined) return Effect.succeed(found.methodNotAllowed(ctx.request.method))
    return Effect.succeed(
      failure(405, `Method ${ctx.request.method} is not allowed here.`, { allow: found.methods.join(", ") })
    )
  }
  if (found.operator === true) {
    const denied = operatorDenial({ ...ctx, params })
    if (denied !== undefined) return Effect.succeed(denied)
  }
  // Routes that checked a rate limit (core `Admission`) get the RateLimit header fields.
  const routeCtx: RouteContext = {
    request: ctx.request,
    url: ctx.url,
    info: ctx.info,
    options: ctx.options,
    client: ctx.client,
    params
  }
  return withRateLimitHeaders(found.run(routeCtx))
}

const internalError = (defect: unknown) =>
  Effect.logError("unexpected defect", defect).pipe(Effect.as(failure(500, "Internal error.")))

/**
 * The request program, answering a {@link Reply}: routing, error mapping, and a debug access log
 * with credentials masked. A defect becomes `500 Internal error.`.
 */
export const handleReply = (
  request: WaybillRequest,
  info: ConnectionInfo = {},
  options: HandlerOptions = {},
  trusted: ReadonlyArray<ClientIp.Cidr> = parseTrusted(options.trustedProxies)
): Effect.Effect<Reply, never, HandlerRequirements> =>
  Effect.gen(function* () {
    const url = new URL(request.url)
    const client = ClientIp.resolve(info.remoteAddress, request.headers.get("x-forwarded-for"), trusted)
    const reply = yield* route({ request, url, info, options, client })
    yield* Effect.logDebug("request", request.method, safeUrlForLog(url), reply.status)
    return reply
  }).pipe(Effect.catchAllDefect(internalError))

/** {@link handleReply} answering a Fetch `Response` (a reply `Response` refuses is a 500 too). */
export const handle = (
  request: WaybillRequest,
  info: ConnectionInfo = {},
  options: HandlerOptions = {},
  trusted: ReadonlyArray<ClientIp.Cidr> = parseTrusted(options.trustedProxies)
): Effect.Effect<Response, never, HandlerRequirements> =>
  handleReply(request, info, options, trusted).pipe(
    Effect.map(toResponse),
    Effect.catchAllDefect((defect) => Effect.map(internalError(defect), toResponse))
  )

/** Parses the trusted proxy list; a typo here is a configuration error, reported at startup. */
export const parseTrusted = (list: ReadonlyArray<string> = []): ReadonlyArray<ClientIp.Cidr> =>
  list.map((entry) =>
    Option.getOrElse(ClientIp.parseCidr(entry), () => {
      throw new Error(`trustedProxies: "${entry}" is not an IP address or CIDR`)
    })
  )

/**
 * Builds the handler from a layer that provides every port. The layer is built once, on the first
 * request, and shared; `dispose` releases it. A layer that cannot be built makes every request
 * answer `503`.
 */
export const createHandler = <E>(
  layer: Layer.Layer<HandlerRequirements, E, never>,
  options: HandlerOptions = {}
): WaybillHandler => {
  const runtime = ManagedRuntime.make(layer)
  const trusted = parseTrusted(options.trustedProxies)
  // The programs never fail, so a rejection is the run itself failing (the layer could not be
  // built, the runtime was disposed): 503. (`runFork` with an exit observer instead of
  // `runPromise` measured the same, about 8 us per run either way.)
  const unavailable = () => failure(503, Messages.unavailable)
  const handleRaw: RawHandler = (request, info) =>
    runtime.runPromise(handleReply(request, info, options, trusted)).catch(unavailable)
  const handler = (request: Request, info?: ConnectionInfo) =>
    runtime.runPromise(handle(request, info, options, trusted)).catch(() => toResponse(unavailable()))
  Object.defineProperty(handler, RAW, { value: handleRaw })
  return { handler, handleRaw, dispose: () => runtime.dispose() }
}

/** Keeps `Cancel` in the public type graph for hosts that provide a `CancelProvider`. */
export type CancelProviderTag = typeof Cancel.CancelProvider
