/**
 * What `Idempotency-Key` costs in statements: nothing at all for a booking without the header
 * (the hot path), one claim and the answer's update (in the booking's transaction) with it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "@waybill/core"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { migrate, sqliteEngine } from "@waybill/storage-kysely"
import { waybillLayer } from "../src/host.js"
import { e2eConfig, shipment } from "./harness.js"

let dir: string
let handler: WaybillHandler
let apiKey: string
const statements: Array<string> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waybill-idem-statements-"))
  const dbFile = join(dir, "waybill.db")
  const engine = sqliteEngine(new Database(dbFile), { onStatement: (sql) => statements.push(sql) })
  await Effect.runPromise(migrate(engine))
  const layer = waybillLayer(engine, { dbFile, config: e2eConfig })
  const created = await Effect.runPromise(Accounts.createAccount({ name: "Statements" }).pipe(Effect.provide(layer)))
  apiKey = Redacted.value(created.liveKey)
  handler = createHandler(layer, { allowInsecureHttp: true })
})
afterAll(async () => {
  await handler.dispose()
  rmSync(dir, { recursive: true, force: true })
})

const book = async (headers: Record<string, string> = {}) => {
  statements.length = 0
  const reply = await handler.handleRaw(
    new Request("http://127.0.0.1/api/v1/order/json/", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}`, ...headers },
      body: JSON.stringify({ data: { shipments: [shipment()] } })
    })
  )
  expect(reply.status).toBe(200)
  return statements.filter((s) => s.includes("waybill_idempotency_keys"))
}

describe("Idempotency-Key statements", () => {
  it("a booking without the header sends no idempotency statement", async () => {
    await book() // warm: the account and key are read once
    expect(await book()).toEqual([])
  })

  it("with the header: one claim, then the answer stored with the booking", async () => {
    const sent = await book({ "idempotency-key": "statements-1" })
    expect(sent).toHaveLength(2)
    expect(sent[0]).toMatch(/^insert into "waybill_idempotency_keys".* on conflict .* do nothing/)
    expect(sent[1]).toMatch(/^update "waybill_idempotency_keys"/)
    // The answer's update is in the booking's unit: after its inserts, before the unit ends.
    const booking = statements.findIndex((s) => s.startsWith('insert into "waybill_shipments"'))
    const answer = statements.indexOf(sent[1]!)
    expect(booking).toBeGreaterThan(-1)
    expect(answer).toBeGreaterThan(booking)
    // (The booking's own batch may release its savepoint there: that ends the batch, not the unit.)
    const between = statements.slice(booking, answer).filter((s) => !s.endsWith("savepoint waybill_batch"))
    expect(between.filter((s) => /^(release|commit|rollback|begin|savepoint)\b/i.test(s))).toEqual([])
  })
})
