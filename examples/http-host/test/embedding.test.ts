/**
 * docs/embedding.md, run for real: a team's own `node:http` server with its own `/health` route
 * and Waybill mounted under `/api/v1` and `/ops/v1`, plus core programs run without HTTP.
 *
 * The code between `// #region <name>` and `// #endregion <name>` is quoted verbatim (after
 * removing the common indentation) by docs/embedding.md; docs.test.ts keeps the two identical.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts, Admission, Booking, Credentials, Operations } from "@waybill/core"
import type { HandlerRequirements } from "@waybill/http"
import { shipment } from "./harness.js"

import * as Option from "effect/Option"
// #region sample
import { hkdfSync } from "node:crypto"
import { createServer } from "node:http"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Entropy, KeyRing, type SecretPurpose, WaybillConfig } from "@waybill/core"
import { GeoUs } from "@waybill/geo-us"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { toNodeListener } from "@waybill/http-node"
import { migrate, sqliteEngine, StorageKysely } from "@waybill/storage-kysely"

/** Waybill over the team's SQLite file. `masterSecret` comes from outside the database. */
async function openWaybill(dbFile: string, masterSecret: Uint8Array, operatorToken: string) {
  const sqlite = new Database(dbFile)
  sqlite.pragma("journal_mode = WAL")
  sqlite.pragma("busy_timeout = 5000")
  const storage = sqliteEngine(sqlite) // Waybill's statements on `sqlite`, transactions group-committed
  await Effect.runPromise(migrate(storage)) // creates or upgrades the waybill_* tables, nothing else

  // One secret per purpose, derived from the master secret; ids must change when material does.
  const secret = (purpose: SecretPurpose) => [
    {
      id: `${purpose}-v1`,
      material: Redacted.make(new Uint8Array(hkdfSync("sha256", masterSecret, new Uint8Array(0), purpose, 32)))
    }
  ]
  const keyRing = KeyRing.fromSecrets({
    "api-key": secret("api-key"),
    ticket: secret("ticket"),
    otp: secret("otp"),
    webhook: secret("webhook")
  })

  const layer = Layer.mergeAll(
    StorageKysely.layer(storage),
    GeoUs.layer,
    Entropy.webCrypto,
    WaybillConfig.layer(),
    keyRing
  )
  const waybill = createHandler(layer, { operatorToken: Redacted.make(operatorToken) })
  const close = async () => {
    await waybill.dispose()
    await storage.close() // also closes the better-sqlite3 handle
  }
  return { layer, waybill, close }
}

/** The team's server: its own routes first, then Waybill's two trees, with full paths. */
function teamServer(waybill: WaybillHandler) {
  const waybillListener = toNodeListener(waybill) // the raw path: no Fetch objects per request
  return createServer((req, res) => {
    const path = req.url ?? "/"
    if (path === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    } else if (path.startsWith("/api/v1/") || path.startsWith("/ops/v1/")) {
      waybillListener(req, res)
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("team: not found")
    }
  })
}
// #endregion sample

const OPERATOR_TOKEN = "team-ops-token-0123456789"

let dir: string
let app: Awaited<ReturnType<typeof openWaybill>>
let server: Server
let base: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waybill-embed-"))
  app = await openWaybill(join(dir, "team.db"), randomBytes(32), OPERATOR_TOKEN)
  server = teamServer(app.waybill)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await app.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("embedding Waybill in a team's node:http server (docs/embedding.md)", () => {
  it("serves the team's /health and Waybill's /api/v1 and /ops/v1 side by side", async () => {
    const account = await Effect.runPromise(Accounts.createAccount({ name: "Acme" }).pipe(Effect.provide(app.layer)))
    const key = Redacted.value(account.testKey)

    expect(await (await fetch(`${base}/health`)).text()).toBe("ok")

    const booked = await fetch(`${base}/api/v1/order/json/`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ data: { jsonstrn: "team-1", shipments: [shipment()] } })
    })
    expect(booked.status).toBe(200)
    const body = (await booked.json()) as { data: { jsonstrn: string; shipments: Array<Record<string, unknown>> } }
    expect(body.data.jsonstrn).toBe("team-1")
    const result = body.data.shipments[0]!
    expect(result["result"]).toBe("success")
    expect(result["track_no"]).toMatch(/^[1-9]\d{7}$/)

    const shown = await fetch(`${base}/ops/v1/shipments/${String(result["track_no"])}/`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }
    })
    expect(shown.status).toBe(200)
    expect(((await shown.json()) as { data: { state: string; livemode: boolean } }).data).toMatchObject({
      state: "booked",
      livemode: false
    })

    // The team's routes still answer, and paths outside Waybill's trees stay the team's.
    const health = await fetch(`${base}/health`)
    expect([health.status, await health.text()]).toEqual([200, "ok"])
    const other = await fetch(`${base}/api/v2/anything`)
    expect([other.status, await other.text()]).toEqual([404, "team: not found"])
    // Waybill answers its own unknown paths with its JSON envelope.
    const unknown = await fetch(`${base}/api/v1/nothing/`)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
  })

  it("runs core programs directly, without HTTP, on the same database", async () => {
    const body = { data: { shipments: [shipment()] } }
    // #region programs
    const run = <A, E>(program: Effect.Effect<A, E, HandlerRequirements>) =>
      Effect.runPromise(Effect.provide(program, app.layer))

    const created = await run(Accounts.createAccount({ name: "Globex" }))
    const liveKey = Redacted.value(created.liveKey) // shown once: hand it to the customer now

    // The HTTP layer authenticates and admits once per request; a program does it with the same door.
    const principal = await run(
      Admission.admit({ client: Option.none(), resolution: Credentials.fromAuthorization(`Bearer ${liveKey}`) })
    )
    const booked = await run(Booking.createShipments({ principal, body }))
    const trackNo = booked.shipments[0]!.track_no

    const assigned = await run(Operations.perform(trackNo, { action: "assign", driverId: "drv-7" }))
    // assigned.shipment.state === "assigned"; assigned.events: shipment.booked, then shipment.assigned
    // #endregion programs
    expect(created.account.customerNo).toMatch(/^[1-9]\d{6}$/)
    expect(booked.shipments_with_errors).toBe(0)
    expect(assigned.shipment.state).toBe("assigned")
    expect(assigned.shipment.driverId).toBe("drv-7")
    expect(assigned.events.map((e) => [e.type, e.sequence])).toEqual([
      ["shipment.booked", 1],
      ["shipment.assigned", 2]
    ])

    // The HTTP side sees what the programs did.
    const cancel = await fetch(`${base}/api/v1/order/cancel/json/?id=${trackNo}&key=${liveKey}`)
    expect(cancel.status).toBe(409)
    expect(await cancel.json()).toEqual({
      data: null,
      error: { message: "This order cannot be canceled.", exception: null }
    })
  })
})
