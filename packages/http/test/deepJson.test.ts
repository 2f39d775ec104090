/**
 * Deeply nested JSON at every endpoint that reads a JSON body: always a 400 in the interface's
 * envelope, never `500 Internal error.`, whatever the depth (up to several hundred thousand
 * levels) and wherever the nesting sits. Endpoints that take forms only answer such a body
 * with an error envelope too.
 *
 * No memory check: the guard (`JsonInput.parse`, used by `parseJson` in every route) counts
 * brackets in the text and refuses it before `JSON.parse` runs, so no deep structure is ever
 * built and there is nothing to be released afterwards. The last test shows the guard runs
 * first: the answer comes in a few milliseconds, where parsing and walking would take longer.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Config, Geo, JsonInput, RateLimits, WaybillConfig } from "@waybill/core"
import { createHandler, type HandlerRequirements, type WaybillRequest } from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const BOOKING_LIMIT = 4 * 1024 * 1024
const config = { ...Config.defaults, booking: { ...Config.defaults.booking, maxBodyBytes: BOOKING_LIMIT } }
const layer = Layer.mergeAll(
  WaybillConfig.layer(config),
  noBlocks,
  Layer.succeed(Geo, { lookup: () => Effect.succeed(Option.none()) }),
  RateLimits.memory
) as unknown as Layer.Layer<HandlerRequirements, never>

const OPERATOR = "op_deep_json_token"
const waybill = createHandler(layer, { operatorToken: Redacted.make(OPERATOR), allowInsecureHttp: true })
const encoder = new TextEncoder()
const decoder = new TextDecoder()

const request = (path: string, type: string, body: string, headers: Record<string, string> = {}): WaybillRequest => {
  const all = new Headers({ "content-type": type, ...headers })
  return {
    method: "POST",
    url: `http://127.0.0.1${path}`,
    headers: { get: (name) => all.get(name) },
    body: null,
    bodyBytes: encoder.encode(body)
  }
}

const answer = async (r: WaybillRequest) => {
  const reply = await waybill.handleRaw(r, { remoteAddress: "192.0.2.9" })
  const text = typeof reply.body === "string" ? reply.body : decoder.decode(reply.body as Uint8Array)
  return { status: reply.status, body: JSON.parse(text) as { data: unknown; error: { message: string } | null } }
}

/** `n` levels of arrays and objects (the pattern picks which, level by level) around a string. */
const nest = (n: number, pattern: ReadonlyArray<boolean>): string => {
  const opens = pattern.map((array) => (array ? "[" : '{"a":'))
  const closes = pattern.map((array) => (array ? "]" : "}"))
  const whole = Math.floor(n / pattern.length)
  const rest = n % pattern.length
  const open = opens.join("").repeat(whole) + opens.slice(0, rest).join("")
  const close = closes.slice(0, rest).reverse().join("") + [...closes].reverse().join("").repeat(whole)
  return `${open}"x"${close}`
}

const SHIPMENT = '"Contact":"Ada","Phone":"3125550100","Pieces":1,"Weight":1,"ServiceType":"rush","VehicleType":"car"'

/** Where in a booking the deep value goes. */
const bookingBody = (where: string, deep: string): string =>
  where === "shipments"
    ? `{"data":{"shipments":${deep}}}`
    : where === "token"
      ? `{"data":{"token":${deep},"shipments":[{${SHIPMENT}}]}}`
      : where === "piece_details"
        ? `{"data":{"shipments":[{${SHIPMENT},"piece_details":[${deep}]}]}}`
        : `{"data":{"shipments":[{${SHIPMENT},"${where}":${deep}}]}}`

/** Every endpoint that reads a JSON body, with its size limit and how the deep value is placed. */
const jsonEndpoints: ReadonlyArray<{
  readonly name: string
  readonly limit: number
  readonly build: (deep: string, where: string) => WaybillRequest
  readonly message: string
}> = [
  {
    name: "booking (JSON)",
    limit: BOOKING_LIMIT,
    build: (deep, where) => request("/api/v1/order/json/", "application/json", bookingBody(where, deep)),
    message: JsonInput.tooDeepMessage("The body")
  },
  {
    name: "booking (form field data)",
    limit: BOOKING_LIMIT,
    build: (deep, where) =>
      request(
        "/api/v1/order/json/",
        "application/x-www-form-urlencoded",
        new URLSearchParams({ data: bookingBody(where, deep) }).toString()
      ),
    message: JsonInput.tooDeepMessage("The form field data")
  },
  ...[
    { name: "ops shipment action", path: "/ops/v1/shipments/12345678/assign/", limit: 64 * 1024, field: "driver_id" },
    { name: "ops webhook add", path: "/ops/v1/webhooks/", limit: 16 * 1024, field: "events" },
    { name: "ops webhook recover", path: "/ops/v1/webhooks/whe_1/recover/", limit: 16 * 1024, field: "since" },
    { name: "ops order invoice", path: "/ops/v1/orders/12345678/invoice/", limit: 4096, field: "invoice" }
  ].map((e) => ({
    name: e.name,
    limit: e.limit,
    build: (deep: string) =>
      request(e.path, "application/json", `{"${e.field}":${deep}}`, { authorization: `Bearer ${OPERATOR}` }),
    message: JsonInput.tooDeepMessage("The body")
  }))
]

