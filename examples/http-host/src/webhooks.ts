/**
 * @module webhooks
 *
 * The example host's webhook wiring: the dispatcher fiber (`Webhooks.runDispatcher` over the
 * same database, with the `@waybill/webhook-fetch` transport) and the operator views the CLI
 * prints. A team embedding Waybill writes the same few lines in its own server.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type ClientIp, Ssrf, Webhooks } from "@waybill/core"
import { nodeEntropy } from "./entropy.js"
import { type StorageEngine, StorageKysely } from "@waybill/storage-kysely"
import { WebhookFetch } from "@waybill/webhook-fetch"
import { keyRingLayer, loadMasterSecret } from "./secrets.js"

/** Webhook settings of the host. */
export interface WebhookHostOptions {
  /** Private addresses or CIDRs endpoints may use anyway (`--webhook-allow-private`). */
  readonly allowPrivate?: ReadonlyArray<string>
  /** Extra trusted CA certificates, PEM text (`--webhook-ca FILE`). */
  readonly ca?: ReadonlyArray<string>
  /** Run the dispatcher in this process (default true). */
  readonly dispatch?: boolean
  /** Pause between empty rounds, ms (default 1000). */
  readonly idleMs?: number
  /** How long a claim is held (default 60 s; renewed while sending); tests shorten it. */
  readonly leaseMs?: number
  /** Parallel sends (default 16) and, of those, to one endpoint (default half). */
  readonly concurrency?: number
  readonly perEndpoint?: number
  /** Transport time limits (tests shorten them). */
  readonly connectTimeoutMs?: number
  readonly totalTimeoutMs?: number
}

/** Parses the allow-list flag; throws on an invalid entry, so a typo never changes what is allowed. */
export const allowList = (entries: ReadonlyArray<string> | undefined): ReadonlyArray<ClientIp.Cidr> =>
  Option.getOrThrowWith(
    Ssrf.parseAllowList((entries ?? []).join(",")),
    () => new Error(`invalid --webhook-allow-private: ${(entries ?? []).join(",")}`)
  )

/** The transport layer for these options. */
export const transportLayer = (options: WebhookHostOptions) =>
  WebhookFetch.layer({
    allowPrivate: allowList(options.allowPrivate),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.totalTimeoutMs === undefined ? {} : { totalTimeoutMs: options.totalTimeoutMs })
  })

/** A running dispatcher. */
export interface RunningDispatcher {
  readonly stop: () => Promise<void>
}

/**
 * Forks the dispatcher over `engine`. Stopping interrupts it wherever it is: it claims nothing
 * more and gives back the leases it holds, so the deliveries it had not finished are claimable
 * by any dispatcher at once (one that was sent but not yet recorded is sent again, same
 * `webhook-id`).
 */
export const startDispatcher = (
  engine: StorageEngine,
  secretFile: string,
  options: WebhookHostOptions = {}
): RunningDispatcher => {
  const layer = Layer.mergeAll(
    StorageKysely.layer(engine),
    nodeEntropy,
    keyRingLayer(loadMasterSecret(secretFile)),
    transportLayer(options)
  )
  const fiber = Effect.runFork(
    Webhooks.runDispatcher({
      // The process id in the lease owner tells an operator (and the fleet test) which host
      // holds a delivery; the random part keeps owners apart across restarts and machines.
      owner: `dispatcher_${process.pid}_${randomUUID().replaceAll("-", "").slice(0, 12)}`,
      idle: options.idleMs ?? 1000,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.perEndpoint === undefined ? {} : { perEndpoint: options.perEndpoint })
    }).pipe(Effect.provide(layer))
  )
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined) }
}
