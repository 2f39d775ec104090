/**
 * @module host
 *
 * Composes Waybill for the example host: SQLite through better-sqlite3 (WAL) with document
 * files in a directory, or PostgreSQL through a `pg` pool with document files in the database
 * (so every host of a fleet serves the same ones); the geo-us dataset, the WebCrypto CSPRNG, and
 * a KeyRing derived from a secret file that the database checks. Everything a team embedding
 * Waybill would write in its own server, in one place.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"
import Database from "better-sqlite3"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Kysely } from "kysely"
import { Admission, type Cancel, WaybillConfig, type WaybillConfigShape } from "@waybill/core"
import { nodeEntropy } from "./entropy.js"
import { DEFAULT_BLOB_CACHE_MIB } from "./config.js"
import { BlobCache } from "@waybill/blob-cache"
import { BlobFs } from "@waybill/blob-fs"
import type { BlobPg } from "@waybill/blob-pg"
import { GeoUs } from "@waybill/geo-us"
import { ImageSharp } from "@waybill/image-sharp"
import { RateLimitBuffered } from "@waybill/rate-limit-buffered"
import { apiDocs } from "@waybill/api-docs"
import { createPortal, type WaybillPortal } from "@waybill/portal"
import type { PoolStats } from "@waybill/metrics-prometheus"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { toNodeListener } from "@waybill/http-node"
import {
  migrate,
  postgresEngine,
  sqliteEngine,
  type StorageEngine,
  StorageKysely,
  type WaybillDatabase
} from "@waybill/storage-kysely"
import { SAFETY_NET_PAGES, startCheckpointer } from "./checkpointer.js"
import { loadOptional } from "./optional.js"
import { type LogOptions, loggingLayer, prometheusPage, readiness } from "./observability.js"
import { type MailHostOptions, provisioningLayer } from "./provisioning.js"
import { checkMasterSecret, keyRingLayer, loadMasterSecret } from "./secrets.js"
import { type RunningDispatcher, startDispatcher, type WebhookHostOptions } from "./webhooks.js"
import { type IdempotencyPurgeOptions, startIdempotencyPurger } from "./idempotency.js"
import { type ActivityHostOptions, startActivityPurger } from "./activity.js"
import { type SessionPurgeOptions, startSessionPurger } from "./sessions.js"
import { type GrantPurgeOptions, startGrantPurger } from "./grants.js"
import { trackRootFibersInAList } from "./fiberRoots.js"
import { disablePretenuring } from "./pretenuring.js"

export interface HostOptions {
  /**
   * SQLite file (created if missing). With {@link databaseUrl} the data lives in PostgreSQL and
   * this path only places local files (the development mail folder `<dbFile>.mail`).
   */
  readonly dbFile: string
  /** PostgreSQL instead of the SQLite file: `postgres://USER[:PASSWORD]@HOST:PORT/DB`. */
  readonly databaseUrl?: Redacted.Redacted<string>
  /** Connections in the PostgreSQL pool (default {@link DEFAULT_POOL_SIZE}). */
  readonly poolSize?: number
  /**
   * Master secret file; defaults to `<dbFile>.secret` on SQLite. Required with
   * {@link databaseUrl}: every host of a fleet must read the same secret, so none is made up.
   */
  readonly secretFile?: string
  /**
   * Directory of document files on SQLite; defaults to `<dbFile>.blobs`. On PostgreSQL the files
   * are kept in the database (`@waybill/blob-pg`) unless this is given.
   */
  readonly blobDir?: string
  /**
   * Memory for document files kept after their first download (`@waybill/blob-cache`), so later
   * downloads of the same file read no file; default {@link DEFAULT_BLOB_CACHE_BYTES}, 0 for none.
   * Files over {@link BlobCache.DEFAULT_MAX_BLOB_BYTES} are always streamed from the store.
   */
  readonly blobCacheBytes?: number
  /** Rules and limits; defaults to `Config.defaults` (tests lower the rate limits). */
  readonly config?: WaybillConfigShape
}

/** Memory for kept document files unless told otherwise (`--blob-cache-mib`). */
export const DEFAULT_BLOB_CACHE_BYTES = DEFAULT_BLOB_CACHE_MIB * 1024 * 1024

/** Connections in a PostgreSQL pool unless told otherwise (`--pool-size`). */
export const DEFAULT_POOL_SIZE = 10

