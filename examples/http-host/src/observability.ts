/**
 * @module observability
 *
 * The example host's operations wiring: the logger (`--log-format json|pretty`), the readiness
 * checks behind `GET /readyz`, and the Prometheus page behind `GET /metrics`
 * (`@waybill/metrics-prometheus`, with gauges the host reads from its database at scrape time).
 * A team embedding Waybill writes the same few lines in its own server.
 *
 * The Prometheus adapter (and prom-client with it) loads on the first scrape: Waybill counts
 * with Effect metrics from the start, so a host that is never scraped never loads it.
 */
import { constants } from "node:fs"
import { access, mkdir } from "node:fs/promises"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import type { MetricsPage, ReadinessCheck } from "@waybill/http"
import type * as PrometheusMetrics from "@waybill/metrics-prometheus"
import type { StorageEngine } from "@waybill/storage-kysely"
import { sql } from "kysely"
import { loadOptional, once } from "./optional.js"

/** How log lines look: one JSON object per line (default), or Effect's pretty lines for a terminal. */
export type LogFormat = "json" | "pretty"

/** Parses `--log-format`. */
export const parseLogFormat = (value: string | undefined): LogFormat => {
  if (value === undefined || value === "json") return "json"
  if (value === "pretty") return "pretty"
  throw new Error(`--log-format must be json or pretty, not ${value}`)
}

/** Logging of the host. */
export interface LogOptions {
  /** Default `json`. */
  readonly format?: LogFormat
  /** Lines below this level are dropped; default `Info`. */
  readonly level?: LogLevel.LogLevel
  /** Replaces the format's logger entirely (tests capture lines with it). */
  readonly logger?: Logger.Logger<unknown, void>
}

/** The layer that puts the host's logger in place of Effect's default one. */
export const loggingLayer = (options: LogOptions = {}): Layer.Layer<never> => {
  const logger =
    options.logger ??
    (options.format === "pretty" ? Logger.prettyLoggerDefault : Logger.withConsoleLog(Logger.jsonLogger))
  const replaced = Logger.replace(Logger.defaultLogger, logger)
  return options.level === undefined ? replaced : Layer.merge(replaced, Logger.minimumLogLevel(options.level))
}

/** What the readiness checks look at. */
export interface ReadinessSources {
  readonly engine: StorageEngine
  /** Directory of document files, or `"database"` when they live in the database (blob-pg). */
  readonly blobDir: string | "database"
  /** The mail folder of the file mailer, or `"smtp"` when mail goes out over SMTP. */
  readonly mail: string | "smtp"
  /** True once the host is shutting down: readiness turns false before anything stops. */
  readonly draining: () => boolean
}

/** A directory Waybill writes to: it exists (or can be made) and is writable. */
const writableDir = async (dir: string): Promise<boolean> => {
  try {
    await mkdir(dir, { recursive: true })
    await access(dir, constants.W_OK)
    return true
  } catch {
    return false
  }
}

const check = (name: string, ok: boolean, detail: string): ReadinessCheck => (ok ? { name, ok } : { name, ok, detail })

/**
 * The host's readiness: not draining, the database answers and every migration this build knows
 * is applied (the engine's `health()`), and the blob and mail folders are usable. Details name the
 * failure and never carry an error's text (which may hold a connection string).
 */
export const readiness = (sources: ReadinessSources) => async (): Promise<ReadonlyArray<ReadinessCheck>> => {
  const { reachable, migrated } = await sources.engine.health()
  const [blobs, mail] = await Promise.all([
    sources.blobDir === "database" ? Promise.resolve(reachable) : writableDir(sources.blobDir),
    sources.mail === "smtp" ? Promise.resolve(true) : writableDir(sources.mail)
  ])
  return [
    check("draining", !sources.draining(), "shutting down"),
    check("database", reachable, "the database does not answer"),
    check("migrations", migrated, reachable ? "migrations are not at the latest version" : "not checked"),
    check("blobs", blobs, "the document folder is not writable"),
    check("mail", mail, "the mail folder is not writable")
  ]
}

/** Loads the Prometheus adapter (tests replace it to make it fail). */
export type PrometheusLoader = () => Promise<typeof PrometheusMetrics>

const loadPrometheus: PrometheusLoader = () =>
  loadOptional("GET /metrics", "@waybill/metrics-prometheus", () => import("@waybill/metrics-prometheus"))

/**
 * The Prometheus page of the host: Waybill's Effect metrics plus the webhook queue depth (pending
 * deliveries, counted at scrape time) and, on PostgreSQL, the pool's use. The adapter is loaded
 * by the first scrape. A scrape that cannot load it answers 500; the handler logs only an
 * error's class (a driver's message may hold a password), so the reason goes to standard error
 * here, and the next scrape tries again.
 */
export const prometheusPage = (
  engine: StorageEngine,
  pool?: PrometheusMetrics.PoolStats,
  load: PrometheusLoader = loadPrometheus
): (() => Promise<MetricsPage>) => {
  const prometheus = once(async () => {
    const Prometheus = await load().catch((error: unknown) => {
      process.stderr.write(`waybill: ${error instanceof Error ? error.message : String(error)}\n`)
      throw error
    })
    return Prometheus.make({
      gauges: [
        ...(pool === undefined ? [] : [Prometheus.poolGauge(pool)]),
        {
          name: "waybill_webhook_queue_depth",
          help: "Webhook deliveries waiting to be sent (pending), read at scrape time.",
          read: async () => {
            const row = await engine.kysely
              .selectFrom("waybill_webhook_deliveries")
              // A literal, so the count reads the index of pending rows rather than the table.
              .where("status", "=", sql.lit("pending"))
              .select((eb) => eb.fn.countAll<number | string>().as("n"))
              .executeTakeFirstOrThrow()
            return [{ value: Number(row.n) }]
          }
        }
      ]
    })
  })
  return async () => (await prometheus()).page()
}
