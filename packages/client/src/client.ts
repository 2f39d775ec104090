/**
 * `WaybillClient`: one typed function per /api/v1 operation over openapi-fetch and the
 * generated `paths`, with the API key as `Authorization: Bearer`, an `Idempotency-Key` on every
 * POST and on cancel, retries where they are safe (./transport.ts), and refusals thrown as
 * {@link WaybillApiError}.
 */
import createClient, { type Client } from "openapi-fetch"
import { apiErrorOf, isErrorEnvelope, WaybillApiError } from "./errors.js"
import type { components, operations, paths } from "./schema.js"
import { defaultRetry, type RequestPolicy, type RetryOptions, type Runtime, send, sleep } from "./transport.js"

type Schemas = components["schemas"]

/** What `createShipments` answers: each shipment's tracking number or its errors. */
export type CreateShipmentsData = Schemas["CreateShipmentsData"]
/** What `createShipments` sends: `{ data: { shipments: [...] } }`. */
export type CreateShipmentsRequest = Schemas["CreateShipmentsRequest"]
/** One shipment of a booking. */
export type ShipmentInput = Schemas["ShipmentInput"]
/** The documents lookup's parameters (the key comes from the client, not from here). */
export type DocumentsQuery = Omit<
  NonNullable<operations["getOrderDocuments"]["parameters"]["query"]>,
  "key" | "apikey" | "token"
>
export type DocumentsData = Schemas["DocumentsData"]
/** One document of an order, with its download `uri`. */
export type OrderDocument = Schemas["OrderDocument"]
export type CancelData = Schemas["CancelData"]
/** The quote's parameters (the key comes from the client, not from here). */
export type QuoteQuery = Omit<operations["quote"]["parameters"]["query"], "key">
export type QuoteData = Schemas["QuoteData"]
/** The track view: coarse for the public, precise for the shipment's own account. */
export type TrackData = Schemas["TrackData"]
/** The fields of an account-setup step (urlencoded form). */
export type AccountSetupForm = Schemas["AccountSetupForm"]
export type AccountSetupData = Schemas["AccountSetupData"]
/** The account-setup steps, in the order a new customer takes them. */
export type AccountSetupAction =
  | "pre-register"
  | "pre-register-verify"
  | "pre-register-resend"
  | "pre-register-check"
  | "start"
  | "step1"
  | "step2"

export interface WaybillClientOptions {
  /** The host's address, e.g. `https://waybill.example.com` (no `/api/v1`). */
  readonly baseUrl: string
  /** The API key, sent as `Authorization: Bearer`; quote, track and account setup work without. */
  readonly apiKey?: string | undefined
  /** Retry settings for every call (see {@link RetryOptions}). */
  readonly retry?: RetryOptions
  /** Per-attempt timeout in milliseconds (default 30 000); `undefined` leaves it to fetch. */
  readonly timeoutMs?: number | undefined
  /** The fetch to use (default: `globalThis.fetch`, read at each call). */
  readonly fetch?: (request: Request) => Promise<Response>
  /** The wait between attempts (default: `setTimeout`); tests inject their own. */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>
  /** The jitter's randomness in [0, 1) (default `Math.random`). */
  readonly random?: () => number
  /** A new idempotency key (default `crypto.randomUUID()`). */
  readonly newIdempotencyKey?: () => string
}

/** Options of one call. */
export interface CallOptions {
  /** Ends the call, its attempts and its waits. */
  readonly signal?: AbortSignal
}

/** Options of a call that changes something. */
export interface IdempotentCallOptions extends CallOptions {
  /**
   * The `Idempotency-Key` (1-255 printable ASCII characters). Default: a new random UUID for
   * this call, the same on each of its retries. Pass your own to make a call retryable across
   * process restarts; pass `false` to send none (the call is then never retried).
   */
  readonly idempotencyKey?: string | false
}

/** A downloaded document: the answer's body as a stream, and its type. */
export interface Download {
  /** The `Content-Type` the host answered, e.g. `application/pdf`. */
  readonly contentType: string
  /** The `Content-Length`, when the host sent one. */
  readonly contentLength: number | undefined
  /** The body, unread: stream it, or call {@link Download.bytes}. */
  readonly body: ReadableStream<Uint8Array>
  /** Reads the whole body (once: the stream and this share it). */
  readonly bytes: () => Promise<Uint8Array>
}

