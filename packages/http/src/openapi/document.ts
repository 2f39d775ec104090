/**
 * @module document
 *
 * The OpenAPI 3.1 document of `/api/v1`, generated from the wire schemas (`./wire.ts`, made of
 * core's schemas where core has them) with `effect/JSONSchema`, and from the message tables the
 * routes answer with (`internal/errors.ts`, each route's own table). Named schemas become
 * `components.schemas`; every status a route answers is listed with its messages as examples.
 *
 * Pure data: no Node API, so the handler serves it on any runtime (`GET /api/v1/openapi.json`),
 * and the build writes the same object to `docs/api/openapi.json`.
 */
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"
import { Config, Idempotency, JsonInput } from "@waybill/core"
import { bodyTooLarge, Messages } from "../internal/errors.js"
import { AccountSetupMessages, Rejections } from "../routes/accountsetup.js"
import { BookingMessages } from "../routes/booking.js"
import { DOCUMENTS_FORM_LIMIT, DocumentsMessages } from "../routes/documents.js"
import { DownloadMessages } from "../routes/download.js"
import * as Wire from "./wire.js"

/** A JSON value as the document holds it. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** The OpenAPI 3.1 document (a plain JSON object). */
export interface OpenApiDocument {
  readonly openapi: "3.1.0"
  readonly info: { readonly title: string; readonly version: string; readonly description: string }
  readonly paths: Readonly<Record<string, Json>>
  readonly components: { readonly [key: string]: Json }
  readonly [key: string]: Json
}

// ---------------------------------------------------------------------------------------------
// Schemas to JSON Schema

type AnySchema = Schema.Schema.AnyNoContext

const REF = "#/components/schemas/"

/**
 * Drops the `$id`s effect/JSONSchema gives its built-in schemas (`unknown` is
 * `{"$id": "/schemas/unknown"}`): in a document that holds several, one `$id` names several
 * places, which JSON Schema forbids and validators refuse.
 */
const withoutBuiltinIds = (value: unknown): Json => {
  if (Array.isArray(value)) return value.map(withoutBuiltinIds)
  if (typeof value !== "object" || value === null) return value as Json
  const out: Record<string, Json> = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === "$id" && typeof v === "string" && v.startsWith("/schemas/")) continue
    out[k] = withoutBuiltinIds(v)
  }
  return out
}

/**
 * Collects named schemas while operations are described. Answers are described strictly (no
 * member the schema does not name), so the e2e tests catch a route that answers more than the
 * document says; inputs allow extra members, because the server ignores unused fields
 * (interface 2.2).
 */
class Components {
  readonly answers: Record<string, JSONSchema.JsonSchema7> = {}
  readonly inputs: Record<string, JSONSchema.JsonSchema7> = {}

  /** The JSON Schema of an answer: a `$ref` when it is named, its named parts collected. */
  of(schema: AnySchema): Json {
    return withoutBuiltinIds(
      JSONSchema.fromAST(schema.ast, {
        definitions: this.answers,
        definitionPath: REF,
        target: "openApi3.1",
        additionalPropertiesStrategy: "strict"
      })
    )
  }

  /** The JSON Schema of a request body. */
  input(schema: AnySchema): Json {
    return withoutBuiltinIds(
      JSONSchema.fromAST(schema.ast, {
        definitions: this.inputs,
        definitionPath: REF,
        target: "openApi3.1",
        additionalPropertiesStrategy: "allow"
      })
    )
  }

  /** The inline JSON Schema of a parameter struct (no top-level `$ref`). */
  inline(schema: AnySchema): { readonly properties: Record<string, Json>; readonly required: ReadonlyArray<string> } {
    const s = withoutBuiltinIds(
      JSONSchema.fromAST(schema.ast, {
        definitions: this.inputs,
        definitionPath: REF,
        target: "openApi3.1",
        topLevelReferenceStrategy: "skip",
        additionalPropertiesStrategy: "allow"
      })
    ) as { properties?: Record<string, Json>; required?: ReadonlyArray<string> }
    return { properties: s.properties ?? {}, required: s.required ?? [] }
  }

