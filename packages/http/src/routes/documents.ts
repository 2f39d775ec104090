/**
 * `GET|POST /api/v1/order/docs/`: order documents metadata with download links (interface 2.4,
 * 4.2, 5, 7.2, 8). Parameters come from the query, or from a urlencoded form on POST (both
 * together count as one request: a parameter in both is given twice). Raw JSON bodies are
 * refused. Every answer carries `Cache-Control: no-store`: success answers hold links that act
 * as bearer credentials, and keys may arrive in the URL.
 *
 * Answers: 200 with `data.orders`; 200 with `error` for a missing or invalid credential and for
 * `No records found.` (the same bytes for unknown and for other customers' orders); 400 for a
 * missing or invalid lookup, limits, a repeated parameter, or plain HTTP; 403 for a blocked IP;
 * 503 for storage trouble.
 *
 * Without an Authorization header or a key in the form or query, a signed-in portal user's
 * session cookie is the credential (interface 5, rule 1; `internal/access.ts`).
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { Credentials, Documents } from "@waybill/core"
import { isJson, mediaType, readBody } from "../internal/body.js"
import { Messages, admissionErrors, bodyTooLarge, storageErrors } from "../internal/errors.js"
import { isHttps, publicBase } from "../internal/https.js"
import { failure, success } from "../internal/respond.js"
import { type WaybillRequest, withHeaders } from "../Raw.js"
import type { Route, RouteContext } from "./Route.js"
import { paramsOf } from "../internal/params.js"
import { type DocumentsData, DocumentsParams, type OrderDocuments } from "../openapi/wire.js"
import { keyed, queryOf } from "../internal/access.js"

class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType") {}
class UnreadableForm extends Data.TaggedError("UnreadableForm") {}

/** Form bodies hold at most a lookup of 4,096 characters and a key; this leaves ample room. */
export const DOCUMENTS_FORM_LIMIT = 64 * 1024

/** This route's own refusals (the OpenAPI document lists them). */
export const DocumentsMessages = {
  unsupportedMediaType: "Send the parameters as a urlencoded form or in the query string.",
  formNotUtf8: "The form is not valid UTF-8.",
  bodyUnreadable: "The body could not be read."
} as const
const utf8 = new TextDecoder("utf-8", { fatal: true })
const EMPTY = new URLSearchParams()

const formOf = Effect.fnUntraced(function* (request: WaybillRequest) {
  if (request.method !== "POST") return EMPTY
  const type = mediaType(request)
  const bytes = yield* readBody(request, DOCUMENTS_FORM_LIMIT)
  if (bytes.length === 0 && type === "") return EMPTY
  if (isJson(type) || type !== "application/x-www-form-urlencoded") return yield* new UnsupportedMediaType()
  const text = yield* Effect.try({ try: () => utf8.decode(bytes), catch: () => new UnreadableForm() })
  return new URLSearchParams(text)
})

/** The wire shape of one order (interface 2.4). */
const orderJson = (base: string, o: Documents.OrderDocuments): typeof OrderDocuments.Type => ({
  control_no: o.order.trackNo,
  reference: o.order.reference,
  requested_by: o.order.requestedBy,
  invoice: o.order.invoice,
  documents: o.documents.map(({ document, ticket }) => ({
    type: document.type,
    page: String(document.page),
    id: document.sourceId,
    uri: `${base}/api/v1/order/docs/download/?ticket=${ticket}`
  }))
})

/**
 * Never stored by a cache: answers hold bearer links, and who the caller is may come from the
 * Authorization header or a session cookie (`Vary` names both for any cache that ignores
 * `no-store`).
 */
const noStore = { "cache-control": "no-store", vary: "Authorization, Cookie" }

/** The lookup's answer, or the failures `documentsRoute` maps to the interface's answers. */
const lookupAnswer = Effect.fnUntraced(function* (ctx: RouteContext) {
  if (ctx.options.allowInsecureHttp !== true && !isHttps(ctx)) return failure(400, Messages.httpsRequired, noStore)
  const { principal, input: form } = yield* keyed(ctx, {
    read: () => formOf(ctx.request),
    candidates: (form) => Credentials.documentsPlaces((name) => form.getAll(name), queryOf(ctx)),
    session: true
  })
  const query = paramsOf(DocumentsParams, ctx.url)
  const both = (name: keyof typeof DocumentsParams.fields) => [...form.getAll(name), ...query(name)]
  const result = yield* Documents.lookup({
    client: ctx.client,
    principal,
    params: {
      control_no: both("control_no"),
      search_field: both("search_field"),
      search_value: both("search_value"),
      id: both("id")
    }
  })
  const base = publicBase(ctx)
  const data: typeof DocumentsData.Type = { orders: result.orders.map((o) => orderJson(base, o)) }
  return success(data, 200, noStore)
})

export const documentsRoute: Route = {
  methods: ["GET", "POST"],
  run: (ctx: RouteContext) =>
    lookupAnswer(ctx).pipe(
      Effect.catchTags({
        IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked, noStore)),
        InvalidLookup: (e) => Effect.succeed(failure(400, e.message, noStore)),
        NoRecordsFound: () => Effect.succeed(failure(200, Messages.noRecords, noStore)),
        MissingCredential: () => Effect.succeed(failure(200, Messages.noToken, noStore)),
        InvalidCredential: (e) =>
          Effect.succeed(
            e.reason === "duplicate"
              ? failure(400, Messages.duplicateKey, noStore)
              : failure(200, Messages.accessDenied, noStore)
          ),
        UnsupportedMediaType: () => Effect.succeed(failure(400, DocumentsMessages.unsupportedMediaType, noStore)),
        UnreadableForm: () => Effect.succeed(failure(400, DocumentsMessages.formNotUtf8, noStore)),
        BodyTooLarge: (e) => Effect.succeed(failure(413, bodyTooLarge(e.limit), noStore)),
        BodyUnreadable: () => Effect.succeed(failure(400, DocumentsMessages.bodyUnreadable, noStore)),
        ...admissionErrors,
        ...storageErrors
      }),
      Effect.map((reply) => withHeaders(reply, noStore))
    )
}
