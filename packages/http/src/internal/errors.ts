/**
 * The one table from domain error tags to the interface's answers (statuses and messages).
 * Routes spread the groups that apply into `Effect.catchTags`; `catchTags` rejects handlers for
 * tags a program cannot raise and the route's type rejects any tag left unhandled, so the
 * compiler keeps this table and the programs in step.
 */
import * as Effect from "effect/Effect"
import { failure } from "./respond.js"

/** Interface 7.4 wording, reused for every keyed endpoint. */
export const Messages = {
  noToken: "You did not provide an access token.",
  ipBlocked: "IP address is blocked",
  accessDenied: "Access denied.",
  invalidTrackingNumber: "A valid tracking number is required.",
  alreadyCanceled: "The order is already canceled.",
  notCancelable: "This order cannot be canceled.",
  unavailable: "The service is temporarily unavailable. Retry with backoff.",
  duplicateKey: "The API key was given more than once.",
  noRecords: "No records found.",
  tooManyRequests: "Too many requests. Retry after the number of seconds in Retry-After.",
  httpsRequired: "HTTPS is required."
} as const

/** A body over the route's size limit (413). */
export const bodyTooLarge = (limit: number): string => `The body exceeds the limit of ${limit} bytes.`

/** Missing and invalid API keys (interface 5, 7.4, 7.5). */
export const credentialErrors = {
  MissingCredential: () =>
    Effect.succeed(failure(401, Messages.noToken, { "www-authenticate": 'Bearer realm="waybill"' })),
  InvalidCredential: (e: { readonly reason: string }) =>
    Effect.succeed(
      e.reason === "duplicate"
        ? failure(400, Messages.duplicateKey)
        : failure(401, Messages.accessDenied, { "www-authenticate": 'Bearer realm="waybill", error="invalid_token"' })
    )
} as const

/**
 * After authentication (`Admission`): an address outside the account's IP allowlist gets the
 * same 403 `Access denied.` as any endpoint it may not use; over a limit is 429 with
 * `Retry-After` (the RateLimit fields are added by the handler for every limited answer).
 */
export const admissionErrors = {
  IpNotAllowed: () => Effect.succeed(failure(403, Messages.accessDenied)),
  RateLimited: (e: { readonly retryAfterSeconds: number }) =>
    Effect.succeed(failure(429, Messages.tooManyRequests, { "retry-after": String(e.retryAfterSeconds) }))
} as const

/** A request that cannot be interpreted. */
export const badRequestErrors = {
  BadRequest: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message))
} as const

/** Storage trouble: 503 with Retry-After; the cause goes to the log, never to the client. */
export const storageErrors = {
  StorageError: (e: { readonly operation: string; readonly cause: unknown }) =>
    Effect.logError("storage failure", e.operation, e.cause).pipe(
      Effect.as(failure(503, Messages.unavailable, { "retry-after": "5" }))
    )
} as const

/** Unusable `limit` or `starting_after` of a paged list. */
export const pageErrors = {
  InvalidPage: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message))
} as const