const DEFAULT_TIMEOUT_MS = 30_000

/**
 * A client of one Waybill host. Every method throws {@link WaybillApiError} when the host
 * refuses (the interface's envelope, also an HTTP 200 whose `error` is set) and
 * {@link WaybillNetworkError} when no attempt got an answer.
 */
export class WaybillClient {
  /**
   * The openapi-fetch client over the generated `paths`, with the key, the retries and the
   * timeout: for anything the typed methods do not cover. It retries GET and HEAD, and any
   * request carrying an `Idempotency-Key` header; it sets no key on its own.
   */
  readonly raw: Client<paths>

  readonly #retry: Required<RetryOptions>
  readonly #runtime: Runtime
  readonly #timeoutMs: number | undefined
  readonly #newKey: () => string

  constructor(options: WaybillClientOptions) {
    this.#retry = { ...defaultRetry, ...definedOnly(options.retry ?? {}) }
    this.#timeoutMs = "timeoutMs" in options ? options.timeoutMs : DEFAULT_TIMEOUT_MS
    const fetch = options.fetch
    this.#runtime = {
      fetch: fetch ?? ((request) => globalThis.fetch(request)),
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random
    }
    this.#newKey = options.newIdempotencyKey ?? randomUuid
    const apiKey = options.apiKey
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      ...(apiKey === undefined ? {} : { headers: { Authorization: `Bearer ${apiKey}` } }),
      fetch: (request) =>
        this.#send(request, {
          retry: request.method === "GET" || request.method === "HEAD" || request.headers.has("idempotency-key")
        })
    })
  }

  /** Sends through the transport with this client's settings. */
  #send(request: Request, policy: Omit<RequestPolicy, "timeoutMs">): Promise<Response> {
    return send(request, { ...policy, timeoutMs: this.#timeoutMs }, this.#retry, this.#runtime)
  }

  /** The transport for one typed call, whose safety the method decides (not the method verb). */
  #fetchFor(retry: boolean) {
    return (request: Request) => this.#send(request, { retry })
  }

  #key(options: IdempotentCallOptions | undefined): string | undefined {
    const given = options?.idempotencyKey
    return given === false ? undefined : (given ?? this.#newKey())
  }

  /**
   * Books shipments (`POST /api/v1/order/json/`). With several shipments, the invalid ones come
   * back with their errors in `shipments[i]` and the valid ones are booked; a single invalid one
   * is a 400 ({@link WaybillApiError}).
   */
  async createShipments(
    shipments: ReadonlyArray<ShipmentInput>,
    options?: IdempotentCallOptions & { readonly jsonstrn?: string }
  ): Promise<CreateShipmentsData> {
    const key = this.#key(options)
    const body: CreateShipmentsRequest = {
      data: {
        shipments: [...shipments],
        ...(options?.jsonstrn === undefined ? {} : { jsonstrn: options.jsonstrn })
      }
    }
    return unwrap(
      await this.raw.POST("/api/v1/order/json/", {
        body,
        params: { header: key === undefined ? {} : { "Idempotency-Key": key } },
        fetch: this.#fetchFor(key !== undefined),
        ...signalOf(options)
      })
    )
  }

  /**
   * Cancels a shipment (`GET /api/v1/order/cancel/json/?id=`). The host treats a cancel with an
   * `Idempotency-Key` as idempotent (a retry gets the first `success` again), so it gets one by
   * default too.
   */
  async cancel(trackingNumber: string, options?: IdempotentCallOptions): Promise<CancelData> {
    const key = this.#key(options)
    return unwrap(
      await this.raw.GET("/api/v1/order/cancel/json/", {
        params: { query: { id: trackingNumber }, header: key === undefined ? {} : { "Idempotency-Key": key } },
        fetch: this.#fetchFor(key !== undefined),
        ...signalOf(options)
      })
    )
  }

  /**
   * The documents of orders the key may read (`GET /api/v1/order/docs/`), each with a download
   * `uri`. The host serves this over HTTPS only (unless it was told to allow plain HTTP).
   */
  async documents(query: DocumentsQuery, options?: CallOptions): Promise<DocumentsData> {
    return unwrap(
      await this.raw.GET("/api/v1/order/docs/", {
        params: { query },
        fetch: this.#fetchFor(true),
        ...signalOf(options)
      })
    )
  }

  /**
   * Downloads a document from its `uri` exactly as the documents lookup gave it (the ticket in
   * it is the credential, so no API key is sent: the uri may name another host). Throws
   * {@link WaybillApiError} with the host's plain-text message when the ticket is refused.
   */
  async download(document: string | Pick<OrderDocument, "uri">, options?: CallOptions): Promise<Download> {
    const uri = typeof document === "string" ? document : document.uri
    const request = new Request(uri, { method: "GET", ...signalOf(options) })
    const response = await this.#send(request, { retry: true })
    if (!response.ok || response.body === null) throw await apiErrorOf(response)
    const length = response.headers.get("content-length")
    return {
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      contentLength: length === null ? undefined : Number(length),
      body: response.body,
      bytes: async () => new Uint8Array(await response.arrayBuffer())
    }
  }

  /** Rates for a route and weight (`GET /api/v1/utilities/quote/`); the account's own with a key. */
  async quote(query: QuoteQuery, options?: CallOptions): Promise<QuoteData> {
    return unwrap(
      await this.raw.GET("/api/v1/utilities/quote/", {
        params: { query },
        fetch: this.#fetchFor(true),
        ...signalOf(options)
      })
    )
  }

  /** A shipment's status and stops (`GET /api/v1/utilities/track/?idx=`); precise for its own account. */
  async track(trackingNumber: string, options?: CallOptions): Promise<TrackData> {
    return unwrap(
      await this.raw.GET("/api/v1/utilities/track/", {
        params: { query: { idx: trackingNumber } },
        fetch: this.#fetchFor(true),
        ...signalOf(options)
      })
    )
  }

  /**
   * One account-setup step (`POST /api/v1/accountsetup/?action=`), its fields as a urlencoded
   * form. Each step is safe to repeat by design (`start` returns the same `customer_no`, later
   * steps are bound to single-use tokens), so it is retried; the host ignores the
   * `Idempotency-Key` it is sent like every POST.
   */
  async accountSetup(
    action: AccountSetupAction,
    fields: AccountSetupForm,
    options?: IdempotentCallOptions
  ): Promise<AccountSetupData> {
    const key = this.#key(options)
    return unwrap(
      await this.raw.POST("/api/v1/accountsetup/", {
        params: { query: { action } },
        body: fields,
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          ...(key === undefined ? {} : { "Idempotency-Key": key })
        },
        fetch: this.#fetchFor(true),
        ...signalOf(options)
      })
    )
  }
}

