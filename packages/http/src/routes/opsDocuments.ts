/**
 * `/ops/v1` document routes: the same core programs as the CLI (`document ...`, `signature
 * add`, `order ...`), guarded by the operator token like the rest of `/ops/v1`.
 *
 * - `GET  /ops/v1/orders/{track_no}/documents/`      a page of the order's documents, every version
 *   (`?limit=1..100&starting_after=CURSOR`, newest first)
 * - `POST /ops/v1/orders/{track_no}/documents/?type=&rotation=&batch=&id=`   body: the file
 * - `POST /ops/v1/orders/{track_no}/signature/?name=`                        body: the file
 * - `POST /ops/v1/orders/{track_no}/new-version/`    start a new order version
 * - `POST /ops/v1/orders/{track_no}/invoice/`        JSON `{ "invoice": "INV-1" }`
 * - `POST /ops/v1/documents/{doc_id}/hide|unhide|remove/`
 * - `POST /ops/v1/documents/{doc_id}/replace/`       body: the new file
 *
 * Files travel as the raw request body (any content type; the format is read from the bytes).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Documents, WaybillConfig } from "@waybill/core"
import { isJson, mediaType, parseJson, readBody } from "../internal/body.js"
import { pageErrors, storageErrors } from "../internal/errors.js"
import { pageQuery } from "../internal/paging.js"
import { failure, success } from "../internal/respond.js"
import type { Route, RouteContext } from "./Route.js"
import * as OperatorViews from "../views/OperatorViews.js"

const errors = {
  ShipmentNotFound: () => Effect.succeed(failure(404, "No shipment has this tracking number.")),
  InvalidDocument: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message)),
  VersionConflict: () =>
    Effect.succeed(failure(409, "The document or order changed while this request was processed; retry.")),
  DocumentsNotConfigured: (e: { readonly message: string }) =>
    Effect.logError("documents not configured", e.message).pipe(
      Effect.as(failure(503, "Document storage is not configured on this host."))
    ),
  BodyTooLarge: (e: { readonly limit: number }) =>
    Effect.succeed(failure(413, `The body exceeds the limit of ${e.limit} bytes.`)),
  BodyUnreadable: () => Effect.succeed(failure(400, "The body could not be read.")),
  ...storageErrors
}

const file = (ctx: RouteContext) =>
  Effect.flatMap(WaybillConfig, (c) => readBody(ctx.request, c.documents.maxFileBytes))

const optionalInt = (value: string | null, name: string) => {
  if (value === null || value === "") return Either.right(undefined)
  return /^\d{1,7}$/.test(value)
    ? Either.right(Number(value))
    : Either.left(new Documents.InvalidDocument({ message: `${name} must be a positive integer.` }))
}

const InvoiceBody = Schema.Struct({ invoice: Schema.String })

/** `/ops/v1/orders/{track_no}/{documents|signature|new-version|invoice}/` */
export const opsOrderRoute: Route = {
  methods: ["GET", "POST"],
  operator: true,
  run: (ctx) => {
    const [trackNo, sub] = [ctx.params[0]!, ctx.params[1]!]
    const method = ctx.request.method
    const q = ctx.url.searchParams
    const program = Effect.gen(function* () {
      if (sub === "documents" && method === "GET")
        return success(
          OperatorViews.orderDocuments(yield* Documents.listForOperator(trackNo, yield* pageQuery(ctx.url)))
        )
      if (method !== "POST")
        return failure(405, `Method ${method} is not allowed here.`, {
          allow: sub === "documents" ? "GET, POST" : "POST"
        })
      if (sub === "documents") {
        const rotation = q.get("rotation")
        const parsedRotation =
          rotation === null || rotation === "" ? Either.right(0 as const) : Documents.parseRotation(rotation)
        if (Either.isLeft(parsedRotation)) return yield* parsedRotation.left
        const batch = optionalInt(q.get("batch"), "batch")
        if (Either.isLeft(batch)) return yield* batch.left
        const bytes = yield* file(ctx)
        const document = yield* Documents.addDocument({
          trackNo,
          type: q.get("type") ?? "",
          bytes,
          rotation: parsedRotation.right,
          batch: batch.right,
          sourceId: q.get("id") ?? undefined
        })
        return success(OperatorViews.document(yield* Documents.forOperator(document)), 201)
      }
      if (sub === "signature") {
        const bytes = yield* file(ctx)
        const capturedAt = q.get("captured_at")
        const at = capturedAt === null ? undefined : Date.parse(capturedAt)
        if (at !== undefined && Number.isNaN(at)) return failure(400, "captured_at must be an ISO 8601 time.")
        const document = yield* Documents.addSignature({ trackNo, name: q.get("name") ?? "", bytes, capturedAt: at })
        return success(OperatorViews.document(yield* Documents.forOperator(document)), 201)
      }
      if (sub === "new-version") {
        const version = yield* Documents.newOrderVersion(trackNo)
        return success({ track_no: trackNo, order_version: version })
      }
      if (sub === "invoice") {
        const bytes = yield* readBody(ctx.request, 4096)
        if (!isJson(mediaType(ctx.request))) return failure(415, 'Send JSON: {"invoice": "INV-1"}.')
        const raw = parseJson(new TextDecoder().decode(bytes))
        if (Either.isLeft(raw)) return failure(400, raw.left)
        const body = Schema.decodeUnknownEither(InvoiceBody)(raw.right)
        if (Either.isLeft(body)) return failure(400, 'The body must be {"invoice": string}.')
        const order = yield* Documents.setInvoice(trackNo, body.right.invoice)
        return success({ track_no: order.trackNo, invoice: order.invoice })
      }
      return failure(404, "Unknown order route; one of: documents, signature, new-version, invoice.")
    })
    return program.pipe(Effect.catchTags({ ...errors, ...pageErrors }))
  }
}

const documentErrors = {
  ...errors,
  DocumentNotFound: () => Effect.succeed(failure(404, "No document has this id."))
}

/** `/ops/v1/documents/{doc_id}/{hide|unhide|remove|replace}/` */
export const opsDocumentRoute: Route = {
  methods: ["POST"],
  operator: true,
  run: (ctx) => {
    const [id, action] = [ctx.params[0]!, ctx.params[1]!]
    const program = Effect.gen(function* () {
      if (action === "hide" || action === "unhide" || action === "remove") {
        const d = yield* Documents.setVisibility(id, action)
        return success(OperatorViews.document(yield* Documents.forOperator(d)))
      }
      if (action === "replace") {
        const d = yield* Documents.replaceDocument(id, yield* file(ctx))
        return success(OperatorViews.document(yield* Documents.forOperator(d)))
      }
      return failure(404, "Unknown document action; one of: hide, unhide, remove, replace.")
    })
    return program.pipe(Effect.catchTags(documentErrors))
  }
}
