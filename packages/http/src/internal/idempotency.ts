/**
 * `Idempotency-Key` on the wire (docs/api/idempotency.md): the header, the request's
 * fingerprint, and the answers of core's `Idempotency.run` as replies. Used by the routes whose
 * repeat would change something (booking, cancel), after admission: the key's scope is the
 * admitted account and key mode, and a request refused at the door stores nothing.
 *
 * A request without the header takes none of this: no hashing, no query.
 */
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import { type Account, Idempotency, type StoredAnswer } from "@waybill/core"
import type { Reply } from "../Raw.js"
import type { RouteContext } from "../routes/Route.js"
import { storageErrors } from "./errors.js"
import { failure } from "./respond.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const sha256 = (bytes: Uint8Array) =>
  Effect.promise(() =>
    globalThis.crypto.subtle.digest("SHA-256", new Uint8Array(bytes)).then((d) => Encoding.encodeHex(new Uint8Array(d)))
  )

/**
 * The request's fingerprint: SHA-256 (hex) of the method, the target (path and query: a cancel's
 * tracking number is in the query) and the SHA-256 of the body bytes. WebCrypto, available in
 * every runtime the handler runs on.
 */
export const fingerprint = (method: string, url: URL, body: Uint8Array): Effect.Effect<string> =>
  Effect.flatMap(sha256(body), (bodyHash) =>
    sha256(encoder.encode(`${method} ${url.pathname}${url.search}\n${bodyHash}`))
  )

/** A reply as core stores it; only JSON envelopes (bytes or text) are ever stored. */
const toAnswer = (reply: Reply): StoredAnswer => {
  const headers: Record<string, string> = {}
  for (const name in reply.headers) {
    const value = reply.headers[name]!
    headers[name] = typeof value === "string" ? value : value.join(", ")
  }
  const body = reply.body
  return {
    status: reply.status,
    headers,
    body: typeof body === "string" ? body : body instanceof Uint8Array ? decoder.decode(body) : ""
  }
}

const toReply = (answer: StoredAnswer, replayed: boolean): Reply => {
  const body = encoder.encode(answer.body)
  const headers: Record<string, string> = { ...answer.headers, "content-length": String(body.byteLength) }
  if (replayed) headers["idempotent-replayed"] = "true"
  return { status: answer.status, headers, body }
}

/**
 * Runs `work` as an idempotent request when the caller sent `Idempotency-Key`, and as it is
 * otherwise. `reply` turns the work's outcome into the route's reply (its error table); with a
 * key it runs inside the work's transaction for a success, so the stored answer commits with the
 * work. Answers: the route's own; the stored one again with `Idempotent-Replayed: true`; 400 for
 * an unusable key; 409 while the first request runs; 422 for a key used with another request;
 * 503 when the store fails.
 */
export const idempotent = <A, E, R>(
  ctx: RouteContext,
  principal: Account.Principal,
  body: Uint8Array,
  work: Effect.Effect<A, E, R>,
  reply: <X>(self: Effect.Effect<A, E, X>) => Effect.Effect<Reply, never, X>
) => {
  const key = ctx.request.headers.get("idempotency-key")
  if (key === null) return reply(work)
  if (!Idempotency.isValidKey(key)) return Effect.succeed(failure(400, Idempotency.invalidKeyMessage))
  return Effect.flatMap(fingerprint(ctx.request.method, ctx.url, body), (print) =>
    Idempotency.run({ principal, key, fingerprint: print }, work, (exit) => Effect.map(reply(exit), toAnswer))
  ).pipe(
    Effect.map(({ answer, replayed }) => toReply(answer, replayed)),
    Effect.catchTags({
      IdempotencyKeyInProgress: () => Effect.succeed(failure(409, Idempotency.IdempotencyKeyInProgress.text)),
      IdempotencyKeyMismatch: () => Effect.succeed(failure(422, Idempotency.IdempotencyKeyMismatch.text)),
      ...storageErrors
    })
  )
}
