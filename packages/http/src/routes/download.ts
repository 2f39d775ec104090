/**
 * `GET|HEAD /api/v1/order/docs/download/?ticket=`: one document's file (interface 4.3, 7.3).
 * The ticket alone is the credential. Every answer, error or not, is `Cache-Control: no-store`,
 * `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` (the URL is a bearer
 * credential; a page showing the file must not leak it onwards). Errors are plain text:
 * 403 invalid, expired or revoked ticket, or a blocked IP; 404 document gone or file missing;
 * 405 other methods (with `Allow`); 503 temporary trouble.
 */
import * as Effect from "effect/Effect"
import { Documents } from "@waybill/core"
import type { Reply } from "../Raw.js"
import type { Route } from "./Route.js"
import { paramsOf } from "../internal/params.js"
import { DownloadParams } from "../openapi/wire.js"

const SAFE = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
} as const

const encoder = new TextEncoder()

/** A plain-text answer with the safety headers. */
export const text = (status: number, message: string, headers: Record<string, string> = {}): Reply => {
  const bytes = encoder.encode(`${message}\n`)
  return {
    status,
    headers: {
      ...SAFE,
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(bytes.byteLength),
      ...headers
    },
    body: bytes
  }
}

export const DownloadMessages = {
  rejected: "The download link is invalid or has expired. Request fresh links from /api/v1/order/docs/.",
  ipBlocked: "IP address is blocked",
  gone: "The document is no longer available.",
  unavailable: "The document is temporarily unavailable. Retry later; request fresh links if this one has expired."
} as const

const unavailable = (what: string, detail: unknown) =>
  Effect.logError(`download: ${what}`, detail).pipe(
    Effect.as(text(503, DownloadMessages.unavailable, { "retry-after": "5" }))
  )

export const downloadRoute: Route = {
  methods: ["GET", "HEAD"],
  methodNotAllowed: (method) =>
    text(405, `Method ${method} is not allowed here; use GET or HEAD.`, { allow: "GET, HEAD" }),
  run: ({ client, request, url }) => {
    const head = request.method === "HEAD"
    return Documents.download({ client, ticket: paramsOf(DownloadParams, url)("ticket"), head }).pipe(
      Effect.map(
        (file): Reply => ({
          status: 200,
          headers: { ...SAFE, "content-type": file.contentType, "content-length": String(file.size) },
          body: head || file.body === undefined ? null : file.body
        })
      ),
      Effect.catchTags({
        IpBlocked: () => Effect.succeed(text(403, DownloadMessages.ipBlocked)),
        TicketRejected: () => Effect.succeed(text(403, DownloadMessages.rejected)),
        DocumentUnavailable: () => Effect.succeed(text(404, DownloadMessages.gone)),
        DocumentsNotConfigured: (e) => unavailable("not configured", e.message),
        ImageTransformFailed: (e) => unavailable("image transform failed", e.message),
        StorageError: (e) => unavailable(`storage failure in ${e.operation}`, e.cause)
      })
    )
  }
}
