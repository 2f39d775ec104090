/**
 * @module Metrics
 *
 * Waybill's operational counters as Effect `Metric`s. Core only counts; it never formats or
 * serves them. Effect keeps every metric in one registry per process, which a host reads at
 * scrape time (`@waybill/metrics-prometheus` turns it into Prometheus text through prom-client),
 * so core stays free of any metrics library and costs one in-memory add per event.
 *
 * Names follow Prometheus conventions (`waybill_` prefix, `_total` for counters, base units).
 * Every tagged variant is made once, here, so the hot paths never build metric keys.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"

/** A counter metric (what `Metric.increment` takes). */
export type Counter = Metric.Metric.Counter<number>

/**
 * A metric whose tags are part of its key. `Metric.tagged` would merge its tags on every update
 * and look the key up in the registry each time; a metric made from its full key caches its
 * registry entry after the first update.
 */
const keyed = <T extends MetricKeyType.MetricKeyType<number, unknown>>(
  key: MetricKey.MetricKey<T>,
  tags: Readonly<Record<string, string>>
) =>
  Metric.fromMetricKey(
    MetricKey.taggedWithLabels(
      key,
      Object.entries(tags).map(([k, v]) => MetricLabel.make(k, v))
    )
  )

const counterKey = (name: string, description: string) => MetricKey.counter(name, { description, incremental: true })

const bookings = counterKey("waybill_bookings_total", "Shipments booked, by key mode (live or test).")

/** Shipments booked (one per shipment, not per request), by the key's mode. */
export const bookingsBy: Readonly<Record<"live" | "test", Counter>> = {
  live: keyed(bookings, { mode: "live" }),
  test: keyed(bookings, { mode: "test" })
}

/** Why the admission door refused a request. */
export type Refusal = "rate_limited" | "ip_blocked"

const refusals = counterKey(
  "waybill_admission_refusals_total",
  "Requests refused at the admission door, by reason (rate_limited, ip_blocked)."
)

/** Refusals by reason: a limit reached, or a blocked client address. */
export const refusalsBy: Readonly<Record<Refusal, Counter>> = {
  rate_limited: keyed(refusals, { reason: "rate_limited" }),
  ip_blocked: keyed(refusals, { reason: "ip_blocked" })
}

/** Addresses blocked automatically (abuse detection); operators' manual blocks are not counted. */
export const addressesBlocked: Counter = Metric.fromMetricKey(
  counterKey("waybill_addresses_blocked_total", "Client addresses blocked automatically by abuse detection.")
)

/** What became of one webhook delivery attempt. */
export type DeliveryOutcome = "delivered" | "retry" | "exhausted"

const deliveries = counterKey(
  "waybill_webhook_attempts_total",
  "Webhook delivery attempts, by outcome (delivered, retry, exhausted)."
)

/** Webhook attempts by outcome. */
export const deliveriesBy: Readonly<Record<DeliveryOutcome, Counter>> = {
  delivered: keyed(deliveries, { outcome: "delivered" }),
  retry: keyed(deliveries, { outcome: "retry" }),
  exhausted: keyed(deliveries, { outcome: "exhausted" })
}

/**
 * Latency buckets of HTTP requests, in seconds: from 1 ms (a refusal) to 10 s (a large document
 * upload).
 */
export const requestSecondsBoundaries = MetricBoundaries.fromIterable([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
])

const requests = counterKey("waybill_http_requests_total", "HTTP requests answered, by route pattern and status.")
const requestSeconds = MetricKey.histogram(
  "waybill_http_request_duration_seconds",
  requestSecondsBoundaries,
  "HTTP request latency in seconds, by route pattern and status."
)

/** The two metrics of one (route, status) pair. */
export interface RequestMetrics {
  readonly count: Counter
  readonly seconds: Metric.Metric.Histogram<number>
}

const requestCache = new Map<string, RequestMetrics>()

/**
 * The request counter and latency histogram of a route pattern and status. Made once per pair
 * (a fixed route table times the statuses it answers), so a request costs two in-memory updates.
 */
export const requestMetrics = (route: string, status: number): RequestMetrics => {
  const cacheKey = `${status} ${route}`
  let found = requestCache.get(cacheKey)
  if (found === undefined) {
    const tags = { route, status: String(status) }
    found = { count: keyed(requests, tags), seconds: keyed(requestSeconds, tags) }
    requestCache.set(cacheKey, found)
  }
  return found
}

/** Why recorded API calls (the account activity log) were lost before reaching storage. */
export type ActivityLoss = "buffer_full" | "write_failed"

const activityDropped = counterKey(
  "waybill_activity_dropped_total",
  "API calls not written to the account activity log, by reason (buffer_full, write_failed)."
)

/** Activity entries lost: the recorder's buffer was full, or a batch could not be written. */
export const activityDroppedBy: Readonly<Record<ActivityLoss, Counter>> = {
  buffer_full: keyed(activityDropped, { reason: "buffer_full" }),
  write_failed: keyed(activityDropped, { reason: "write_failed" })
}

/** Activity entries written to storage (in batches). */
export const activityWritten: Counter = Metric.fromMetricKey(
  counterKey("waybill_activity_written_total", "API calls written to the account activity log.")
)
