/**
 * Request spans through `@effect/opentelemetry` with an in-memory exporter: an incoming
 * `traceparent` is the server span's parent, a malformed one starts a new trace, and with
 * `tracing` off no span is made even though the layer has a tracer.
 */
import { describe, expect, it } from "@effect/vitest"
import { NodeSdk } from "@effect/opentelemetry"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Config, Geo, RateLimits, WaybillConfig } from "@waybill/core"
import { createHandler, type HandlerRequirements, parseTraceparent } from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const PARENT_ID = "00f067aa0ba902b7"

const ports = Layer.mergeAll(
  WaybillConfig.layer(Config.defaults),
  noBlocks,
  Layer.succeed(Geo, { lookup: () => Effect.succeed(Option.none()) }),
  RateLimits.memory
) as unknown as Layer.Layer<HandlerRequirements, never>

const traced = (exporter: InMemorySpanExporter) =>
  Layer.merge(
    ports,
    NodeSdk.layer(() => ({
      resource: { serviceName: "waybill-test" },
      spanProcessor: new SimpleSpanProcessor(exporter)
    }))
  )

describe("tracing", () => {
  it("makes a server span per request whose parent is the incoming traceparent", async () => {
    const exporter = new InMemorySpanExporter()
    const waybill = createHandler(traced(exporter), { tracing: true })
    // Read before dispose: shutting the provider down empties the in-memory exporter.
    let spans: ReturnType<InMemorySpanExporter["getFinishedSpans"]> = []
    try {
      const answer = await waybill.handler(
        new Request("http://127.0.0.1/api/v1/utilities/quote/?origin=x", {
          headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }
        }),
        { remoteAddress: "192.0.2.7" }
      )
      expect(answer.status).toBe(400)
      await waybill.handler(new Request("http://127.0.0.1/healthz", { headers: { traceparent: "00-zz-nope-01" } }))
      spans = exporter.getFinishedSpans()
    } finally {
      await waybill.dispose()
    }
    const quote = spans.find((s) => s.name === "GET /api/v1/utilities/quote/")
    expect(quote?.spanContext().traceId).toBe(TRACE_ID)
    expect(quote?.parentSpanContext?.spanId).toBe(PARENT_ID)
    expect(quote?.attributes["http.route"]).toBe("/api/v1/utilities/quote/")
    expect(quote?.attributes["http.response.status_code"]).toBe(400)
    // The use case's own span (Effect.fn) is a child of the request span.
    const useCase = spans.find((s) => s.name === "Quote.quote")
    expect(useCase?.spanContext().traceId).toBe(TRACE_ID)
    expect(useCase?.parentSpanContext?.spanId).toBe(quote?.spanContext().spanId)
    const health = spans.find((s) => s.name === "GET /healthz/")
    expect(health).toBeDefined()
    expect(health?.spanContext().traceId).not.toBe(TRACE_ID)
    expect(health?.parentSpanContext).toBeUndefined()
  })

  it("makes no span at all when tracing is off", async () => {
    const exporter = new InMemorySpanExporter()
    const waybill = createHandler(traced(exporter))
    try {
      const answer = await waybill.handler(
        new Request("http://127.0.0.1/api/v1/utilities/quote/?origin=x", {
          headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }
        }),
        { remoteAddress: "192.0.2.7" }
      )
      expect(answer.status).toBe(400)
      expect(exporter.getFinishedSpans()).toEqual([])
    } finally {
      await waybill.dispose()
    }
  })

  it("reads W3C traceparent fields and refuses malformed ones", () => {
    const parsed = parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-01`)
    expect(parsed).toMatchObject({ _tag: "ExternalSpan", traceId: TRACE_ID, spanId: PARENT_ID, sampled: true })
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.sampled).toBe(false)
    for (const bad of [
      null,
      "",
      `ff-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${"0".repeat(32)}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${"0".repeat(16)}-01`,
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID}`
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined()
    }
  })
})