/** Where the data lives: a SQLite file, or a PostgreSQL server and its pool size. */
export type DatabaseLocation =
  | string
  | { readonly url: Redacted.Redacted<string>; readonly poolSize?: number | undefined }

/** The database `options` name: the PostgreSQL URL when given, else the SQLite file. */
export const databaseOf = (options: HostOptions): DatabaseLocation =>
  options.databaseUrl === undefined ? options.dbFile : { url: options.databaseUrl, poolSize: options.poolSize }

/** A PostgreSQL URL with its password masked, for messages and logs. */
export const describeUrl = (url: Redacted.Redacted<string>): string =>
  Redacted.value(url).replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@")

/**
 * The master secret file of `options`. PostgreSQL has no file to put it beside, and a secret
 * made up on one host would lock every other host of the fleet out, so it must be named.
 */
export const secretFileOf = (options: HostOptions): string => {
  if (options.secretFile !== undefined) return options.secretFile
  if (options.databaseUrl === undefined) return `${options.dbFile}.secret`
  throw new Error(
    "with --database-url, name the master secret with --secret-file FILE (or WAYBILL_MASTER_SECRET_FILE): " +
      "every host of the fleet must use the same one (a missing file is created; copy it to the other hosts)"
  )
}

/** An open database with Waybill's tables migrated. */
export interface OpenDatabase {
  /** The storage engine over the file's handle or the pool: what `StorageKysely.layer` takes. */
  readonly engine: StorageEngine
  /** A Kysely over the same engine, for the host's own queries (never inside a Waybill transaction). */
  readonly db: Kysely<WaybillDatabase>
  /** The PostgreSQL pool (its use is a metric); absent on SQLite. */
  readonly pool?: PoolStats
  readonly close: () => Promise<void>
}

/** Options of {@link openDatabase}. */
export interface OpenOptions {
  /**
   * Run WAL checkpoints from a connection of their own, when the event loop has time to spare,
   * instead of inside commits (`checkpointer.ts`); `serve` turns this on, short-lived CLI
   * commands do not need it.
   */
  readonly backgroundCheckpoints?: boolean
}

/**
 * Opens (and migrates) the database: a SQLite file with the settings a server wants (WAL, a busy
 * timeout, foreign keys), or a PostgreSQL pool. Two hosts starting on one fresh PostgreSQL
 * database migrate it once (the migration holds an advisory lock).
 */
export const openDatabase = async (location: DatabaseLocation, options: OpenOptions = {}): Promise<OpenDatabase> =>
  typeof location === "string" ? openSqlite(location, options) : openPostgres(location.url, location.poolSize)

/**
 * Migrates to the latest version, or fails with the reason in the message (a database migrated by
 * a newer build names the migration this build lacks; a server that does not answer says so).
 */
const migrated = (engine: StorageEngine): Promise<void> =>
  Effect.runPromise(
    migrate(engine).pipe(
      Effect.orDieWith((e) => {
        const cause = e.cause instanceof Error ? e.cause.message : String(e.cause)
        return new Error(`the database could not be migrated: ${cause}`)
      })
    )
  )

const openPostgres = async (url: Redacted.Redacted<string>, poolSize = DEFAULT_POOL_SIZE): Promise<OpenDatabase> => {
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new Error(`the pool size must be a positive integer`)
  // The driver loads only here: a host on SQLite never holds it.
  const { default: pg } = await loadOptional("PostgreSQL (--database-url)", "pg", () => import("pg"))
  const pool = new pg.Pool({ connectionString: Redacted.value(url), max: poolSize, connectionTimeoutMillis: 10_000 })
  // A connection that breaks (server restart, network cut) is dropped and the next checkout opens
  // a new one; the message is logged, never the URL (it may hold a password).
  const engine = postgresEngine(pool, {
    onConnectionError: (error) =>
      process.stderr.write(`waybill: a database connection was lost (${error.message}); it will be replaced\n`)
  })
  try {
    await migrated(engine)
  } catch (error) {
    await engine.close()
    throw error
  }
  return { engine, db: engine.kysely, pool, close: () => engine.close() }
}

