/**
 * @module host
 *
 * Composes Waybill for the example host: SQLite through better-sqlite3 (WAL), the
 * geo-us dataset, the WebCrypto CSPRNG, and a KeyRing derived from a secret file. Everything a
 * team embedding Waybill would write in its own server, in one place.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"
import Database from "better-sqlite3"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type { Kysely } from "kysely"
import { Admission, type Cancel, WaybillConfig, type WaybillConfigShape } from "@waybill/core"
import { nodeEntropy } from "./entropy.js"
import { BlobFs } from "@waybill/blob-fs"
import { GeoUs } from "@waybill/geo-us"
import { ImageSharp } from "@waybill/image-sharp"
import { RateLimitBuffered } from "@waybill/rate-limit-buffered"
import { apiDocs } from "@waybill/api-docs"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { toNodeListener } from "@waybill/http-node"
import { migrate, sqliteEngine, type StorageEngine, StorageKysely, type WaybillDatabase } from "@waybill/storage-kysely"
import { SAFETY_NET_PAGES, startCheckpointer } from "./checkpointer.js"
import { type MailHostOptions, provisioningLayer } from "./provisioning.js"
import { keyRingLayer, loadMasterSecret } from "./secrets.js"
import { type RunningDispatcher, startDispatcher, type WebhookHostOptions } from "./webhooks.js"
import { type IdempotencyPurgeOptions, startIdempotencyPurger } from "./idempotency.js"

export interface HostOptions {
  /** SQLite file (created if missing). */
  readonly dbFile: string
  /** Master secret file; defaults to `<dbFile>.secret`. */
  readonly secretFile?: string
  /** Directory of document files; defaults to `<dbFile>.blobs`. */
  readonly blobDir?: string
  /** Rules and limits; defaults to `Config.defaults` (tests lower the rate limits). */
  readonly config?: WaybillConfigShape
}

/** An open database with Waybill's tables migrated. */
export interface OpenDatabase {
  /** The storage engine over the file's handle: what `StorageKysely.layer` takes. */
  readonly engine: StorageEngine
  /** A Kysely over the same engine, for the host's own queries (never inside a Waybill transaction). */
  readonly db: Kysely<WaybillDatabase>
  readonly close: () => Promise<void>
}

/** Options of {@link openDatabase}. */
export interface OpenOptions {
  /**
   * Run WAL checkpoints in a worker thread instead of inside commits on the event loop
   * (`checkpointer.ts`); `serve` turns this on, short-lived CLI commands do not need it.
   */
  readonly backgroundCheckpoints?: boolean
}

/** Opens (and migrates) the SQLite file with the settings a server wants: WAL, a busy timeout, foreign keys. */
export const openDatabase = async (file: string, options: OpenOptions = {}): Promise<OpenDatabase> => {
  const sqlite = new Database(file)
  sqlite.pragma("journal_mode = WAL")
  sqlite.pragma("synchronous = NORMAL")
  sqlite.pragma("busy_timeout = 5000")
  sqlite.pragma("foreign_keys = ON")
  // Waybill's statements run on the handle synchronously; its transactions are group-committed.
  const engine = sqliteEngine(sqlite)
  const db = engine.kysely
  await Effect.runPromise(migrate(engine))
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
    keyRingLayer(loadMasterSecret(options.secretFile ?? `${options.dbFile}.secret`)),
    BlobFs.layer(options.blobDir ?? `${options.dbFile}.blobs`),
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
}

export interface RunningHost {
  readonly url: string
  readonly server: Server
  readonly handler: WaybillHandler
  readonly database: OpenDatabase
  readonly close: () => Promise<void>
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

/** Starts the HTTP server; resolves once it listens. */
export const serve = async (options: ServeOptions): Promise<RunningHost> => {
  const database = await openDatabase(options.dbFile, { backgroundCheckpoints: true })
  const base =
    options.extraLayer === undefined
      ? waybillLayer(database.engine, options)
      : Layer.merge(waybillLayer(database.engine, options), options.extraLayer)
  const provisioned = Layer.merge(base, provisioningLayer(options.dbFile, options.mail))
  const layer = options.clock === undefined ? provisioned : Layer.merge(provisioned, Layer.setClock(options.clock))
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
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  const url = `${options.tls === undefined ? "http" : "https"}://${host}:${address.port}`
  const handler = createHandler(layer, {
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    emailLinkBaseUrl: options.baseUrl ?? url,
    ...(options.operatorToken === undefined ? {} : { operatorToken: options.operatorToken }),
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    ...(options.allowInsecureHttp === true ? { allowInsecureHttp: true } : {}),
    ...(options.webhooks?.allowPrivate === undefined ? {} : { webhookAllowPrivate: options.webhooks.allowPrivate })
  })
  wired.listener = withApiDocs(toNodeListener(handler))
  const dispatcher: RunningDispatcher | undefined =
    options.webhooks?.dispatch === false
      ? undefined
      : startDispatcher(database.engine, options.secretFile ?? `${options.dbFile}.secret`, options.webhooks)
  const purger = startIdempotencyPurger(database.engine, options.idempotency)
  return {
    url,
    server,
    handler,
    database,
    close: async () => {
      await purger.stop()
      await dispatcher?.stop()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await handler.dispose()
      await database.close()
    }
  }
}