/**
 * A random (version 4) UUID: `crypto.randomUUID` where the runtime has it (browsers offer it
 * only on secure origins), else the same from `crypto.getRandomValues`.
 */
export const randomUuid = (): string => {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID()
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Drops `undefined` values, so `exactOptionalPropertyTypes` options do not erase defaults. */
const definedOnly = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>

const signalOf = (options: CallOptions | undefined) => (options?.signal === undefined ? {} : { signal: options.signal })

/** The `data` of the success envelope an openapi-fetch result may hold. */
type EnvelopeData<R> = R extends { readonly data?: infer E }
  ? NonNullable<E> extends infer Env
    ? Env extends { readonly data: infer T }
      ? Exclude<T, null>
      : never
    : never
  : never

/**
 * The `data` of a successful envelope, or the {@link WaybillApiError} of any other answer (a
 * status other than 2xx, or an HTTP 200 whose envelope holds an error).
 */
const unwrap = <R extends { readonly data?: unknown; readonly error?: unknown; readonly response: Response }>(
  result: R
): EnvelopeData<R> => {
  const { response } = result
  const body: unknown = response.ok ? result.data : result.error
  if (response.ok && typeof body === "object" && body !== null && (body as { error?: unknown }).error == null) {
    return (body as { data: EnvelopeData<R> }).data
  }
  const envelope = isErrorEnvelope(body) ? body : undefined
  const text = typeof body === "string" ? body.trim().slice(0, 500) : ""
  throw new WaybillApiError({
    status: response.status,
    message: envelope?.error.message ?? (text || `HTTP ${response.status} ${response.statusText}`.trim()),
    envelope,
    headers: response.headers
  })
}