const openSqlite = async (file: string, options: OpenOptions): Promise<OpenDatabase> => {
  const sqlite = new Database(file)
  sqlite.pragma("journal_mode = WAL")
  sqlite.pragma("synchronous = NORMAL")
  sqlite.pragma("busy_timeout = 5000")
  sqlite.pragma("foreign_keys = ON")
  // Waybill's statements run on the handle synchronously; its transactions are group-committed.
  const engine = sqliteEngine(sqlite)
  const db = engine.kysely
  await migrated(engine)
  if (options.backgroundCheckpoints !== true) return { engine, db, close: () => engine.close() }
  sqlite.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`)
  // Once a checkpoint has emptied it, a WAL that grew under a burst is cut back to 64 MiB.
  sqlite.pragma(`journal_size_limit = ${64 * 1024 * 1024}`)
  const checkpointer = startCheckpointer(file)
  return {
    engine,
    db,
    close: async () => {
      await checkpointer.stop()
      await engine.close()
    }
  }
}

/**
 * The engine as the `pg` pool `@waybill/blob-pg` uses: a checkout is a reserved connection of
 * the engine (its pool underneath), so blobs share the pool, its size and its reconnection.
 */
const enginePool = (engine: StorageEngine): BlobPg.PgPool => ({
  connect: async () => {
    const reserved = await engine.reserve()
    return {
      query: (sql, parameters) => reserved.run(sql, parameters),
      release: (error) => reserved.release(error !== undefined && error !== false)
    }
  },
  query: async (sql, parameters) => {
    const reserved = await engine.reserve()
    try {
      return await reserved.run(sql, parameters)
    } finally {
      reserved.release()
    }
  }
})

/** Where document files go: the database on PostgreSQL (unless a directory is named), else a directory. */
const blobPlace = (engine: StorageEngine, options: HostOptions): string | "database" =>
  engine.dialect === "postgres" && options.blobDir === undefined
    ? "database"
    : (options.blobDir ?? `${options.dbFile}.blobs`)

/** Document files in the database: the adapter loads with the layer, only on PostgreSQL. */
const blobPgLayer = (engine: StorageEngine) =>
  Layer.unwrapEffect(
    Effect.promise(() => import("@waybill/blob-pg")).pipe(Effect.map(({ BlobPg }) => BlobPg.layer(enginePool(engine))))
  )

/** The document files' store, with the small ones kept in memory once downloaded. */
const blobLayer = (engine: StorageEngine, options: HostOptions) => {
  const place = blobPlace(engine, options)
  return Layer.provide(
    BlobCache.layer({ maxBytes: options.blobCacheBytes ?? DEFAULT_BLOB_CACHE_BYTES }),
    place === "database" ? blobPgLayer(engine) : BlobFs.layer(place)
  )
}

/**
 * Opens the database of `options` and checks the master secret against the one the database was
 * set up with (the first host records it): a host with another secret refuses to start.
 */
export const openHostDatabase = async (options: HostOptions, open: OpenOptions = {}): Promise<OpenDatabase> => {
  const master = loadMasterSecret(secretFileOf(options))
  const database = await openDatabase(databaseOf(options), open)
  try {
    await checkMasterSecret(database.db, master)
  } catch (error) {
    await database.close()
    throw error
  }
  return database
}

/** Every port the handler and the CLI need, over one database. */
export const waybillLayer = (engine: StorageEngine, options: HostOptions) =>
  Layer.mergeAll(
    // Request-limit counts in memory, flushed to the shared SQL counters every second
    // (docs/abuse-and-rate-limits.md, "Buffered counts"): no counter write per request. Abuse
    // and provisioning counters stay exact in SQL (an operator's unblock resets them at once).
    Layer.provideMerge(
      RateLimitBuffered.bufferedLayer({ select: Admission.isRequestBucket }),
      StorageKysely.layer(engine)
    ),
    GeoUs.layer,
    nodeEntropy,
    WaybillConfig.layer(options.config),
    keyRingLayer(loadMasterSecret(secretFileOf(options))),
    blobLayer(engine, options),
    ImageSharp.layer
  )

export interface ServeOptions extends HostOptions {
  /** Extra services, e.g. a `Cancel.CancelProvider` for accounts in provider cancel mode. */
  readonly extraLayer?: Layer.Layer<Cancel.CancelProvider>
  readonly port: number
  readonly host: string
  readonly baseUrl?: string
  readonly operatorToken?: Redacted.Redacted<string>
  /** Proxies (addresses or CIDRs) whose X-Forwarded-For is believed. */
  readonly trustedProxies?: ReadonlyArray<string>
  /** Serve HTTPS with this certificate chain and private key (PEM). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer }
  /** Let the documents endpoint answer over plain HTTP (development only). */
  readonly allowInsecureHttp?: boolean
  /** The clock the handler's programs use (tests move time to expire download links). */
  readonly clock?: Clock.Clock
  /** Webhook delivery: the dispatcher runs in this process unless `dispatch: false`. */
  readonly webhooks?: WebhookHostOptions
  /** Account provisioning's e-mail: `.eml` files in `<dbFile>.mail` unless told otherwise. */
  readonly mail?: MailHostOptions
  /** The periodic cleanup of expired `Idempotency-Key` records (hourly by default). */
  readonly idempotency?: IdempotencyPurgeOptions
  /** The account activity log: recording (on by default) and the hourly purge of entries older than 30 days. */
  readonly activity?: ActivityHostOptions
  /** The hourly purge of the portal's expired sessions, one-time links and sign-in locks. */
  readonly sessions?: SessionPurgeOptions
  /** The purge of expired download grants, every minute by default. */
  readonly grants?: GrantPurgeOptions
  /** Log lines: JSON at info level by default (`--log-format`). */
  readonly log?: LogOptions
  /**
   * A tracer for request and use-case spans, e.g. `@effect/opentelemetry`'s `NodeSdk.layer` with
   * an OTLP exporter (docs/observability.md). Without it, tracing is off and costs nothing.
   */
  readonly tracing?: Layer.Layer<never>
}

export interface RunningHost {
  readonly url: string
  readonly server: Server
  readonly handler: WaybillHandler
  /** The account portal mounted under `/portal/`. */
  readonly portal: WaybillPortal
  readonly database: OpenDatabase
  /** Turns `/readyz` to 503 (`draining`) so balancers stop sending work before the host stops. */
  readonly setDraining: () => void
  /** Stops at once: open connections are cut, the dispatcher is interrupted (tests). */
  readonly close: () => Promise<void>
  /**
   * True from the moment {@link RunningHost.shutdown} begins: what a readiness probe answers
   * from (not ready while draining).
   */
  readonly isDraining: () => boolean
  /**
   * Stops gracefully: turns {@link RunningHost.isDraining} true, stops accepting connections,
   * lets requests in flight finish for up to `graceMs` (then cuts what is left), stops the
   * webhook dispatcher (it releases its leases, so another host sends those deliveries at
   * once), and closes the database. Calling it again returns the same promise.
   */
  readonly shutdown: (options: { readonly graceMs: number }) => Promise<void>
}

/** The services {@link waybillLayer} provides: what CLI programs and tests may require. */
export type HostServices = Layer.Layer.Success<ReturnType<typeof waybillLayer>>

/**
 * The API's reference page (`GET /api/v1/docs/`, `@waybill/api-docs`) in front of the handler:
 * requests for the page and its assets go to it, everything else to Waybill.
 */
const withApiDocs = (
  waybill: (req: IncomingMessage, res: ServerResponse) => void
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const docs = apiDocs()
  const page = toNodeListener(docs.fetch)
  return (req, res) => {
    const url = req.url ?? "/"
    if (url.startsWith("/api/v1/docs") && docs.handles(url.split("?", 1)[0]!)) page(req, res)
    else waybill(req, res)
  }
}

/**
 * The account portal (`@waybill/portal`) in front of the handler: `/portal` and every path below
 * it go to the portal, everything else on.
 */
const withPortal = (
  portal: WaybillPortal,
  next: (req: IncomingMessage, res: ServerResponse) => void
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const pages = toNodeListener(portal.handler)
  return (req, res) => {
    const url = req.url ?? "/"
    if (url.startsWith(portal.basePath) && portal.handles(url.split("?", 1)[0]!)) pages(req, res)
    else next(req, res)
  }
}

/**
 * The process-wide settings that keep each request's objects out of V8's old generation:
 * allocation-site pretenuring off (`pretenuring.ts`) and Effect's root fibers in a list rather
 * than a `Set` (`fiberRoots.ts`). `serve` applies both; the in-process benches keep either
 * default when asked, to compare.
 */
export const prepareProcess = (keep: { readonly pretenuring?: boolean; readonly fiberSet?: boolean } = {}): void => {
  if (keep.pretenuring !== true) disablePretenuring()
  if (keep.fiberSet !== true) trackRootFibersInAList()
}

/** Starts the HTTP server; resolves once it listens. It owns the process: {@link prepareProcess}. */
export const serve = async (options: ServeOptions): Promise<RunningHost> => {
  prepareProcess()
  const database = await openHostDatabase(options, { backgroundCheckpoints: true })
  const base =
    options.extraLayer === undefined
      ? waybillLayer(database.engine, options)
      : Layer.merge(waybillLayer(database.engine, options), options.extraLayer)
  const provisioned = Layer.merge(base, provisioningLayer(options.dbFile, options.mail))
  const observed = Layer.mergeAll(
    provisioned,
    loggingLayer(options.log),
    ...(options.tracing === undefined ? [] : [options.tracing])
  )
  const layer = options.clock === undefined ? observed : Layer.merge(observed, Layer.setClock(options.clock))
  // The server listens first so that, without --base-url, links sent by e-mail use the address it
  // really listens on, never a request's Host header.
  const wired: { listener?: (req: IncomingMessage, res: ServerResponse) => void } = {}
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (wired.listener === undefined) {
      res.writeHead(503).end()
      return
    }
    wired.listener(req, res)
  }
  const server: Server =
    options.tls === undefined
      ? createServer({ keepAliveTimeout: 5000 }, forward)
      : createTlsServer({ keepAliveTimeout: 5000, cert: options.tls.cert, key: options.tls.key }, forward)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host, () => resolve())
  })
  let draining = false
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  const url = `${options.tls === undefined ? "http" : "https"}://${host}:${address.port}`
  // One memo map for the API handler and the portal: the layer is built once and its services
  // (the storage engine's stores, the buffered rate limiter, the mailer) are shared by both.
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const handler = createHandler(layer, {
    memoMap,
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    emailLinkBaseUrl: options.baseUrl ?? url,
    ...(options.operatorToken === undefined ? {} : { operatorToken: options.operatorToken }),
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    ...(options.allowInsecureHttp === true ? { allowInsecureHttp: true } : {}),
    ...(options.webhooks?.allowPrivate === undefined ? {} : { webhookAllowPrivate: options.webhooks.allowPrivate }),
    readiness: readiness({
      engine: database.engine,
      blobDir: blobPlace(database.engine, options),
      mail: options.mail?.smtpUrl === undefined ? (options.mail?.dir ?? `${options.dbFile}.mail`) : "smtp",
      draining: () => draining
    }),
    metrics: prometheusPage(database.engine, database.pool),
    ...(options.tracing === undefined ? {} : { tracing: true }),
    ...(options.activity?.record === false ? { activity: false as const } : {})
  })
  const portal = createPortal(layer, {
    memoMap,
    publicOrigin: options.baseUrl ?? url,
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    ...(options.allowInsecureHttp === true ? { allowInsecureHttp: true } : {}),
    ...(options.webhooks?.allowPrivate === undefined ? {} : { webhookAllowPrivate: options.webhooks.allowPrivate })
  })
  wired.listener = withPortal(portal, withApiDocs(toNodeListener(handler)))
  const dispatcher: RunningDispatcher | undefined =
    options.webhooks?.dispatch === false
      ? undefined
      : startDispatcher(database.engine, secretFileOf(options), options.webhooks)
  const purger = startIdempotencyPurger(database.engine, options.idempotency)
  const activityPurger = startActivityPurger(database.engine, options.activity)
  const sessionPurger = startSessionPurger(database.engine, options.sessions, options.clock)
  const grantPurger = startGrantPurger(database.engine, options.grants, options.clock)
  let stopping: Promise<void> | undefined
  const release = async () => {
    await portal.dispose()
    await handler.dispose()
    await database.close()
  }
  return {
    url,
    server,
    handler,
    portal,
    database,
    isDraining: () => draining,
    setDraining: () => {
      draining = true
    },
    close: async () => {
      draining = true
      await purger.stop()
      await activityPurger.stop()
      await sessionPurger.stop()
      await grantPurger.stop()
      await dispatcher?.stop()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await release()
    },
    shutdown: ({ graceMs }) => {
      stopping ??= (async () => {
        draining = true
        await Promise.all([
          drain(server, graceMs),
          dispatcher?.stop(),
          purger.stop(),
          activityPurger.stop(),
          sessionPurger.stop(),
          grantPurger.stop()
        ])
        await release()
      })()
      return stopping
    }
  }
}

/**
 * Closes the listening socket (new connections are refused) and waits for the requests in
 * flight, up to `graceMs`; whatever is still open then is cut. A kept-alive connection is closed
 * as soon as it is idle, so a client between two requests cannot hold the server open.
 */
const drain = (server: Server, graceMs: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50)
    const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, graceMs))
    server.close(() => {
      clearInterval(idle)
      clearTimeout(cut)
      resolve()
    })
    server.closeIdleConnections()
  })