const WHERE = ["shipments", "multistop_route", "piece_details", "Contact", "token"] as const

describe("deeply nested JSON", () => {
  it("property: every JSON endpoint answers 400 in the envelope at any depth (413 only past its size limit)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...jsonEndpoints),
        fc.oneof(fc.integer({ min: JsonInput.MAX_DEPTH + 1, max: 2_000 }), fc.integer({ min: 100_000, max: 300_000 })),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...WHERE),
        async (endpoint, depth, pattern, where) => {
          const r = endpoint.build(nest(depth, pattern), where)
          const { status, body } = await answer(r)
          expect(body.data).toBeNull()
          if (r.bodyBytes!.byteLength > endpoint.limit) {
            expect(status).toBe(413)
          } else {
            expect(status).toBe(400)
            expect(body.error?.message).toBe(endpoint.message)
          }
        }
      ),
      { numRuns: 60 }
    )
  }, 60_000)

  it("answers 400 to 100,000 levels at every JSON endpoint whose size limit allows them", async () => {
    for (const endpoint of jsonEndpoints.filter((e) => e.limit >= BOOKING_LIMIT)) {
      for (const where of WHERE) {
        for (const pattern of [[true], [false], [true, false]]) {
          const started = performance.now()
          const { status, body } = await answer(endpoint.build(nest(100_000, pattern), where))
          expect([endpoint.name, where, status]).toEqual([endpoint.name, where, 400])
          expect(body.error?.message).toBe(endpoint.message)
          // Refused by one scan of the text: far below what building and walking the value costs.
          expect(performance.now() - started).toBeLessThan(1000)
        }
      }
    }
  }, 60_000)

  it("keeps shallow bodies working: nesting up to the limit reaches the route's own checks", async () => {
    // The generator writes valid JSON of exactly the depth asked for, so the 400s above are the guard's.
    for (const pattern of [[true], [false], [true, false, false], [false, true]])
      for (const n of [1, 2, 3, 7, 40]) {
        let v: unknown = JSON.parse(nest(n, pattern))
        let depth = 0
        while (typeof v === "object" && v !== null) {
          v = Array.isArray(v) ? v[0] : (v as { a: unknown }).a
          depth++
        }
        expect([pattern, n, depth, v]).toEqual([pattern, n, n, "x"])
      }
    // 30 levels inside `invoice` (1 for the body): exactly at the limit, parsed, then refused by the schema.
    const { status, body } = await answer(
      request("/ops/v1/orders/12345678/invoice/", "application/json", `{"invoice":${nest(31, [true])}}`, {
        authorization: `Bearer ${OPERATOR}`
      })
    )
    expect(status).toBe(400)
    expect(body.error?.message).toBe('The body must be {"invoice": string}.')
  })

  it("property: form-only endpoints (documents, account setup) answer deep JSON with an error envelope, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/api/v1/order/docs/", "/api/v1/accountsetup/?action=start", "/api/v1/accountsetup/verify/"),
        fc.integer({ min: JsonInput.MAX_DEPTH + 1, max: 5_000 }),
        fc.constantFrom("application/json", "application/x-www-form-urlencoded"),
        async (path, depth, type) => {
          const deep = nest(depth, [true, false])
          const { status, body } = await answer(
            request(path, type, type === "application/json" ? deep : `data=${encodeURIComponent(deep)}`)
          )
          // Documents answers a missing key with HTTP 200 and an error (interface 7.2).
          expect(status).toBeLessThan(500)
          expect(body.data).toBeNull()
          expect(typeof body.error?.message).toBe("string")
        }
      ),
      { numRuns: 20 }
    )
  })
})