  /** Every named schema, sorted by name; a name used for two different shapes is a bug here. */
  all(): Record<string, Json> {
    const out: Record<string, Json> = {}
    for (const [name, schema] of [...Object.entries(this.answers), ...Object.entries(this.inputs)].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    )) {
      if (name in out && JSON.stringify(out[name]) !== JSON.stringify(schema))
        throw new Error(`openapi: the schema name ${name} is used for two shapes`)
      out[name] = withoutBuiltinIds(schema)
    }
    return out
  }
}

/** The query parameters of a struct schema: each property is one parameter. */
const queryParameters = (c: Components, schema: AnySchema): Array<Json> => {
  const { properties, required } = c.inline(schema)
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string } & Record<string, Json>
    return {
      name,
      in: "query",
      required: required.includes(name),
      ...(description === undefined ? {} : { description }),
      schema: rest
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Answers

/** The envelope of a failure, as the routes write it (`internal/respond.ts`). */
const errorValue = (message: string): Json => ({ data: null, error: { message, exception: null } })

/** Example names: the message's first words, made unique. */
const examplesOf = (messages: ReadonlyArray<string>, value: (m: string) => Json): Record<string, Json> => {
  const out: Record<string, Json> = {}
  for (const message of messages) {
    const base =
      message
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-|-$/g, "")
        .slice(0, 40)
        .replace(/-$/, "") || "example"
    let name = base
    for (let i = 2; name in out; i++) name = `${base}-${i}`
    out[name] = { summary: message, value: value(message) }
  }
  return out
}

const JSON_TYPE = "application/json"

