/**
 * @module Handler
 *
 * The whole wire protocol as one Fetch-standard function, so it runs under node:http (through
 * `@waybill/http-node`), Hono, Next.js route handlers, Bun and Deno alike. Routing is a table of
 * exact paths; every answer, including 404, 405, 413 and 415, is the interface's JSON envelope.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Redacted from "effect/Redacted"
import { Booking, BadRequest, WaybillConfig } from "@waybill/core"
import { BodyTooLarge, BodyUnreadable, isJson, mediaType, readBody } from "./internal/body.js"
import { safeUrlForLog } from "./internal/redact.js"
import { failure, success } from "./internal/respond.js"

/** Options a host passes; nothing here is read from the environment. */
export interface HandlerOptions {
  /** Public base URL (used in links the API returns). Defaults to the request's origin. */
  readonly baseUrl?: string
  /** Guards `/ops/v1`; without it the operator API answers 404. */
  readonly operatorToken?: Redacted.Redacted<string>
}

/** What the server adapter knows about the connection. */
export interface ConnectionInfo {
  readonly remoteAddress?: string
}

/** Everything the handler's programs need; a host builds it from adapters. */
export type HandlerRequirements = Booking.BookingRequirements

export interface WaybillHandler {
  /** Answers one request. Never rejects: failures become envelopes. */
  readonly handler: (request: Request, info?: ConnectionInfo) => Promise<Response>
  /** Releases the layer's resources (database handles are the host's). */
  readonly dispose: () => Promise<void>
}

class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType")<{ readonly message: string }> {}

interface RouteContext {
  readonly request: Request
  readonly url: URL
  readonly info: ConnectionInfo
  readonly options: HandlerOptions
}

interface Route {
  readonly methods: ReadonlyArray<string>
  readonly run: (ctx: RouteContext) => Effect.Effect<Response, never, HandlerRequirements>
}

const decoder = new TextDecoder("utf-8", { fatal: true })

/** Body of create shipments: JSON, or a urlencoded form whose field `data` holds the JSON. */
const bookingBody = (request: Request, limit: number) =>
  Effect.gen(function*() {
    const type = mediaType(request)
    const jsonBody = isJson(type)
    if (!jsonBody && type !== "application/x-www-form-urlencoded") {
      return yield* new UnsupportedMediaType({
        message: "Send the shipments as application/json, or as a urlencoded form field named data."
      })
    }
    const bytes = yield* readBody(request, limit)
    const text = yield* Effect.try({
      try: () => decoder.decode(bytes),
      catch: () => new BadRequest({ message: "The body is not valid UTF-8." })
    })
    let source = text
    if (!jsonBody) {
      const values = new URLSearchParams(text).getAll("data")
      if (values.length !== 1) {
        return yield* new BadRequest({
          message: values.length === 0 ? "The form field data is missing." : "The form field data was given more than once."
        })
      }
      source = values[0]!
    }
    return yield* Effect.try({
      try: () => JSON.parse(source) as unknown,
      catch: () => new BadRequest({ message: jsonBody ? "The body is not valid JSON." : "The form field data is not valid JSON." })
    })
  })

const createShipmentsRoute: Route = {
  methods: ["POST"],
  run: ({ request }) =>
    Effect.gen(function*() {
      const config = yield* WaybillConfig
      const body = yield* bookingBody(request, config.booking.maxBodyBytes)
      const data = yield* Booking.createShipments({ body, authorization: request.headers.get("authorization") })
      return success(data)
    }).pipe(
      Effect.catchTags({
        UnsupportedMediaType: (e) => Effect.succeed(failure(415, e.message)),
        BodyTooLarge: (e) => Effect.succeed(failure(413, `The body exceeds the limit of ${e.limit} bytes.`)),
        BodyUnreadable: () => Effect.succeed(failure(400, "The body could not be read.")),
        ValidationFailed: (e) => Effect.succeed(failure(400, e.problems.join("; "))),
        ...commonErrors
      })
    )
}

/** Errors every API route maps the same way (interface 5, 7.4, 7.5). */
const commonErrors = {
  MissingCredential: () =>
    Effect.succeed(failure(401, "You did not provide an access token.", { "www-authenticate": 'Bearer realm="waybill"' })),
  InvalidCredential: (e: { readonly reason: string }) =>
    Effect.succeed(
      e.reason === "duplicate"
        ? failure(400, "The API key was given more than once.")
        : failure(401, "Access denied.", { "www-authenticate": 'Bearer realm="waybill", error="invalid_token"' })
    ),
  BadRequest: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message)),
  StorageError: (e: { readonly operation: string; readonly cause: unknown }) =>
    Effect.logError("storage failure", e.operation, e.cause).pipe(
      Effect.as(failure(503, "The service is temporarily unavailable. Retry with backoff.", { "retry-after": "5" }))
    )
} as const

const ROUTES: Readonly<Record<string, Route>> = {
  "/api/v1/order/json/": createShipmentsRoute
}

const route = (ctx: RouteContext): Effect.Effect<Response, never, HandlerRequirements> => {
  const path = ctx.url.pathname.endsWith("/") ? ctx.url.pathname : `${ctx.url.pathname}/`
  const found = ROUTES[path]
  if (found === undefined) return Effect.succeed(failure(404, "Not found."))
  if (!found.methods.includes(ctx.request.method)) {
    return Effect.succeed(
      failure(405, `Method ${ctx.request.method} is not allowed here.`, { allow: found.methods.join(", ") })
    )
  }
  return found.run(ctx)
}

/** The request program: routing, error mapping, and a debug access log with credentials masked. */
export const handle = (request: Request, info: ConnectionInfo = {}, options: HandlerOptions = {}) =>
  Effect.gen(function*() {
    const url = new URL(request.url)
    const response = yield* route({ request, url, info, options })
    yield* Effect.logDebug("request", request.method, safeUrlForLog(url), response.status)
    return response
  }).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.logError("unexpected defect", defect).pipe(Effect.as(failure(500, "Internal error.")))
    )
  )

/**
 * Builds the handler from a layer that provides every port. The layer is built once, on the first
 * request, and shared; `dispose` releases it.
 */
export const createHandler = <E>(
  layer: Layer.Layer<HandlerRequirements, E, never>,
  options: HandlerOptions = {}
): WaybillHandler => {
  const runtime = ManagedRuntime.make(layer)
  return {
    handler: (request, info) =>
      runtime
        .runPromise(handle(request, info, options))
        .catch(() => failure(503, "The service is temporarily unavailable. Retry with backoff.")),
    dispose: () => runtime.dispose()
  }
}

