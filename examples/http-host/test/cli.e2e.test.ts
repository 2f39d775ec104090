import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { Admission, Booking, Credentials } from "@waybill/core"
import * as Option from "effect/Option"
import { openDatabase, waybillLayer } from "../src/host.js"
import { detailedPieces, detailedShipment, detailedStops, shipment } from "./harness.js"

/** Books through the library as the holder of `key`, past the same door the HTTP layer uses. */
const bookAs = (key: string, body: unknown) =>
  Admission.admit({ client: Option.none(), resolution: Credentials.fromAuthorization(`Bearer ${key}`) }).pipe(
    Effect.flatMap((principal) => Booking.createShipments({ principal, body }))
  )

const run = promisify(execFile)
const cli = resolve(import.meta.dirname, "../src/cli.ts")
let dir: string
let db: string

/** Runs `waybill <args> --db <db> --json` and parses its output. */
const waybill = async (...args: Array<string>) => {
  try {
    const { stdout } = await run(process.execPath, ["--import", "tsx", cli, ...args, "--db", db, "--json"], {
      cwd: resolve(import.meta.dirname, "..")
    })
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) }
  } catch (e) {
    const err = e as { code: number; stdout: string }
    return { code: err.code, out: JSON.parse(err.stdout.trim().split("\n").at(-1)!) }
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "waybill-cli-"))
  db = join(dir, "cli.db")
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("pnpm waybill (CLI)", () => {
  it("creates accounts, shows them, rotates and disables keys, and moves shipments along", async () => {
    const created = await waybill("account", "create", "--name", "CLI customer")
    expect(created.code).toBe(0)
    expect(created.out.customer_no).toMatch(/^\d{7}$/)
    expect(created.out.live_key).toMatch(/^wb_live_/)
    expect(created.out.test_key).toMatch(/^wb_test_/)

    const shown = await waybill("account", "show", created.out.customer_no)
    expect(shown.out.keys.map((k: { mode: string; status: string }) => [k.mode, k.status]).sort()).toEqual([
      ["live", "active"],
      ["test", "active"]
    ])
    expect(JSON.stringify(shown.out)).not.toContain(created.out.live_key)

    // book through the library against the same database file
    const database = await openDatabase(db)
    const booked = await Effect.runPromise(
      bookAs(created.out.live_key, { data: { shipments: [shipment()] } }).pipe(
        Effect.provide(waybillLayer(database.engine, { dbFile: db }))
      )
    )
    await database.close()
    const trackNo = booked.shipments[0]!.track_no

    const assigned = await waybill("shipment", "assign", trackNo, "--driver", "drv-42")
    expect([assigned.code, assigned.out.state, assigned.out.driver_id]).toEqual([0, "assigned", "drv-42"])
    const picked = await waybill("shipment", "pickup", trackNo)
    expect(picked.out.state).toBe("picked_up")
    const refused = await waybill("shipment", "unassign", trackNo)
    expect(refused.code).toBe(1)
    expect(refused.out.error).toMatch(/refused/)
    const delivered = await waybill("shipment", "deliver", trackNo)
    expect(delivered.out.state).toBe("delivered")
    const show = await waybill("shipment", "show", trackNo)
    expect(show.out.events.map((e: { type: string }) => e.type)).toEqual([
      "shipment.booked",
      "shipment.assigned",
      "shipment.picked_up",
      "shipment.delivered"
    ])
    expect((await waybill("shipment", "show", "99999999")).code).toBe(1)

    const rotated = await waybill("key", "rotate", "--customer", created.out.customer_no, "--mode", "live")
    expect(rotated.out.key).toMatch(/^wb_live_/)
    expect(rotated.out.key).not.toBe(created.out.live_key)
    expect(rotated.out.generation).toBe(2)
    const disabled = await waybill("key", "disable", "--customer", created.out.customer_no, "--mode", "test")
    expect([disabled.out.status, disabled.out.generation]).toEqual(["disabled", 2])
    const block = await waybill("ip", "block", "2001:db8::7", "--hours", "2", "--reason", "probing")
    expect([block.code, block.out.ip, block.out.reason]).toEqual([0, "2001:db8::/64", "probing"])
    expect((await waybill("ip", "list")).out.data.map((b: { ip: string }) => b.ip)).toEqual(["2001:db8::/64"])
    // Lists page: --limit, and the cursor of the next page to pass as --starting-after.
    expect((await waybill("ip", "block", "192.0.2.7")).code).toBe(0)
    const first = await waybill("ip", "list", "--limit", "1")
    expect([first.out.data.length, first.out.has_more]).toEqual([1, true])
    const second = await waybill("ip", "list", "--limit", "1", "--starting-after", first.out.next_starting_after)
    expect([second.out.data.length, second.out.has_more, second.out.next_starting_after]).toEqual([1, false, null])
    expect([first.out.data[0].ip, second.out.data[0].ip].sort()).toEqual(["192.0.2.7", "2001:db8::/64"])
    expect((await waybill("ip", "unblock", "192.0.2.7")).out).toEqual({ unblocked: true })
    expect((await waybill("ip", "list", "--limit", "0")).code).toBe(2)
    expect((await waybill("ip", "list", "--starting-after", "nope")).code).toBe(1)
    expect((await waybill("ip", "unblock", "2001:db8::1")).out).toEqual({ unblocked: true })
    expect((await waybill("ip", "block", "not-an-ip")).code).toBe(1)
    const bad = await waybill("key", "rotate", "--customer", created.out.customer_no, "--mode", "prod")
    expect(bad.code).toBe(2)
  })

  it("shipment show prints every field the booking stored: stop contacts and notes, pieces, flags", async () => {
    const created = await waybill("account", "create", "--name", "Detail customer")
    const database = await openDatabase(db)
    const booked = await Effect.runPromise(
      bookAs(created.out.live_key, { data: { jsonstrn: "corr-42", shipments: [detailedShipment()] } }).pipe(
        Effect.provide(waybillLayer(database.engine, { dbFile: db }))
      )
    )
    await database.close()
    const trackNo = booked.shipments[0]!.track_no

    const json = await waybill("shipment", "show", trackNo)
    expect(json.out.stops.map((s: Record<string, unknown>) => s["stop_note"])).toEqual(
      detailedStops.map((s) => s.stop_note)
    )
    expect(json.out.piece_details).toEqual(detailedPieces)

    const { stdout } = await run(process.execPath, ["--import", "tsx", cli, "shipment", "show", trackNo, "--db", db], {
      cwd: resolve(import.meta.dirname, "..")
    })
    for (const s of detailedStops) {
      expect(stdout).toContain(`contact: ${s.contact_name}, ${s.phone_no}`)
      expect(stdout).toContain(`note: ${s.stop_note}`)
    }
    expect(stdout).toContain("P-1  weight 5  10x8x4  pc 1  id SKU-9  Fragile glass")
    expect(stdout).toContain("P-2  weight 10  Binders")
    expect(stdout).toContain("contact Ada Lopez, 3125550100, ada@acme.example")
    expect(stdout).toContain("needs: signature, liftgate")
    expect(stdout).toContain("pickup note: Dock 4, ring twice")
    expect(stdout).toContain("deliver note: Front desk")
    expect(stdout).toContain("reference: PO-88")
    expect(stdout).toContain("jsonstrn: corr-42")
  })
})
