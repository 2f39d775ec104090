/**
 * @module Raw
 *
 * The request and answer shapes the routes work with, free of Fetch objects. A Fetch `Request`
 * already has the {@link WaybillRequest} shape, so `handler(Request)` passes it through as it is;
 * server bridges that own their request and response objects (`@waybill/http-node`) build a
 * cheaper one and write the {@link Reply} themselves, through `WaybillHandler.handleRaw`. Building
 * and reading back undici `Request` / `Response` objects is a measurable share of a request's CPU
 * time under node:http.
 */

/**
 * What the handler reads from a request: a structural subset of the Fetch `Request`, so any
 * `Request` is one.
 */
export interface WaybillRequest {
  /** Upper-case method, as Fetch normalizes it (`GET`, `POST`, ...). */
  readonly method: string
  /** The absolute URL (`https://api.example.com/api/v1/order/json/?x=1`). */
  readonly url: string
  /**
   * Header lookup with Fetch `Headers.get` semantics: case-insensitive names, `null` when
   * absent, and the values of a repeated field joined with `", "` (so a doubled Authorization
   * reads as `"Bearer a, Bearer b"` and is refused, never silently reduced to the first one).
   */
  readonly headers: { readonly get: (name: string) => string | null }
  /** The body as a stream, or `null` without one (or when {@link bodyBytes} holds it). */
  readonly body: ReadableStream<Uint8Array> | null
  /**
   * The whole body, already read by the server bridge; when present, {@link body} is not read.
   * Size limits and the Content-Length check apply exactly as to a stream. Not named `bytes`:
   * that is a method of newer Fetch `Request`s.
   */
  readonly bodyBytes?: Uint8Array | undefined
}

/**
 * The `headers` of a {@link WaybillRequest} over a Node-style raw list (`[name, value, name,
 * value, ...]`, as `IncomingMessage.rawHeaders` holds them), with the semantics of Fetch
 * `Headers.get`: names are case-insensitive, and a field sent several times reads as its values
 * joined with `", "` (`"; "` for Cookie, as undici does). Node's own `req.headers` keeps only
 * the first Authorization, so a doubled one would pass as the first key; joined, it is refused.
 * Server bridges (`@waybill/http-node`, `@waybill/http-fastify`) share it so every bridge reads
 * headers the same way.
 */
export class RawHeaders {
  readonly #raw: ReadonlyArray<string>
  #joined: Map<string, string> | undefined

  constructor(raw: ReadonlyArray<string>) {
    this.#raw = raw
  }

  /** The field's value (repeats joined), or `null` when absent. */
  get(name: string): string | null {
    let joined = this.#joined
    if (joined === undefined) {
      joined = new Map()
      const raw = this.#raw
      for (let i = 0; i < raw.length; i += 2) {
        const key = raw[i]!.toLowerCase()
        const seen = joined.get(key)
        joined.set(key, seen === undefined ? raw[i + 1]! : `${seen}${key === "cookie" ? "; " : ", "}${raw[i + 1]!}`)
      }
      this.#joined = joined
    }
    return joined.get(name.toLowerCase()) ?? null
  }

  /** The first value of a field (`name` in lowercase), as Node's `req.headers` keeps it for Host. */
  first(name: string): string | undefined {
    const raw = this.#raw
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1]!
    return undefined
  }
}

/** Header fields of a {@link Reply}: lowercase names; an array is a field given several times. */
export type ReplyHeaders = Readonly<Record<string, string | ReadonlyArray<string>>>

/**
 * The handler's answer before it becomes a Fetch `Response` (or is written straight to a server
 * response). Header names are lowercase. An array value is one field line per element for
 * `set-cookie` and one line of the elements joined with `", "` for any other name, as a Fetch
 * `Response` would carry them. A `string` body is UTF-8; without a `content-type` it is sent as
 * `text/plain;charset=UTF-8`, as Fetch does.
 */
export interface Reply {
  readonly status: number
  readonly headers: ReplyHeaders
  readonly body: Uint8Array | string | ReadableStream<Uint8Array> | null
}

/** The reply with `extra` fields added (replacing fields of the same name); never mutates. */
export const withHeaders = (reply: Reply, extra: Readonly<Record<string, string>>): Reply => ({
  status: reply.status,
  headers: Object.assign({}, reply.headers, extra),
  body: reply.body
})

/** The Fetch `Response` of a reply: same status, fields (every `set-cookie` kept) and body. */
export const toResponse = (reply: Reply): Response => {
  const headers = new Headers()
  for (const name in reply.headers) {
    const value = reply.headers[name]!
    if (typeof value === "string") headers.append(name, value)
    else for (const v of value) headers.append(name, v)
  }
  return new Response(reply.body as BodyInit | null, { status: reply.status, headers })
}
