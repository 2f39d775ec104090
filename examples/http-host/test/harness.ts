/**
 * Starts the real example host on a loopback port over a fresh SQLite file, with a customer
 * account, and gives tests a way to run core programs against the same database.
 *
 * Every `/api/v1` answer a test receives through `fetch` is checked against the OpenAPI document
 * (`./apiSchema.ts`, installed for every test file of this project by `./setup.ts`).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"
import { Accounts, type Cancel, Config, type WaybillConfigShape } from "@waybill/core"
import type { IdempotencyPurgeOptions } from "../src/idempotency.js"
import type { ActivityHostOptions } from "../src/activity.js"
import type { LogOptions } from "../src/observability.js"
import type { MailHostOptions } from "../src/provisioning.js"
import type { SessionPurgeOptions } from "../src/sessions.js"
import { type HostServices, serve, waybillLayer, type RunningHost } from "../src/host.js"
import { sampleShipment } from "../src/sample.js"
import type { WebhookHostOptions } from "../src/webhooks.js"

/** A clock that reads `now` (ms) for the host's programs; sleeps are real. */
export const clockOf = (now: () => number): Clock.Clock => {
  const real = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    currentTimeMillis: Effect.sync(now),
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: (d: Duration.DurationInput) => real.sleep(Duration.decode(d))
  }
}

/**
 * A clock a test moves, for the host's programs to read (`startHost({ clock })`): real time plus
 * `time.offsetMs`, or `time.frozenAt` plus it once a test stops real time for a check at an
 * exact instant, which a slow machine must not push past.
 */
export const testClock = () => {
  const time: { offsetMs: number; frozenAt: number | undefined } = { offsetMs: 0, frozenAt: undefined }
  const now = () => (time.frozenAt ?? Date.now()) + time.offsetMs
  return { clock: clockOf(now), time, now }
}

export const OPERATOR_TOKEN = "op_test_token_0123456789abcdef"

export interface TestAccount {
  readonly customerNo: string
  readonly liveKey: string
  readonly testKey: string
}

/**
 * The configuration e2e hosts run with unless a test passes its own: the defaults with every
 * request limit and abuse threshold out of reach, because suites probe one host from one
 * loopback address far harder than a customer would (tests about limits set their own).
 */
export const e2eConfig: WaybillConfigShape = {
  ...Config.defaults,
  limits: {
    perKey: { requests: 1_000_000, windowSeconds: 60 },
    perClient: { requests: 1_000_000, windowSeconds: 60 },
    abuse: { ...Config.defaults.limits.abuse, maxMisses: 1_000_000, maxUnrelatedAccounts: 1_000_000 }
  }
}

export interface TestHost {
  readonly url: string
  /** The temporary directory holding the database (`waybill.db`) and its files. */
  readonly dir: string
  readonly host: RunningHost
  /** Runs a core program against the host's database. */
  readonly run: <A, E>(program: Effect.Effect<A, E, HostServices>) => Promise<A>
  readonly newAccount: (name?: string) => Promise<TestAccount>
  readonly close: () => Promise<void>
}

export const startHost = async (
  options: {
    readonly extraLayer?: Layer.Layer<Cancel.CancelProvider>
    readonly trustedProxies?: ReadonlyArray<string>
    /** Rules and limits (e.g. low rate limits); defaults to {@link e2eConfig}. */
    readonly config?: WaybillConfigShape
    /** Plain HTTP for the documents endpoint (default: allowed unless `tls` is given). */
    readonly allowInsecureHttp?: boolean
    readonly tls?: { readonly cert: string; readonly key: string }
    readonly clock?: Clock.Clock
    readonly baseUrl?: string
    /** Webhook dispatcher settings (allow-list and CA of a loopback receiver). */
    readonly webhooks?: WebhookHostOptions
    /** Provisioning e-mail (default: `.eml` files in `<dir>/waybill.db.mail`). */
    readonly mail?: MailHostOptions
    /** The host's periodic `Idempotency-Key` cleanup (tests of the CLI's purge turn it off). */
    readonly idempotency?: IdempotencyPurgeOptions
    /** The host's activity recording and periodic purge (tests of the CLI's purge turn the purge off). */
    readonly activity?: ActivityHostOptions
    /** The host's periodic purge of ended portal sessions (tests shorten its period). */
    readonly sessions?: SessionPurgeOptions
    /** Logging (default: warnings and errors only, so a suite's requests do not flood its output). */
    readonly log?: LogOptions
    /** A tracer layer (tracing is off without one). */
    readonly tracing?: Layer.Layer<never>
    /** Memory for downloaded document files (default: the host's). */
    readonly blobCacheBytes?: number
  } = {}
): Promise<TestHost> => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-e2e-"))
  const dbFile = join(dir, "waybill.db")
  const host = await serve({
    dbFile,
    port: 0,
    host: "127.0.0.1",
    operatorToken: Redacted.make(OPERATOR_TOKEN),
    ...(options.extraLayer === undefined ? {} : { extraLayer: options.extraLayer }),
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    config: options.config ?? e2eConfig,
    ...((options.allowInsecureHttp ?? options.tls === undefined) ? { allowInsecureHttp: true } : {}),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    ...(options.mail === undefined ? {} : { mail: options.mail }),
    ...(options.blobCacheBytes === undefined ? {} : { blobCacheBytes: options.blobCacheBytes }),
    ...(options.idempotency === undefined ? {} : { idempotency: options.idempotency }),
    ...(options.activity === undefined ? {} : { activity: options.activity }),
    ...(options.sessions === undefined ? {} : { sessions: options.sessions }),
    log: options.log ?? { level: LogLevel.Warning },
    ...(options.tracing === undefined ? {} : { tracing: options.tracing })
  })
  const layer = waybillLayer(host.database.engine, { dbFile, config: options.config ?? e2eConfig })
  const run = <A, E>(program: Effect.Effect<A, E, HostServices>) =>
    Effect.runPromise(program.pipe(Effect.provide(layer)))
  const newAccount = async (name = "Test customer"): Promise<TestAccount> => {
    const created = await run(Accounts.createAccount({ name }))
    return {
      customerNo: created.account.customerNo,
      liveKey: Redacted.value(created.liveKey),
      testKey: Redacted.value(created.testKey)
    }
  }
  return {
    url: host.url,
    dir,
    host,
    run,
    newAccount,
    close: async () => {
      await host.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A valid single-stop shipment in Chicago, bookable at any time of day. */
export const shipment = sampleShipment

export interface Envelope {
  readonly data: any
  readonly error: { readonly message: string; readonly exception: null } | null
}

export const postJson = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope }
}

