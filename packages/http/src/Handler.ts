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
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { Admission, type Cancel, ClientIp, Credentials, Metrics, Ulid } from "@waybill/core"
import * as ActivityRecording from "./ActivityRecorder.js"
import { operatorDenial } from "./internal/access.js"
import { Messages } from "./internal/errors.js"
import { rateLimitHeaders } from "./internal/ratelimit.js"
import { failure } from "./internal/respond.js"
import { type Reply, toResponse, type WaybillRequest, withHeaders } from "./Raw.js"
import { accountSetupRoute, verifyLinkRoute } from "./routes/accountsetup.js"
import { createShipmentsRoute } from "./routes/booking.js"
import { cancelRoute } from "./routes/cancel.js"
import { documentsRoute } from "./routes/documents.js"
import { downloadRoute } from "./routes/download.js"
import { opsActionRoute, opsShowRoute } from "./routes/ops.js"
import { opsKeyRoute, opsPaymentRoute } from "./routes/opsAccounts.js"
import { opsDocumentRoute, opsOrderRoute } from "./routes/opsDocuments.js"
import {
  opsEndpointRoute,
  opsEventRoute,
  opsWebhookListRoute,
  opsWebhookRoute,
  opsWebhooksRoute
} from "./routes/opsWebhooks.js"
import { opsBlocksRoute } from "./routes/opsBlocks.js"
import { openApiRoute } from "./routes/openapi.js"
import { quoteRoute } from "./routes/quote.js"
import { healthzRoute, metricsRoute, readyzRoute } from "./routes/health.js"
import type { RequestNote, Route, RouteContext } from "./routes/Route.js"
import { trackRoute } from "./routes/track.js"
import type { ConnectionInfo, HandlerOptions, HandlerRequirements } from "./Options.js"

export type { ConnectionInfo, HandlerOptions, HandlerRequirements, MetricsPage, ReadinessCheck } from "./Options.js"

const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []

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

