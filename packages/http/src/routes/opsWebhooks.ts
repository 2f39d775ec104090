/**
 * `/ops/v1` webhook routes: the same core programs as the CLI (`webhook ...`), guarded by the
 * operator token like the rest of `/ops/v1`. Secrets appear only in the answers that create
 * them (add, rotate-secret), never in listings; those answers are `Cache-Control: no-store`, so
 * no proxy or client cache keeps a copy of the secret.
 *
 * - `GET  /ops/v1/webhooks/?customer_no=NO`            endpoints (of one account)
 * - `POST /ops/v1/webhooks/`                           JSON `{ customer_no, url, events: [..] }`
 * - `GET|PATCH|DELETE /ops/v1/webhooks/{id}/`          the endpoint; PATCH JSON `{ url?, events? }`
 *   changes it (same URL rules as adding); DELETE removes it, dropping its queued deliveries
 * - `GET  /ops/v1/webhooks/{id}/deliveries/`           deliveries and the delivery log
 * - `POST /ops/v1/webhooks/{id}/rotate-secret|disable|enable|test/`
 * - `POST /ops/v1/webhooks/{id}/recover/`              JSON `{ since: ISO time }`
 * - `POST /ops/v1/events/{event_id}/resend/`
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Ssrf, Webhooks } from "@waybill/core"
import { isJson, mediaType, parseJson, readBody } from "../internal/body.js"
import { storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import type { Reply } from "../Raw.js"
import type { Route, RouteContext } from "./Route.js"
import * as OperatorViews from "../views/OperatorViews.js"

const bodyErrors = {
  BodyTooLarge: (e: { readonly limit: number }) =>
    Effect.succeed(failure(413, `The body exceeds the limit of ${e.limit} bytes.`)),
  BodyUnreadable: () => Effect.succeed(failure(400, "The body could not be read.")),
  ...storageErrors
}

const addErrors = {
  AccountNotFound: () => Effect.succeed(failure(404, "No account has this customer number.")),
  InvalidWebhook: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message)),
  ...bodyErrors
}

const endpointErrors = {
  WebhookNotFound: () => Effect.succeed(failure(404, "No webhook endpoint has this id.")),
  ...bodyErrors
}

/** On every answer that carries a secret. */
const noStore = { "cache-control": "no-store" }

const AddBody = Schema.Struct({
  customer_no: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String)
})
const RecoverBody = Schema.Struct({ since: Schema.String })

/** Reads a small JSON body and decodes it; a Left is the answer to give. */
const jsonBody = <A, I>(ctx: RouteContext, schema: Schema.Schema<A, I>, hint: string) =>
  Effect.map(readBody(ctx.request, 16 * 1024), (bytes): Either.Either<A, Reply> => {
    if (!isJson(mediaType(ctx.request))) return Either.left(failure(415, `Send JSON: ${hint}.`))
    const raw = parseJson(new TextDecoder().decode(bytes))
    if (Either.isLeft(raw)) return Either.left(failure(400, raw.left))
    return Either.mapLeft(Schema.decodeUnknownEither(schema)(raw.right), () =>
      failure(400, `The body must be ${hint}.`)
    )
  })

const allowPrivate = (ctx: RouteContext) =>
  Option.getOrElse(Ssrf.parseAllowList((ctx.options.webhookAllowPrivate ?? []).join(",")), () => [])

/** `/ops/v1/webhooks/` */
export const opsWebhooksRoute: Route = {
  methods: ["GET", "POST"],
  operator: true,
  run: (ctx) => {
    const program = Effect.gen(function* () {
      if (ctx.request.method === "GET") {
        const customerNo = ctx.url.searchParams.get("customer_no") ?? undefined
        return success((yield* Webhooks.listEndpoints(customerNo)).map(OperatorViews.endpoint))
      }
      const body = yield* jsonBody(ctx, AddBody, '{"customer_no": string, "url": string, "events": [string]}')
      if (Either.isLeft(body)) return body.left
      const created = yield* Webhooks.addEndpoint(
        { customerNo: body.right.customer_no, url: body.right.url, eventTypes: body.right.events },
        { allowPrivate: allowPrivate(ctx) }
      )
      return success(
        { ...OperatorViews.endpoint(created.endpoint), secret: Redacted.value(created.secret) },
        201,
        noStore
      )
    })
    return program.pipe(Effect.catchTags(addErrors))
  }
}

