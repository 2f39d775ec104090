/**
 * Every `/ops/v1` route is behind the one operator door: without the token (or with a wrong
 * one) the handler answers before the route runs. The layer provides no service at all, so a
 * route that ran would die on its first port (a 500), and a route missing its `operator` mark
 * would show here as something other than 401.
 */
import { describe, expect, it } from "vitest"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createHandler, type HandlerRequirements } from "../src/index.js"

const nothing = Layer.succeedContext(Context.empty()) as unknown as Layer.Layer<HandlerRequirements>

const routes: ReadonlyArray<readonly [string, string]> = [
  ["GET", "/ops/v1/shipments/12345678/"],
  ["POST", "/ops/v1/shipments/12345678/assign/"],
  ["GET", "/ops/v1/orders/12345678/documents/"],
  ["POST", "/ops/v1/documents/doc_1/hide/"],
  ["GET", "/ops/v1/webhooks/"],
  ["POST", "/ops/v1/webhooks/whe_1/disable/"],
  ["POST", "/ops/v1/events/evt_1/resend/"],
  ["GET", "/ops/v1/accounts/1234567/payment/"],
  ["POST", "/ops/v1/accounts/1234567/keys/live/rotate/"],
  ["POST", "/ops/v1/accounts/1234567/keys/test/disable/"],
  ["POST", "/ops/v1/accounts/1234567/keys/live/enable/"],
  ["GET", "/ops/v1/webhooks/we_1/"],
  ["PATCH", "/ops/v1/webhooks/we_1/"],
  ["DELETE", "/ops/v1/webhooks/we_1/"]
]

describe("the operator door", () => {
  const waybill = createHandler(nothing, { operatorToken: Redacted.make("op_the_right_token") })

  it("answers 401 on every /ops/v1 route without the token or with a wrong one, before the route runs", async () => {
    for (const [method, path] of routes) {
      for (const authorization of [undefined, "Bearer op_a_wrong_token", "Basic b3A6"]) {
        const response = await waybill.handler(
          new Request(`http://127.0.0.1${path}`, {
            method,
            headers: authorization === undefined ? {} : { authorization }
          })
        )
        expect(response.status, `${method} ${path} ${authorization ?? "(none)"}`).toBe(401)
      }
    }
  })

  it("hides the operator API (404) when the host configured no operator token", async () => {
    const closed = createHandler(nothing, {})
    for (const [method, path] of routes) {
      const response = await closed.handler(
        new Request(`http://127.0.0.1${path}`, { method, headers: { authorization: "Bearer op_the_right_token" } })
      )
      expect(response.status, `${method} ${path}`).toBe(404)
    }
  })
})