/** Exact paths (with a trailing slash); the path is also the route's label in logs and metrics. */
const EXACT: Readonly<Record<string, Route>> = {
  "/healthz/": healthzRoute,
  "/readyz/": readyzRoute,
  "/metrics/": metricsRoute,
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

/** Pattern routes with their labels: the pattern, never the raw path, names them in logs and metrics. */
const PATTERNS: ReadonlyArray<readonly [RegExp, Route, string]> = [
  [/^\/ops\/v1\/shipments\/([^/]{1,32})\/$/, opsShowRoute, "/ops/v1/shipments/{track_no}/"],
  [/^\/ops\/v1\/blocks\/$/, opsBlocksRoute, "/ops/v1/blocks/"],
  [/^\/ops\/v1\/webhooks\/$/, opsWebhooksRoute, "/ops/v1/webhooks/"],
  [/^\/ops\/v1\/webhooks\/([^/]{1,64})\/(deliveries|log)\/$/, opsWebhookListRoute, "/ops/v1/webhooks/{id}/{list}/"],
  [/^\/ops\/v1\/webhooks\/([^/]{1,64})\/$/, opsEndpointRoute, "/ops/v1/webhooks/{id}/"],
  [/^\/ops\/v1\/webhooks\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsWebhookRoute, "/ops/v1/webhooks/{id}/{action}/"],
  [/^\/ops\/v1\/events\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsEventRoute, "/ops/v1/events/{id}/{action}/"],
  [/^\/ops\/v1\/shipments\/([^/]{1,32})\/([a-z-]{1,32})\/$/, opsActionRoute, "/ops/v1/shipments/{track_no}/{action}/"],
  [/^\/ops\/v1\/orders\/([^/]{1,32})\/([a-z-]{1,32})\/$/, opsOrderRoute, "/ops/v1/orders/{track_no}/{action}/"],
  [/^\/ops\/v1\/documents\/([^/]{1,64})\/([a-z-]{1,32})\/$/, opsDocumentRoute, "/ops/v1/documents/{id}/{action}/"],
  [/^\/ops\/v1\/accounts\/([^/]{1,32})\/payment\/$/, opsPaymentRoute, "/ops/v1/accounts/{customer_no}/payment/"],
  [
    /^\/ops\/v1\/accounts\/([^/]{1,32})\/keys\/([a-z]{1,8})\/([a-z]{1,16})\/$/,
    opsKeyRoute,
    "/ops/v1/accounts/{customer_no}/keys/{mode}/{action}/"
  ]
]

/** The label of a path no route matched (so scanners cannot grow the metrics without bound). */
const UNMATCHED = "unmatched"

/** `decodeURIComponent` that answers undefined for a malformed escape instead of throwing. */
const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** What the route table found for a path. */
interface Match {
  readonly route: Route | undefined
  readonly label: string
  /** Decoded path parameters; `undefined` when one is not valid percent-encoding. */
  readonly params: ReadonlyArray<string> | undefined
}

const NO_PARAMS: ReadonlyArray<string> = []

const match = (pathname: string): Match => {
  const path = pathname.endsWith("/") ? pathname : `${pathname}/`
  const exact = EXACT[path]
  if (exact !== undefined) return { route: exact, label: path, params: NO_PARAMS }
  for (const [pattern, r, label] of PATTERNS) {
    const m = pattern.exec(path)
    if (m !== null) {
      const decoded = m.slice(1).map(safeDecode)
      return {
        route: r,
        label,
        params: decoded.some((p) => p === undefined) ? undefined : (decoded as Array<string>)
      }
    }
  }
  return { route: undefined, label: UNMATCHED, params: NO_PARAMS }
}

const route = (found: Match, ctx: RouteContext): Effect.Effect<Reply, never, HandlerRequirements> => {
  if (found.route === undefined) return Effect.succeed(failure(404, "Not found."))
  if (found.params === undefined) return Effect.succeed(failure(400, "The path is not valid."))
  const r = found.route
  if (!r.methods.includes(ctx.request.method)) {
    if (r.methodNotAllowed !== undefined) return Effect.succeed(r.methodNotAllowed(ctx.request.method))
    return Effect.succeed(
      failure(405, `Method ${ctx.request.method} is not allowed here.`, { allow: r.methods.join(", ") })
    )
  }
  if (r.operator === true) {
    const denied = operatorDenial(ctx)
    if (denied !== undefined) return Effect.succeed(denied)
  }
  return r.run(ctx)
}

const internalError = (defect: unknown) =>
  Effect.logError("unexpected defect", defect).pipe(Effect.as(failure(500, "Internal error.")))

/** An incoming request id we keep: 1-128 characters that are safe in a header and a log line. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/**
 * The random part of the request ids this process makes: drawn once from WebCrypto, which every
 * Fetch runtime has, then counted up by one for each id (a ULID's monotonic form), so ids are
 * unique within the process and, from a random 80-bit start, across hosts. A request id is not a
 * secret, so it needs no fresh randomness each time; and it must exist even when the layer
 * could not be built (the 503 path), so it does not come from the layer's `Entropy` port.
 */
const requestIdRandom = globalThis.crypto.getRandomValues(new Uint8Array(10))

/** The incoming `X-Request-Id` when it is acceptable, else a new ULID. */
const requestIdOf = (request: WaybillRequest): string => {
  const incoming = request.headers.get("x-request-id")
  if (incoming !== null && REQUEST_ID.test(incoming)) return incoming
  for (let i = requestIdRandom.length - 1; i >= 0; i--) {
    requestIdRandom[i] = (requestIdRandom[i]! + 1) & 0xff
    if (requestIdRandom[i] !== 0) break
  }
  return Ulid.encode(Date.now(), requestIdRandom)
}

/**
 * An incoming W3C `traceparent` as the parent of the request's span; absent or malformed (wrong
 * shape, version `ff`, an all-zero id) is no parent: the request starts a new trace.
 */
export const parseTraceparent = (header: string | null): Tracer.ExternalSpan | undefined => {
  if (header === null) return undefined
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/.exec(header.trim())
  if (m === null || m[1] === "ff") return undefined
  const [, , traceId, spanId, flags] = m as unknown as [string, string, string, string, string]
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined
  return Tracer.externalSpan({ traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 })
}

/** Longest path kept in the activity log (the routes' own are far shorter). */
const MAX_LOGGED_PATH = 512

/**
 * Hands the call to the activity recorder when an account's key was presented and matched, or a
 * portal session was (key mode null) (`Credentials.identified`), whatever the answer: admitted calls, and those refused after the
 * key was known (a disabled key's 401, the allowlist's 403, a limit's 429). A call without a
 * known account (no key, an unknown or malformed one, a blocked address refused before any key
 * is read) has nobody's log to go to. A synchronous push: the write happens later, in a batch.
 * It reads the request fiber's locals and services itself, inside a step of that fiber.
 */
const recordActivity = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  ctx: RouteContext,
  status: number,
  requestId: string,
  elapsedMs: number,
  clientText: string | null
): void => {
  const who = fiber.getFiberRef(Credentials.identified)
  if (Option.isNone(who)) return
  const recorder = Context.getOption(fiber.currentContext, ActivityRecording.ActivityRecorder)
  if (Option.isNone(recorder)) return
  const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
  recorder.value.record({
    at: now - Math.round(elapsedMs),
    customerNo: who.value.account.customerNo,
    method: ctx.request.method,
    path: ctx.url.pathname.slice(0, MAX_LOGGED_PATH),
    // A portal session's call is the account's but made with no key.
    keyMode: who.value.session === undefined ? who.value.key.mode : null,
    status,
    clientIp: clientText ?? "",
    requestId
  })
}

