/**
 * The OpenAPI document: valid OpenAPI 3.1 for a maintained validator (`@readme/openapi-parser`,
 * which checks against the official 3.1 schema and resolves every `$ref`), the committed copy in
 * docs/api/openapi.json is what the generator makes now, the parameters it lists are the ones
 * the routes and core read, and the handler serves it without a key. Every answer the e2e tests
 * receive is checked against it in `examples/http-host/test/apiSchema.ts`.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Layer from "effect/Layer"
import { validate, compileErrors } from "@readme/openapi-parser"
import { Config, Credentials, Quote } from "@waybill/core"
import { createHandler, type HandlerRequirements, openApiDocument, Wire } from "../src/index.js"
import { openApiDocumentText } from "../src/openapi/text.js"

const committed = new URL("../../../docs/api/openapi.json", import.meta.url)

type Operation = {
  operationId: string
  parameters?: Array<{ name: string; in: string }>
  responses: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }>
}
const operations = (): Array<[string, string, Operation]> =>
  Object.entries(openApiDocument().paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, op]): [string, string, Operation] => [
      path,
      method,
      op
    ])
  )

/** The names a reader asks for. */
const recorder = () => {
  const names = new Set<string>()
  return { names, query: (name: string): ReadonlyArray<string> => (names.add(name), []) }
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1, without warnings", async () => {
    const result = await validate(structuredClone(openApiDocument()) as never)
    if (!result.valid) expect.fail(compileErrors(result))
    expect(result.specification).toBe("OpenAPI")
    expect(result.warnings).toEqual([])
    expect(openApiDocument().openapi).toBe("3.1.0")
  })

  it("is refused by the validator when broken (the check can fail)", async () => {
    const broken = structuredClone(openApiDocument()) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }
    broken.paths["/api/v1/order/json/"]!["post"]!.responses["200"] = {
      content: { "application/json": { schema: { $ref: "#/components/schemas/Nowhere" } } }
    }
    expect((await validate(broken as never)).valid).toBe(false)
  })

  it("is committed as docs/api/openapi.json exactly as generated (pnpm --filter @waybill/http openapi)", () => {
    expect(readFileSync(committed, "utf8")).toBe(openApiDocumentText())
  })

  it("gives every operation a unique operationId and every error answer its messages", () => {
    const ids = operations().map(([, , op]) => op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    for (const [path, method, op] of operations()) {
      for (const [status, answer] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue
        for (const [type, media] of Object.entries(answer.content ?? {})) {
          if (type === "text/html") continue
          expect(Object.keys(media.examples ?? {}).length, `${method} ${path} ${status}`).toBeGreaterThan(0)
        }
      }
    }
  })

  it("names components after the wire schemas, with a typed error envelope", () => {
    const schemas = openApiDocument().components["schemas"] as Record<string, unknown>
    for (const name of ["ErrorEnvelope", "Error", "CreateShipmentsRequest", "ShipmentInput", "QuoteData", "TrackData"])
      expect(schemas, name).toHaveProperty(name)
    expect(schemas["ErrorEnvelope"]).toMatchObject({
      type: "object",
      required: ["data", "error"],
      properties: { data: { type: "null" }, error: { $ref: "#/components/schemas/Error" } }
    })
  })

  it("names the Idempotency-Key header on booking and cancel only", () => {
    const withHeader = operations()
      .filter(([, , op]) => (op.parameters ?? []).some((p) => p.in === "header" && p.name === "Idempotency-Key"))
      .map(([path, method]) => `${method} ${path}`)
    expect(withHeader.sort()).toEqual(["get /api/v1/order/cancel/json/", "post /api/v1/order/json/"])
  })

  it("lists exactly the query parameters core and the routes read", () => {
    const params = (path: string, method = "get") =>
      new Set(
        operations()
          .find(([p, m]) => p === path && m === method)![2]
          .parameters!.filter((p) => p.in === "query")
          .map((p) => p.name)
      )
    const quote = recorder()
    Quote.parseQuery(quote.query, Config.defaults)
    Credentials.queryKeyPlaces(quote.query)
    expect(params("/api/v1/utilities/quote/")).toEqual(quote.names)
    expect(new Set(Object.keys(Wire.QuoteParams.fields))).toEqual(quote.names)

    // track reads idx, cancel reads id; both take the key from queryKeyPlaces.
    const keyed = recorder()
    Credentials.queryKeyPlaces(keyed.query)
    expect(params("/api/v1/utilities/track/")).toEqual(new Set(["idx", ...keyed.names]))
    expect(params("/api/v1/order/cancel/json/")).toEqual(new Set(["id", ...keyed.names]))

    const form = recorder()
    const query = recorder()
    Credentials.documentsPlaces(form.query, query.query)
    const lookup = ["control_no", "search_field", "search_value", "id"] // Documents.LookupParams (pinned in wire.ts)
    expect(params("/api/v1/order/docs/")).toEqual(new Set([...lookup, ...query.names]))
    expect(params("/api/v1/order/docs/", "post")).toEqual(new Set([...lookup, ...query.names]))
    expect(form.names).toEqual(new Set(["key"]))
  })

  it("is served by the handler at GET /api/v1/openapi.json without a key, cacheable", async () => {
    const waybill = createHandler(Layer.empty as unknown as Layer.Layer<HandlerRequirements>)
    try {
      const response = await waybill.handler(new Request("http://localhost/api/v1/openapi.json"))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expect(response.headers.get("cache-control")).toBe("public, max-age=300")
      const text = await response.text()
      expect(response.headers.get("content-length")).toBe(String(new TextEncoder().encode(text).byteLength))
      expect(JSON.parse(text)).toEqual(openApiDocument())
      const post = await waybill.handler(new Request("http://localhost/api/v1/openapi.json", { method: "POST" }))
      expect(post.status).toBe(405)
    } finally {
      await waybill.dispose()
    }
  })
})
