/** Response builders for the interface's JSON envelope (section 2.1) and plain-text answers. */

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "x-content-type-options": "nosniff"
} as const

/** A JSON response; `headers` add to (and may override) the defaults. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } })

/** `{"data": <data>, "error": null}` */
export const success = (data: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  json(status, { data, error: null }, headers)

/** `{"data": null, "error": {"message": <message>, "exception": null}}` */
export const failure = (status: number, message: string, headers: Record<string, string> = {}): Response =>
  json(status, { data: null, error: { message, exception: null } }, headers)
