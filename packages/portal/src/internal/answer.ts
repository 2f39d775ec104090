/**
 * @module answer
 *
 * What a route answers: a status, a body, fields and `Set-Cookie` lines, turned into a Fetch
 * `Response` at the very end with the security fields of every answer.
 */
import type { VNode } from "preact"
import { renderDocument } from "../views/Layout.js"
import type { FlashKey } from "../views/flash.js"
import { ASSET_CACHE_CONTROL, PAGE_CACHE_CONTROL, SECURITY_HEADERS } from "./headers.js"

export interface Answer {
  readonly status: number
  /** Lowercase field names. */
  readonly headers: Readonly<Record<string, string>>
  /** `Set-Cookie` lines, one per cookie. */
  readonly cookies: ReadonlyArray<string>
  readonly body: string | Uint8Array | null
  /** A redirect may carry a message to the next page (the pipeline sets its cookie). */
  readonly flash?: FlashKey
}

/** An HTML page (rendered {@link VNode} of a full document). Never cached. */
export const page = (status: number, document: VNode, cookies: ReadonlyArray<string> = []): Answer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8", "cache-control": PAGE_CACHE_CONTROL },
  cookies,
  body: renderDocument(document)
})

/** A 303 See Other to a path of the portal (after a POST, or to the sign-in page). */
export const redirect = (
  location: string,
  options: { readonly cookies?: ReadonlyArray<string>; readonly flash?: FlashKey; readonly status?: 303 | 308 } = {}
): Answer => ({
  status: options.status ?? 303,
  headers: { location, "cache-control": PAGE_CACHE_CONTROL },
  cookies: options.cookies ?? [],
  body: null,
  ...(options.flash === undefined ? {} : { flash: options.flash })
})

/** A static asset named by its content's hash. */
export const asset = (type: string, body: Uint8Array): Answer => ({
  status: 200,
  headers: { "content-type": type, "cache-control": ASSET_CACHE_CONTROL },
  cookies: [],
  body
})

/** Adds `Set-Cookie` lines to an answer. */
export const withCookies = (answer: Answer, cookies: ReadonlyArray<string>): Answer =>
  cookies.length === 0 ? answer : { ...answer, cookies: [...answer.cookies, ...cookies] }

/** The Fetch `Response` of an answer, with the security fields; HEAD gets no body. */
export const toResponse = (answer: Answer, method: string): Response => {
  const headers = new Headers(SECURITY_HEADERS)
  for (const [name, value] of Object.entries(answer.headers)) headers.set(name, value)
  for (const cookie of answer.cookies) headers.append("set-cookie", cookie)
  const body = method === "HEAD" || answer.body === null ? null : answer.body
  return new Response(body as BodyInit | null, { status: answer.status, headers })
}
