/**
 * @module @waybill/metrics-prometheus
 *
 * Waybill's metrics as Prometheus text, through prom-client. Waybill counts with Effect
 * `Metric`s (core and `@waybill/http` update them in memory, with no metrics library); this
 * adapter reads Effect's metric registry when scraped and hands each metric to a prom-client
 * `Registry` as a collector, so prom-client does all the formatting. Values the process does not
 * count itself (webhook queue depth, database pool use) are prom-client gauges read at scrape
 * time through the host's callbacks.
 *
 * ```ts
 * const prometheus = PrometheusMetrics.make({ gauges: [...] })
 * createHandler(layer, { operatorToken, metrics: prometheus.page })
 * ```
 */
import * as Metric from "effect/Metric"
import type * as MetricKey from "effect/MetricKey"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import { Gauge, Registry } from "prom-client"

/** A labelled value of a gauge read at scrape time. */
export interface GaugeValue {
  readonly labels?: Readonly<Record<string, string>>
  readonly value: number
}

/** A gauge whose value the host reads when scraped (queue depth, pool use). */
export interface ScrapeGauge {
  /** Prometheus name, e.g. `waybill_webhook_queue_depth`. */
  readonly name: string
  readonly help: string
  readonly labelNames?: ReadonlyArray<string>
  /** Reads the current values; a rejection leaves the gauge out of that scrape. */
  readonly read: () => Promise<ReadonlyArray<GaugeValue>> | ReadonlyArray<GaugeValue>
}

export interface PrometheusOptions {
  /** A registry to add to (e.g. one with prom-client's default process metrics); a new one by default. */
  readonly registry?: Registry
  /** Gauges read at scrape time. */
  readonly gauges?: ReadonlyArray<ScrapeGauge>
  /** Which Effect metrics to expose, by name; default: every metric whose name starts with `waybill_`. */
  readonly include?: (name: string) => boolean
}

/** What `createHandler`'s `metrics` option takes: a content type and the text. */
export interface MetricsPage {
  readonly contentType: string
  readonly body: string
}

export interface PrometheusMetrics {
  readonly registry: Registry
  /** Renders every metric: Effect's (read now) and the gauges (read now). */
  readonly page: () => Promise<MetricsPage>
}

/** What a connection pool tells about its use (a `pg` `Pool` has these three counts). */
export interface PoolStats {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

/**
 * The database pool's use as a gauge read at scrape time: connections open (`total`), idle, and
 * callers waiting for one (`waiting`, which should stay at 0).
 */
export const poolGauge = (pool: PoolStats, name = "waybill_db_pool_connections"): ScrapeGauge => ({
  name,
  help: "Database pool connections by state (total, idle, waiting), read at scrape time.",
  labelNames: ["state"],
  read: () => [
    { labels: { state: "total" }, value: pool.totalCount },
    { labels: { state: "idle" }, value: pool.idleCount },
    { labels: { state: "waiting" }, value: pool.waitingCount }
  ]
})

type Sample = { value: number; labels: Record<string, string | number>; metricName?: string }

/** The labels of an Effect metric key. */
const labelsOf = (key: MetricKey.MetricKey.Untyped): Record<string, string> => {
  const labels: Record<string, string> = {}
  for (const tag of key.tags) labels[tag.key] = tag.value
  return labels
}

/** The Prometheus samples of one Effect metric's state (counters, gauges, histograms, frequencies). */
const samplesOf = (name: string, key: MetricKey.MetricKey.Untyped, state: unknown): ReadonlyArray<Sample> => {
  const labels = labelsOf(key)
  if (MetricState.isCounterState(state)) return [{ value: Number(state.count), labels }]
  if (MetricState.isGaugeState(state)) return [{ value: Number(state.value), labels }]
  if (MetricState.isHistogramState(state)) {
    // Effect's buckets are cumulative and end with +Infinity, as Prometheus wants them.
    const out: Array<Sample> = []
    for (const [le, count] of state.buckets) {
      out.push({ metricName: `${name}_bucket`, value: count, labels: { ...labels, le: le === Infinity ? "+Inf" : le } })
    }
    out.push({ metricName: `${name}_sum`, value: state.sum, labels })
    out.push({ metricName: `${name}_count`, value: state.count, labels })
    return out
  }
  if (MetricState.isFrequencyState(state)) {
    const out: Array<Sample> = []
    for (const [word, count] of state.occurrences) out.push({ value: count, labels: { ...labels, key: word } })
    return out
  }
  return []
}

const typeOf = (state: unknown): "counter" | "gauge" | "histogram" | undefined => {
  if (MetricState.isCounterState(state) || MetricState.isFrequencyState(state)) return "counter"
  if (MetricState.isGaugeState(state)) return "gauge"
  if (MetricState.isHistogramState(state)) return "histogram"
  return undefined
}

/**
 * The Prometheus view of Effect's metrics. Each metric name becomes one prom-client collector the
 * first time a scrape sees it (Effect registers a metric on its first update); every scrape reads
 * Effect's registry once and each collector answers its share.
 */
export const make = (options: PrometheusOptions = {}): PrometheusMetrics => {
  const registry = options.registry ?? new Registry()
  const include = options.include ?? ((name: string) => name.startsWith("waybill_"))
  let families = new Map<string, Array<Sample>>()
  const known = new Set<string>()

  for (const g of options.gauges ?? []) {
    new Gauge({
      name: g.name,
      help: g.help,
      labelNames: [...(g.labelNames ?? [])],
      registers: [registry],
      async collect() {
        this.reset()
        for (const v of await g.read()) {
          if (v.labels === undefined) this.set(v.value)
          else this.set({ ...v.labels }, v.value)
        }
      }
    })
  }

  const refresh = () => {
    const next = new Map<string, Array<Sample>>()
    for (const pair of Metric.unsafeSnapshot()) {
      const name = pair.metricKey.name
      if (!include(name)) continue
      const type = typeOf(pair.metricState)
      if (type === undefined) continue
      let samples = next.get(name)
      if (samples === undefined) next.set(name, (samples = []))
      samples.push(...samplesOf(name, pair.metricKey, pair.metricState))
      if (!known.has(name)) {
        known.add(name)
        const help = Option.getOrElse(pair.metricKey.description, () => name)
        // A prom-client collector: the registry asks it for its samples and formats them.
        const family = { name, help, type, aggregator: "sum" as const }
        registry.registerMetric({
          ...family,
          get: () => Promise.resolve({ ...family, values: families.get(name) ?? [] })
        } as unknown as Parameters<Registry["registerMetric"]>[0])
      }
    }
    families = next
  }

  return {
    registry,
    page: async () => {
      refresh()
      return { contentType: registry.contentType, body: await registry.metrics() }
    }
  }
}
