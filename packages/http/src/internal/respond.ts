/** Reply builders for the interface's JSON envelope (section 2.1). */
import type { Reply } from "../Raw.js"

const encoder = new TextEncoder()

/**
 * A JSON reply; `headers` add to (and may override) the defaults. The body is encoded up front
 * so the length is known: servers can then send headers and body in one write instead of a
 * chunked stream.
 */
export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply => {
  const bytes = encoder.encode(JSON.stringify(body))
  // A literal (not a spread of shared defaults), extended only when extra fields are given.
  const fields: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "x-content-type-options": "nosniff",
    "content-length": String(bytes.byteLength)
  }
  return { status, headers: headers === undefined ? fields : Object.assign(fields, headers), body: bytes }
}

/** `{"data": <data>, "error": null}` */
export const success = (data: unknown, status = 200, headers?: Record<string, string>): Reply =>
  json(status, { data, error: null }, headers)

/** `{"data": null, "error": {"message": <message>, "exception": null}}` */
export const failure = (status: number, message: string, headers?: Record<string, string>): Reply =>
  json(status, { data: null, error: { message, exception: null } }, headers)
