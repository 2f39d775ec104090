/**
 * `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of `/api/v1` (`openapi/document.ts`).
 * Public and the same for everyone, so no key, cacheable, and readable from other origins
 * (a reference page or a client generator hosted elsewhere).
 */
import * as Effect from "effect/Effect"
import { openApiDocument } from "../openapi/document.js"
import type { Reply } from "../Raw.js"
import type { Route } from "./Route.js"

let cached: Reply | undefined

/** Built on first use: the document is pure data and never changes while the process runs. */
const reply = (): Reply => {
  if (cached === undefined) {
    const text = JSON.stringify(openApiDocument())
    cached = {
      status: 200,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "content-length": String(new TextEncoder().encode(text).byteLength),
        "x-content-type-options": "nosniff",
        "cache-control": "public, max-age=300",
        "access-control-allow-origin": "*"
      },
      body: text
    }
  }
  return cached
}

export const openApiRoute: Route = {
  methods: ["GET"],
  run: () => Effect.sync(reply)
}
