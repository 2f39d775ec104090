import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import parse from "parse-prometheus-text-format"
import { Registry } from "prom-client"
import * as PrometheusMetrics from "../src/index.js"

const things = Metric.counter("waybill_adapter_test_things_total", { description: "Things.", incremental: true })
const seconds = Metric.histogram(
  "waybill_adapter_test_seconds",
  MetricBoundaries.fromIterable([0.1, 1]),
  "Latency of things."
)
const level = Metric.gauge("waybill_adapter_test_level")
const foreign = Metric.counter("other_adapter_test_total")

const scrape = async (metrics: PrometheusMetrics.PrometheusMetrics) => {
  const page = await metrics.page()
  expect(page.contentType).toBe(Registry.PROMETHEUS_CONTENT_TYPE)
  return parse(page.body)
}

describe("PrometheusMetrics", () => {
  it("renders Effect counters, gauges and histograms and the host's gauges, read at each scrape", async () => {
    let depth = 3
    const metrics = PrometheusMetrics.make({
      gauges: [
        {
          name: "waybill_adapter_test_queue_depth",
          help: "Queued things.",
          labelNames: ["queue"],
          read: () => [{ labels: { queue: "main" }, value: depth }]
        }
      ]
    })
    Effect.runSync(
      Effect.all([
        Metric.increment(Metric.tagged(things, "kind", "a")),
        Metric.increment(Metric.tagged(things, "kind", "a")),
        Metric.increment(Metric.tagged(things, "kind", "b")),
        Metric.update(seconds, 0.05),
        Metric.update(seconds, 0.5),
        Metric.update(seconds, 5),
        Metric.set(level, 7),
        Metric.increment(foreign)
      ])
    )
    const first = await scrape(metrics)
    const family = (name: string) => first.find((f) => f.name === name)
    const counter = family("waybill_adapter_test_things_total")
    expect(counter?.type).toBe("COUNTER")
    expect(counter?.help).toBe("Things.")
    expect(counter?.metrics.map((m) => [m.labels?.["kind"], m.value]).sort()).toEqual([
      ["a", "2"],
      ["b", "1"]
    ])
    const histogram = family("waybill_adapter_test_seconds")
    expect(histogram?.type).toBe("HISTOGRAM")
    expect(histogram?.metrics[0]?.buckets).toEqual({ "0.1": "1", "1": "2", "+Inf": "3" })
    expect(histogram?.metrics[0]?.count).toBe("3")
    expect(Number(histogram?.metrics[0]?.sum)).toBeCloseTo(5.55)
    expect(family("waybill_adapter_test_level")?.metrics[0]?.value).toBe("7")
    expect(family("waybill_adapter_test_queue_depth")?.metrics[0]).toEqual({ labels: { queue: "main" }, value: "3" })
    // Only Waybill's metrics by default.
    expect(family("other_adapter_test_total")).toBeUndefined()

    depth = 0
    Effect.runSync(Metric.increment(Metric.tagged(things, "kind", "b")))
    const second = await scrape(metrics)
    const again = second.find((f) => f.name === "waybill_adapter_test_things_total")
    expect(again?.metrics.find((m) => m.labels?.["kind"] === "b")?.value).toBe("2")
    expect(second.find((f) => f.name === "waybill_adapter_test_queue_depth")?.metrics[0]?.value).toBe("0")
  })

  it("reads a pool's use at each scrape", async () => {
    const pool = { totalCount: 4, idleCount: 3, waitingCount: 0 }
    const metrics = PrometheusMetrics.make({ gauges: [PrometheusMetrics.poolGauge(pool)], include: () => false })
    const states = async () =>
      Object.fromEntries(
        (await scrape(metrics))
          .find((f) => f.name === "waybill_db_pool_connections")!
          .metrics.map((m) => [m.labels?.["state"], m.value])
      )
    expect(await states()).toEqual({ total: "4", idle: "3", waiting: "0" })
    pool.idleCount = 0
    pool.waitingCount = 2
    expect(await states()).toEqual({ total: "4", idle: "0", waiting: "2" })
  })

  it("adds to a registry the host already has, next to its own metrics", async () => {
    const registry = new Registry()
    registry.setDefaultLabels({ instance: "host-1" })
    const metrics = PrometheusMetrics.make({ registry, include: (name) => name === "waybill_adapter_test_level" })
    Effect.runSync(Metric.set(level, 2))
    const page = await scrape(metrics)
    expect(page.map((f) => f.name)).toEqual(["waybill_adapter_test_level"])
    expect(page[0]?.metrics[0]).toEqual({ labels: { instance: "host-1" }, value: "2" })
  })
})