/** `/ops/v1/webhooks/{id}/{deliveries|rotate-secret|disable|enable|test|recover}/` */
export const opsWebhookRoute: Route = {
  methods: ["GET", "POST"],
  operator: true,
  run: (ctx) => {
    const [id, sub] = [ctx.params[0]!, ctx.params[1]!]
    const method = ctx.request.method
    const program = Effect.gen(function* () {
      if (sub === "deliveries") {
        if (method !== "GET") return failure(405, `Method ${method} is not allowed here.`, { allow: "GET" })
        const d = yield* Webhooks.deliveries(id)
        return success({
          endpoint: OperatorViews.endpoint(d.endpoint),
          deliveries: d.deliveries.map(OperatorViews.delivery),
          attempts: d.attempts.map(OperatorViews.attempt)
        })
      }
      if (method !== "POST") return failure(405, `Method ${method} is not allowed here.`, { allow: "POST" })
      if (sub === "rotate-secret") {
        const rotated = yield* Webhooks.rotateSecret(id)
        return success(
          { ...OperatorViews.endpoint(rotated.endpoint), secret: Redacted.value(rotated.secret) },
          200,
          noStore
        )
      }
      if (sub === "disable" || sub === "enable")
        return success(OperatorViews.endpoint(yield* Webhooks.setEnabled(id, sub === "enable")))
      if (sub === "test") return success({ endpoint_id: id, event_id: yield* Webhooks.sendTest(id) })
      if (sub === "recover") {
        const body = yield* jsonBody(ctx, RecoverBody, '{"since": ISO 8601 time}')
        if (Either.isLeft(body)) return body.left
        const since = Date.parse(body.right.since)
        if (Number.isNaN(since)) return failure(400, "since must be an ISO 8601 time.")
        return success({ endpoint_id: id, queued: yield* Webhooks.recover(id, since) })
      }
      return failure(404, "Unknown webhook route; one of: deliveries, rotate-secret, disable, enable, test, recover.")
    })
    return program.pipe(Effect.catchTags(endpointErrors))
  }
}

/** `/ops/v1/events/{event_id}/resend/` */
export const opsEventRoute: Route = {
  methods: ["POST"],
  operator: true,
  run: (ctx) => {
    const [eventId, sub] = [ctx.params[0]!, ctx.params[1]!]
    if (sub !== "resend") return Effect.succeed(failure(404, "Unknown event route; one of: resend."))
    return Effect.map(Webhooks.resend(eventId), (queued) => success({ event_id: eventId, queued })).pipe(
      Effect.catchTags(storageErrors)
    )
  }
}

const UpdateBody = Schema.Struct({
  url: Schema.optional(Schema.String),
  events: Schema.optional(Schema.Array(Schema.String))
})

/** `/ops/v1/webhooks/{id}/`: one endpoint; PATCH changes its URL or events, DELETE removes it. */
export const opsEndpointRoute: Route = {
  methods: ["GET", "PATCH", "DELETE"],
  operator: true,
  run: (ctx) => {
    const id = ctx.params[0]!
    const program = Effect.gen(function* () {
      if (ctx.request.method === "GET") return success(OperatorViews.endpoint(yield* Webhooks.getEndpoint(id)))
      if (ctx.request.method === "DELETE")
        return success({ ...OperatorViews.endpoint(yield* Webhooks.deleteEndpoint(id)), deleted: true })
      const body = yield* jsonBody(ctx, UpdateBody, '{"url"?: string, "events"?: [string]}')
      if (Either.isLeft(body)) return body.left
      const updated = yield* Webhooks.updateEndpoint(
        id,
        {
          ...(body.right.url === undefined ? {} : { url: body.right.url }),
          ...(body.right.events === undefined ? {} : { eventTypes: body.right.events })
        },
        { allowPrivate: allowPrivate(ctx) }
      )
      return success(OperatorViews.endpoint(updated))
    })
    return program.pipe(
      Effect.catchTags({
        InvalidWebhook: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message)),
        ...endpointErrors
      })
    )
  }
}
