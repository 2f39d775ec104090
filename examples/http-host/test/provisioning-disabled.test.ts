/**
 * A host that provides no `Mailer` / `PasswordHasher` (as every host before provisioning) still
 * compiles and serves everything else; provisioning answers 404 there.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { type OpenDatabase, openDatabase, waybillLayer } from "../src/host.js"

let dir: string
let database: OpenDatabase
let handler: WaybillHandler

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waybill-noprov-"))
  const dbFile = join(dir, "waybill.db")
  database = await openDatabase(dbFile)
  handler = createHandler(waybillLayer(database.engine, { dbFile }))
})
afterAll(async () => {
  await handler.dispose()
  await database.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("provisioning without a Mailer and a PasswordHasher", () => {
  it.each([
    ["POST", "/api/v1/accountsetup/?action=pre-register"],
    ["GET", "/api/v1/accountsetup/verify/?token=abc"]
  ])("%s %s answers 404", async (method, path) => {
    const response = await handler.handler(
      new Request(`http://127.0.0.1${path}`, {
        method,
        ...(method === "POST"
          ? {
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: "email_address=ada%40acme-logistics.com&password=correct+horse+battery+staple"
            }
          : {})
      })
    )
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
  })
})
