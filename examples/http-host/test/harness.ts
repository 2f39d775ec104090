/**
 * Starts the real example host on a loopback port over a fresh SQLite file, with a customer
 * account, and gives tests a way to run core programs against the same database.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Accounts, type Cancel } from "@waybill/core"
import { type HostServices, serve, waybillLayer, type RunningHost } from "../src/host.js"

export const OPERATOR_TOKEN = "op_test_token_0123456789abcdef"

export interface TestAccount {
  readonly customerNo: string
  readonly liveKey: string
  readonly testKey: string
}

export interface TestHost {
  readonly url: string
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
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies })
  })
  const layer = waybillLayer(host.database.db, { dbFile })
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
export const shipment = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  Contact: "Ada Lopez",
  Phone: "(312) 555-0100",
  PickupName: "Acme Parts",
  PickupAddress: "233 S Wacker Dr",
  PickupCity: "Chicago",
  PickupState: "IL",
  PickupZip: "60606",
  DeliverName: "Bolt Labs",
  DeliverAddress: "1060 W Addison St",
  DeliverCity: "Chicago",
  DeliverState: "IL",
  DeliverZip: "60613",
  Pieces: "2",
  Weight: "15 lbs",
  ServiceType: "2hour",
  VehicleType: "car",
  Pickupdate: "now",
  Deliverdate: "today",
  ...overrides
})

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
  return { status: response.status, body: (await response.json()) as Envelope }
}