const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` })

interface Answer {
  readonly description: string
  readonly content: Json
  readonly headers?: Record<string, Json>
}

/** A JSON error answer listing its messages. */
const errors = (c: Components, description: string, messages: ReadonlyArray<string>, retry = false): Answer => ({
  description,
  content: {
    [JSON_TYPE]: { schema: c.of(Wire.ErrorEnvelope), examples: examplesOf(messages, errorValue) }
  },
  ...(retry ? { headers: { "Retry-After": headerRef("Retry-After") } } : {})
})

/** A JSON success answer of `name` (`<name>Envelope`). */
const ok = <A, I>(c: Components, description: string, name: string, data: Schema.Schema<A, I>): Answer => ({
  description,
  content: { [JSON_TYPE]: { schema: c.of(Wire.envelope(name, data)) } }
})

/** A 200 that is either the success envelope or an error envelope (documents, track). */
const okOrError = <A, I>(
  c: Components,
  description: string,
  name: string,
  data: Schema.Schema<A, I>,
  messages: ReadonlyArray<string>
): Answer => ({
  description,
  content: {
    [JSON_TYPE]: {
      schema: { oneOf: [c.of(Wire.envelope(name, data)), c.of(Wire.ErrorEnvelope)] },
      examples: examplesOf(messages, errorValue)
    }
  }
})

/** A plain-text answer (download errors: the message and a newline). */
const text = (description: string, messages: ReadonlyArray<string>, retry = false): Answer => ({
  description,
  content: {
    "text/plain": { schema: { type: "string" }, examples: examplesOf(messages, (m) => `${m}\n`) }
  },
  ...(retry ? { headers: { "Retry-After": headerRef("Retry-After") } } : {})
})

/** An HTML page (the verification link's confirm page). */
const html = (description: string): Answer => ({
  description,
  content: { "text/html": { schema: { type: "string" } } }
})

// ---------------------------------------------------------------------------------------------
// The errors shared by keyed routes (internal/errors.ts)

const keyErrors = (c: Components) => ({
  401: {
    ...errors(c, "No key, or a key that does not authenticate.", [Messages.noToken, Messages.accessDenied]),
    headers: { "WWW-Authenticate": headerRef("WWW-Authenticate") }
  },
  403: errors(c, "A blocked address, or an address outside the account's IP allowlist.", [
    Messages.ipBlocked,
    Messages.accessDenied
  ]),
  429: {
    ...errors(c, "Over a rate limit.", [Messages.tooManyRequests], true),
    headers: {
      "Retry-After": headerRef("Retry-After"),
      RateLimit: headerRef("RateLimit"),
      "RateLimit-Policy": headerRef("RateLimit-Policy")
    }
  },
  503: errors(c, "Storage or service trouble; retry with backoff.", [Messages.unavailable], true)
})

const examples = {
  validation: "Phone is required; ServiceType is required",
  quoteValidation: "origin must be a 5-digit ZIP code; weight is required",
  invalidJson: "The body is not valid JSON.",
  tooDeep: JsonInput.tooDeepMessage("The body"),
  notShipments: 'The body must be an object {"data": {"shipments": [...]}} with one or more shipments.',
  noShipments: "data.shipments must hold at least one shipment.",
  lookup: "A lookup is required: control_no, search_field with search_value, or id.",
  tooManyOrders: "More than 100 orders match; narrow the lookup."
} as const

/** `Idempotency-Key` (docs/api/idempotency.md): on the operations whose repeat would change something. */
const idempotencyKey: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1-255 printable ASCII characters. Within 24 hours, the same key with the same request answers the " +
    "first answer again (Idempotent-Replayed: true) and does nothing; scope: the key's account and mode.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" }
}

/** The refusals an `Idempotency-Key` adds: in progress (409), used with another request (422). */
const idempotencyErrors = (c: Components) => ({
  422: errors(c, "The Idempotency-Key was used with a different request.", [Idempotency.IdempotencyKeyMismatch.text])
})

const replayed = (answer: Answer): Answer => ({
  ...answer,
  headers: { ...(answer.headers ?? {}), "Idempotent-Replayed": headerRef("Idempotent-Replayed") }
})

const bearer: Json = { bearerAuth: [] }
const queryKey: Json = { queryKey: [] }

// ---------------------------------------------------------------------------------------------
// Operations

const responses = (answers: Readonly<Record<number, Answer>>): Json =>
  Object.fromEntries(Object.entries(answers).map(([status, a]) => [status, a as unknown as Json]))

const paths = (c: Components): Record<string, Json> => {
  const keyed = keyErrors(c)
  return {
    "/api/v1/order/json/": {
      post: {
        operationId: "createShipments",
        tags: ["Shipments"],
        summary: "Create shipments",
        description:
          "Books one or more shipments (interface 4.1). The key: Authorization: Bearer, else data.token, else " +
          "data.key. One invalid shipment is a 400; with several, each invalid one carries its own errors and " +
          "the valid ones are booked.",
        security: [bearer, {}],
        parameters: [idempotencyKey],
        requestBody: {
          required: true,
          content: {
            [JSON_TYPE]: { schema: c.input(Wire.CreateShipmentsRequest) },
            "application/x-www-form-urlencoded": { schema: c.input(Wire.CreateShipmentsForm) }
          }
        },
        responses: responses({
          200: replayed(ok(c, "The shipments' results.", "CreateShipmentsData", Wire.CreateShipmentsData)),
          400: errors(c, "A body or a single shipment that cannot be used.", [
            examples.validation,
            examples.invalidJson,
            examples.tooDeep,
            examples.notShipments,
            examples.noShipments,
            BookingMessages.notUtf8,
            BookingMessages.formDataMissing,
            BookingMessages.formDataRepeated,
            BookingMessages.bodyUnreadable,
            Messages.duplicateKey,
            Idempotency.invalidKeyMessage
          ]),
          ...keyed,
          409: errors(c, "A request with the same Idempotency-Key is still running; nothing was done.", [
            Idempotency.IdempotencyKeyInProgress.text
          ]),
          ...idempotencyErrors(c),
          413: errors(c, "The body is larger than the configured limit.", [
            bodyTooLarge(Config.defaults.booking.maxBodyBytes)
          ]),
          415: errors(c, "Neither JSON nor a urlencoded form.", [BookingMessages.unsupportedMediaType])
        })
      }
    },
    "/api/v1/order/docs/": Object.fromEntries(
      (["get", "post"] as const).map((method) => [
        method,
        {
          operationId: method === "get" ? "getOrderDocuments" : "postOrderDocuments",
          tags: ["Documents"],
          summary: "Order documents metadata",
          description:
            "Documents of orders the key may read, with download links (interface 4.2). HTTPS only. Always " +
            "inspect error, even with HTTP 200. Precedence: search_value, then id, then control_no." +
            (method === "post" ? " Parameters may come in a urlencoded form and in the query." : ""),
          security: [bearer, queryKey, { portalSession: [] }],
          parameters: queryParameters(c, Wire.DocumentsParams),
          ...(method === "post"
            ? {
                requestBody: {
                  required: false,
                  content: { "application/x-www-form-urlencoded": { schema: c.input(Wire.DocumentsParams) } }
                }
              }
            : {}),
          responses: responses({
            200: okOrError(
              c,
              "The orders; or an error for a missing or invalid key or no authorized match.",
              "DocumentsData",
              Wire.DocumentsData,
              [Messages.noRecords, Messages.noToken, Messages.accessDenied]
            ),
            400: errors(c, "A missing or invalid lookup, a limit, a repeated key, or plain HTTP.", [
              examples.lookup,
              examples.tooManyOrders,
              Messages.httpsRequired,
              Messages.duplicateKey,
              DocumentsMessages.unsupportedMediaType,
              DocumentsMessages.formNotUtf8,
              DocumentsMessages.bodyUnreadable
            ]),
            403: keyed[403],
            413: errors(c, "The form is too large.", [bodyTooLarge(DOCUMENTS_FORM_LIMIT)]),
            429: keyed[429],
            503: keyed[503]
          })
        }
      ])
    ),
    "/api/v1/order/docs/download/": Object.fromEntries(
      (["get", "head"] as const).map((method) => [
        method,
        {
          operationId: method === "get" ? "downloadDocument" : "headDocument",
          tags: ["Documents"],
          summary: "Download a document",
          description:
            "One document's file (interface 4.3). The ticket is the credential; use the uri exactly as given. " +
            "Errors are plain text. Every answer is Cache-Control: no-store.",
          security: [{}],
          parameters: queryParameters(c, Wire.DownloadParams),
          responses: responses({
            200: {
              description: "The file (HEAD: its fields only), saved rotation applied.",
              content: Object.fromEntries(
                ["application/pdf", "image/jpeg", "image/png", "image/gif", "image/tiff"].map((type) => [
                  type,
                  { schema: { type: "string", contentMediaType: type } }
                ])
              )
            },
            403: text("An invalid or expired ticket, lost access, or a blocked address.", [
              DownloadMessages.rejected,
              DownloadMessages.ipBlocked
            ]),
            404: text("The document is no longer available, or its file is missing.", [DownloadMessages.gone]),
            503: text("Temporary trouble.", [DownloadMessages.unavailable], true)
          })
        }
      ])
    ),
    "/api/v1/order/cancel/json/": {
      get: {
        operationId: "cancelShipment",
        tags: ["Shipments"],
        summary: "Cancel a shipment",
        description:
          "Cancels a shipment no driver has been assigned to yet (interface 4.4). Errors use the six messages " +
          "of interface 7.4.",
        security: [queryKey, bearer],
        parameters: [...queryParameters(c, Wire.CancelParams), idempotencyKey],
        responses: responses({
          200: replayed(ok(c, "Canceled.", "CancelData", Wire.CancelData)),
          400: errors(c, "A missing or malformed tracking number, or an unusable Idempotency-Key.", [
            Messages.invalidTrackingNumber,
            Idempotency.invalidKeyMessage
          ]),
          ...keyed,
          409: errors(
            c,
            "Already canceled, past the point of cancelling, or a request with the same Idempotency-Key still running.",
            [Messages.alreadyCanceled, Messages.notCancelable, Idempotency.IdempotencyKeyInProgress.text]
          ),
          ...idempotencyErrors(c),
          502: errors(c, "The cancel provider refused or failed (provider mode).", [Messages.notCancelable])
        })
      }
    },
    "/api/v1/utilities/quote/": {
      get: {
        operationId: "quote",
        tags: ["Utilities"],
        summary: "Quote",
        description:
          "List rates without a key, the account's negotiated rates with one (interface 4.6). Each row is priced " +
          "as booking would price it.",
        security: [bearer, queryKey, {}],
        parameters: queryParameters(c, Wire.QuoteParams),
        responses: responses({
          200: ok(c, "The priced options.", "QuoteData", Wire.QuoteData),
          400: errors(c, "Invalid parameters (each problem named), or a repeated key.", [
            examples.quoteValidation,
            Messages.duplicateKey
          ]),
          ...keyed
        })
      }
    },
    "/api/v1/utilities/track/": {
      get: {
        operationId: "track",
        tags: ["Utilities"],
        summary: "Track a shipment",
        description:
          "The coarse view for anyone with the tracking number, the precise view with the owner's key " +
          "(interface 4.6). Unknown and malformed numbers get 200 with No records found.",
        security: [bearer, queryKey, {}],
        parameters: queryParameters(c, Wire.TrackParams),
        responses: responses({
          200: okOrError(c, "The shipment's view, or No records found.", "TrackData", Wire.TrackData, [
            Messages.noRecords
          ]),
          400: errors(c, "A repeated key.", [Messages.duplicateKey]),
          ...keyed
        })
      }
    },
    "/api/v1/accountsetup/": {
      post: {
        operationId: "accountSetup",
        tags: ["Provisioning"],
        summary: "Account provisioning (beta)",
        description:
          "One step of account provisioning (interface 4.5), chosen by action, with urlencoded fields. " +
          "See docs/provisioning.md for each action's fields and answer.",
        security: [{}],
        parameters: queryParameters(c, Wire.AccountSetupParams),
        requestBody: {
          required: false,
          content: { "application/x-www-form-urlencoded": { schema: c.input(Wire.AccountSetupForm) } }
        },
        responses: responses(provisioningAnswers(c))
      }
    },
    "/api/v1/accountsetup/verify/": Object.fromEntries(
      (["get", "post"] as const).map((method) => [
        method,
        {
          operationId: method === "get" ? "verifyLinkPage" : "verifyLink",
          tags: ["Provisioning"],
          summary: method === "get" ? "The verification link's confirm page" : "Confirm the e-mail address",
          description:
            "GET shows a page with a button (mail scanners that prefetch links cannot use the link up); the " +
            "button POSTs the token, which verifies the e-mail address.",
          security: [{}],
          parameters: queryParameters(c, Wire.VerifyLinkParams),
          ...(method === "post"
            ? {
                requestBody: {
                  required: false,
                  content: { "application/x-www-form-urlencoded": { schema: c.input(Wire.VerifyLinkParams) } }
                }
              }
            : {}),
          responses: responses({
            200: html(method === "get" ? "The confirm page." : "Verified."),
            400: html("The link is not valid, has expired or was already used."),
            404: errors(c, "Provisioning is disabled on this server.", [AccountSetupMessages.notFound]),
            503: errors(c, "Storage trouble.", [Messages.unavailable], true)
          })
        }
      ])
    ),
    "/api/v1/openapi.json": {
      get: {
        operationId: "openApiDocument",
        tags: ["Reference"],
        summary: "This document",
        security: [{}],
        responses: {
          200: { description: "The OpenAPI document.", content: { [JSON_TYPE]: { schema: { type: "object" } } } }
        }
      }
    }
  }
}

/** Every answer of `POST /api/v1/accountsetup/`, grouped by status from the routes' tables. */
const provisioningAnswers = (c: Components): Record<number, Answer> => {
  const byStatus = new Map<number, Array<string>>()
  const add = (status: number, message: string) => {
    const list = byStatus.get(status) ?? []
    if (!list.includes(message)) list.push(message)
    byStatus.set(status, list)
  }
  for (const r of Object.values(Rejections)) add(r.status, r.message)
  for (const [status, message] of AccountSetupMessages.answers) add(status, message)
  add(403, Messages.ipBlocked)
  add(503, Messages.unavailable)
  const describe: Record<number, string> = {
    400: "Missing or invalid fields, a wrong or expired code, or an unknown action.",
    401: "The validation_key is not valid.",
    403: "A blocked address, a locked registration, or an e-mail not verified yet.",
    404: "Provisioning is disabled on this server.",
    409: "The step does not fit the registration's stage.",
    413: "The form is too large.",
    415: "Not a urlencoded form.",
    429: "Too many attempts, e-mails or registrations.",
    503: "E-mail, storage or configuration trouble; retry."
  }
  const out: Record<number, Answer> = {
    200: ok(c, "The step's answer (see each action).", "AccountSetupData", Wire.AccountSetupData)
  }
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    out[status] = errors(c, describe[status] ?? "An error.", byStatus.get(status)!, status === 429 || status === 503)
  }
  return out
}

/** Response header fields the answers name. */
const headers: Json = {
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
  "WWW-Authenticate": {
    description: 'Bearer realm="waybill" (with error="invalid_token" for a bad key).',
    schema: { type: "string" }
  },
  RateLimit: {
    description: 'Where the caller stands, e.g. "key";r=599;t=42 (draft-ietf-httpapi-ratelimit-headers).',
    schema: { type: "string" }
  },
  "RateLimit-Policy": { description: 'The policy, e.g. "key";q=600;w=60.', schema: { type: "string" } },
  "Idempotent-Replayed": {
    description: "true on an answer replayed for a repeated Idempotency-Key (nothing was done again).",
    schema: { type: "string", enum: ["true"] }
  }
}

/**
 * The OpenAPI 3.1 document of `/api/v1`. Deterministic: the same code gives the same document,
 * byte for byte once serialized, so the committed copy can be compared with it.
 */
export const openApiDocument = (): OpenApiDocument => {
  const c = new Components()
  const p = paths(c)
  const schemas = c.all()
  return {
    openapi: "3.1.0",
    info: {
      title: "Waybill API",
      version: "1.0.0",
      description:
        "The courier's shipping interface under /api/v1: booking, documents, cancellation, quote, tracking and " +
        "account provisioning. Every JSON answer is the envelope {data, error}. Generated from the handler's " +
        "schemas (@waybill/http openApiDocument)."
    },
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    tags: [
      { name: "Shipments" },
      { name: "Documents" },
      { name: "Utilities" },
      { name: "Provisioning" },
      { name: "Reference" }
    ],
    paths: p,
    components: {
      schemas,
      headers,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer <API key>; decides alone." },
        queryKey: {
          type: "apiKey",
          in: "query",
          name: "key",
          description: "The API key in the query (logged: prefer the header)."
        },
        portalSession: {
          type: "apiKey",
          in: "cookie",
          name: "__Host-waybill_session",
          description:
            "A signed-in account portal user's browser session (documents metadata only): used when the request " +
            "has no Authorization header and no key; acts under the account's live key."
        }
      }
    }
  }
}