/**
 * Adds fields to the fiber's log annotations for the rest of its life. The request program owns
 * its fiber (below), so it sets them rather than scoping them: `Effect.annotateLogs(effect, ...)`
 * would restore the old annotations afterwards, about fifteen runtime steps each time.
 */
const annotate = (fields: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => {
    let next = annotations
    for (const key in fields) next = HashMap.set(next, key, fields[key])
    return next
  })

/** Tracing off for the rest of the fiber (see {@link annotate} for why it is not scoped). */
const tracingOff = FiberRef.set(FiberRef.currentTracerEnabled, false)

/**
 * The request program, answering a {@link Reply}: the request id (kept from `X-Request-Id` or
 * made, returned on every answer and on every log line of the request), routing, error mapping,
 * one access log line (info; debug for probes and scrapes) with the route pattern, status,
 * duration, customer number and client address, the request metrics, the call in the account's
 * activity log (when an `ActivityRecorder` is provided: `createHandler` does), and a server span
 * when `options.tracing` is on. A defect becomes `500 Internal error.`.
 *
 * Run it as a fiber of its own, as `createHandler` does (one `runPromise` per request): it keeps
 * the request's id, log annotations, tracing switch, rate-limit usage and caller in the fiber's
 * locals and does not restore them, because nothing runs in that fiber after it.
 */
