/**
 * What a failed call throws: {@link WaybillApiError} when Waybill (or something in front of it)
 * answered with a refusal, {@link WaybillNetworkError} when no answer came at all. Both carry a
 * `_tag`, so `switch (error._tag)` narrows a {@link WaybillError}.
 */
import type { components } from "./schema.js"

/** The interface's error envelope: `data` is null, `error.message` says what went wrong. */
export type ErrorEnvelope = components["schemas"]["ErrorEnvelope"]

/**
 * What kind of refusal an answer is, from its status (and, for 409 and 422, from the
 * idempotency messages). `refused` is an HTTP 200 whose envelope holds an error (the documents
 * endpoint answers some refusals that way); `unexpected` is any status the interface does not
 * document, or a body that is not the envelope.
 */
export type WaybillApiErrorKind =
  | "refused"
  | "bad_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "idempotency_in_progress"
  | "idempotency_mismatch"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "upstream_failed"
  | "unavailable"
  | "unexpected"

/** The messages the idempotency rules answer with (docs/api/idempotency.md). */
export const IdempotencyMessages = {
  inProgress: "A request with this Idempotency-Key is in progress.",
  mismatch: "This Idempotency-Key was used with a different request."
} as const

const kindOfStatus: Readonly<Record<number, WaybillApiErrorKind>> = {
  200: "refused",
  400: "bad_request",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  502: "upstream_failed",
  503: "unavailable"
}

/** The kind of an answer with `status` whose envelope (if any) says `message`. */
export const errorKind = (status: number, message: string | undefined): WaybillApiErrorKind => {
  if (status === 409 && message === IdempotencyMessages.inProgress) return "idempotency_in_progress"
  if (status === 422 && message === IdempotencyMessages.mismatch) return "idempotency_mismatch"
  return kindOfStatus[status] ?? "unexpected"
}

/** Is `value` the interface's error envelope? */
export const isErrorEnvelope = (value: unknown): value is ErrorEnvelope => {
  if (typeof value !== "object" || value === null) return false
  const { data, error } = value as { data?: unknown; error?: unknown }
  return (
    data === null &&
    typeof error === "object" &&
    error !== null &&
    typeof (error as { message?: unknown }).message === "string"
  )
}

/** Seconds from a `Retry-After` field (delta-seconds or an HTTP date), or `undefined`. */
export const retryAfterSeconds = (value: string | null, now: number = Date.now()): number | undefined => {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** A refusal: Waybill (or a proxy in front of it) answered, and the answer is not a success. */
export class WaybillApiError extends Error {
  readonly _tag = "WaybillApiError" as const
  override readonly name = "WaybillApiError"
  /** The HTTP status (200 for an envelope whose `error` is set). */
  readonly status: number
  readonly kind: WaybillApiErrorKind
  /** The error envelope, when the body was one (the download endpoint answers plain text). */
  readonly envelope: ErrorEnvelope | undefined
  /** `Retry-After` in seconds (429 and 503), when the answer had one. */
  readonly retryAfter: number | undefined
  /** The answer's `X-Request-Id`, to quote when asking the courier about this call. */
  readonly requestId: string | undefined

  constructor(options: {
    readonly status: number
    readonly message: string
    readonly envelope: ErrorEnvelope | undefined
    readonly headers: Headers
  }) {
    super(options.message)
    this.status = options.status
    this.envelope = options.envelope
    this.kind = errorKind(options.status, options.envelope?.error.message)
    this.retryAfter = retryAfterSeconds(options.headers.get("retry-after"))
    this.requestId = options.headers.get("x-request-id") ?? undefined
  }
}

/** No answer: the connection failed or timed out on every attempt the call was allowed. */
export class WaybillNetworkError extends Error {
  readonly _tag = "WaybillNetworkError" as const
  override readonly name = "WaybillNetworkError"
  /** How many times the request was sent. */
  readonly attempts: number

  constructor(options: { readonly message: string; readonly attempts: number; readonly cause: unknown }) {
    super(options.message, { cause: options.cause })
    this.attempts = options.attempts
  }
}

/** Everything a {@link WaybillClient} call can throw, apart from the caller's own abort. */
export type WaybillError = WaybillApiError | WaybillNetworkError

/** Is `error` one of this package's errors? */
export const isWaybillError = (error: unknown): error is WaybillError =>
  error instanceof WaybillApiError || error instanceof WaybillNetworkError

/**
 * The {@link WaybillApiError} for a response that is not a success. Reads the body: an
 * envelope's message when it is one, else the text (trimmed, at most 500 characters), else the
 * status line.
 */
export const apiErrorOf = async (response: Response): Promise<WaybillApiError> => {
  const text = await response.text().catch(() => "")
  let envelope: ErrorEnvelope | undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (isErrorEnvelope(parsed)) envelope = parsed
  } catch {
    // Not JSON: a plain-text answer (downloads) or a proxy's page.
  }
  const fallback = text.trim().slice(0, 500) || `HTTP ${response.status} ${response.statusText}`.trim()
  return new WaybillApiError({
    status: response.status,
    message: envelope?.error.message ?? fallback,
    envelope,
    headers: response.headers
  })
}