/**
 * A multi-stop booking that fills every optional field the API stores (stop contacts, phones,
 * notes, piece details, flags, instructions), for tests that check each one is shown back.
 */
export const detailedShipment = (): Record<string, unknown> =>
  shipment({
    DeliverZip: "60201",
    DeliverAddress: "1 Church St",
    Email: "ada@acme.example",
    BillingReference: "PO-88",
    SignatureReq: "Y",
    LiftgateReq: "Y",
    PickupSpecinst: "Dock 4, ring twice",
    DeliverSpecinst: "Front desk",
    multistop_route: [
      {
        stop_id: 1,
        name: "A",
        address: "233 S Wacker Dr",
        zip: "60606",
        contact_name: "Ann Stop",
        phone_no: "312-555-0111",
        stop_note: "Loading bay"
      },
      {
        stop_id: 2,
        name: "B",
        address: "1060 W Addison St",
        zip: "60613",
        contact_name: "Ben Stop",
        phone_no: "312-555-0122",
        stop_note: "Gate code 4411"
      },
      {
        stop_id: 3,
        name: "C",
        address: "1 Church St",
        zip: "60201",
        contact_name: "Cy Stop",
        phone_no: "847-555-0133",
        stop_note: "Leave with reception"
      }
    ],
    piece_details: [
      {
        piece_no: "P-1",
        piece_weight: 5,
        length: 10,
        width: 8,
        height: 4,
        pc: 1,
        id: "SKU-9",
        description: "Fragile glass"
      },
      { piece_no: "P-2", piece_weight: "10", description: "Binders" }
    ]
  })

/** What {@link detailedShipment} is shown back as: stops' contact fields and its piece rows. */
export const detailedStops = [
  { contact_name: "Ann Stop", phone_no: "312-555-0111", stop_note: "Loading bay" },
  { contact_name: "Ben Stop", phone_no: "312-555-0122", stop_note: "Gate code 4411" },
  { contact_name: "Cy Stop", phone_no: "847-555-0133", stop_note: "Leave with reception" }
]
export const detailedPieces = [
  {
    piece_no: "P-1",
    piece_weight: "5",
    length: "10",
    width: "8",
    height: "4",
    pc: "1",
    id: "SKU-9",
    description: "Fragile glass"
  },
  { piece_no: "P-2", piece_weight: "10", length: "", width: "", height: "", pc: "", id: "", description: "Binders" }
]

/** Books one shipment with the key and returns its tracking number. */
export const bookOne = async (url: string, key: string, overrides: Record<string, unknown> = {}): Promise<string> => {
  const r = await postJson(
    `${url}/api/v1/order/json/`,
    { data: { shipments: [shipment(overrides)] } },
    { authorization: `Bearer ${key}` }
  )
  if (r.status !== 200) throw new Error(`booking failed: ${JSON.stringify(r.body)}`)
  return r.body.data.shipments[0].track_no as string
}

/** Calls the operator API. */
export const ops = async (url: string, path: string, body?: unknown, token: string = OPERATOR_TOKEN) => {
  const response = await fetch(`${url}/ops/v1/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope }
}

/**
 * Polls `probe` until it gives a value (anything but `undefined` or `false`) and returns it, or
 * throws after `deadlineMs` naming `what`. For conditions that other processes make true (a
 * child listening, a receiver's deliveries); generous deadlines, so a loaded machine is slow, not
 * red.
 */
export const waitFor = async <A>(what: string, probe: () => A | undefined | false, deadlineMs = 30_000): Promise<A> => {
  const until = Date.now() + deadlineMs
  for (;;) {
    const v = probe()
    if (v !== undefined && v !== false) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * A host whose dispatcher delivers to a loopback HTTPS receiver: the receiver's self-signed
 * certificate is trusted through the host's `ca` option and its address allowed through
 * `allowPrivate`. `close` stops both.
 */
export const startHostWithReceiver = async () => {
  const scope = Effect.runSync(Scope.make())
  const pems = await Effect.runPromise(certificate)
  const r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
  const host = await startHost({ webhooks: { allowPrivate: ["127.0.0.1"], ca: [pems.cert], idleMs: 20 } })
  const close = async () => {
    await host.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  return { host, receiver: r, close }
}