export const handleReply = (
  request: WaybillRequest,
  info: ConnectionInfo = {},
  options: HandlerOptions = {},
  trusted: ReadonlyArray<ClientIp.Cidr> = parseTrusted(options.trustedProxies)
): Effect.Effect<Reply, never, HandlerRequirements> =>
  Effect.suspend(() => {
    const requestId = requestIdOf(request)
    const started = performance.now()
    const url = new URL(request.url)
    const found = match(url.pathname)
    const client = ClientIp.resolve(info.remoteAddress, request.headers.get("x-forwarded-for"), trusted)
    const note: RequestNote = { customerNo: null }
    const ctx: RouteContext = { request, url, info, options, client, params: found.params ?? NO_PARAMS, note }
    // What follows the route's answer reads the fiber's locals in one runtime step.
    // The answer's tail (the RateLimit fields when a limit was checked, the activity record,
    // metrics, the access line) reads the fiber's locals and services in one runtime step.
    const program = Effect.flatMap(Effect.catchAllDefect(route(found, ctx), internalError), (reply) =>
      Effect.withFiberRuntime<Reply>((fiber) => {
        const usage = fiber.getFiberRef(Admission.currentUsage)
        const seconds = (performance.now() - started) / 1000
        // The client's canonical text, for the activity log and the access line alike.
        const clientText = Option.isSome(client) ? ClientIp.format(client.value) : null
        recordActivity(fiber, ctx, reply.status, requestId, seconds * 1000, clientText)
        const metrics = Metrics.requestMetrics(found.label, reply.status)
        metrics.count.unsafeUpdate(1, NO_LABELS)
        metrics.seconds.unsafeUpdate(seconds, NO_LABELS)
        const line = {
          method: request.method,
          route: found.label,
          status: reply.status,
          duration_ms: Math.round(seconds * 1e4) / 10,
          customer_no: note.customerNo,
          client: clientText
        }
        const log = found.route?.quiet === true ? Effect.logDebug("request") : Effect.logInfo("request")
        const headers = Option.isSome(usage) ? rateLimitHeaders(usage.value, requestId) : { "x-request-id": requestId }
        return Effect.zipRight(annotate(line), Effect.as(log, withHeaders(reply, headers)))
      })
    )
    const annotated = Effect.zipRight(annotate({ request_id: requestId }), program)
    if (options.tracing !== true) return Effect.zipRight(tracingOff, annotated)
    const parent = parseTraceparent(request.headers.get("traceparent"))
    return Effect.withSpan(
      Effect.tap(annotated, (reply) => Effect.annotateCurrentSpan("http.response.status_code", reply.status)),
      `${request.method} ${found.label}`,
      {
        kind: "server",
        attributes: {
          "http.request.method": request.method,
          "http.route": found.label,
          "waybill.request_id": requestId
        },
        ...(parent === undefined ? {} : { parent })
      }
    )
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
 * request, and shared; `dispose` releases it. With `options.memoMap`, services built from the same
 * layer by another runtime on that map (the portal's) are shared with it. A layer that cannot be built makes every request
 * answer `503`.
 *
 * When the layer provides an `ActivityStore` (`StorageKysely.layer` does), every call made with
 * an account's key is recorded in that account's activity log, in batches
 * (`ActivityRecorder.ts`; `options.activity` tunes or turns it off); `dispose` writes what is
 * still buffered.
 */
export const createHandler = <E>(
  layer: Layer.Layer<HandlerRequirements, E, never>,
  options: HandlerOptions = {}
): WaybillHandler => {
  const runtime = ManagedRuntime.make(
    Layer.provideMerge(ActivityRecording.layer(options.activity), layer),
    options.memoMap
  )
  const trusted = parseTrusted(options.trustedProxies)
  // The programs never fail, so a rejection is the run itself failing (the layer could not be
  // built, the runtime was disposed): 503. (`runFork` with an exit observer instead of
  // `runPromise` measured the same, about 8 us per run either way.)
  const unavailable = (request: WaybillRequest) =>
    withHeaders(failure(503, Messages.unavailable), { "x-request-id": requestIdOf(request) })
  const handleRaw: RawHandler = (request, info) =>
    runtime.runPromise(handleReply(request, info, options, trusted)).catch(() => unavailable(request))
  const handler = (request: Request, info?: ConnectionInfo) =>
    runtime.runPromise(handle(request, info, options, trusted)).catch(() => toResponse(unavailable(request)))
  Object.defineProperty(handler, RAW, { value: handleRaw })
  return { handler, handleRaw, dispose: () => runtime.dispose() }
}

/** Keeps `Cancel` in the public type graph for hosts that provide a `CancelProvider`. */
export type CancelProviderTag = typeof Cancel.CancelProvider
