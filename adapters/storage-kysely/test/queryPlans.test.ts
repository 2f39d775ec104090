/**
 * Query plans SQLite must keep. Without statistics (no ANALYZE has run), SQLite guesses, and a
 * wrong guess costs in proportion to an account's size, which no functional test notices.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Fixtures } from "@waybill/testkit"
import { migrate, sqliteEngine, StorageKysely } from "../src/index.js"
import { describeSqliteOnly } from "./dialects.js"

describeSqliteOnly("SQLite query plans", "the plans are SQLite's", () => {
  it.scoped("a control_no lookup finds its orders by primary key, not by walking the account's index", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-plans-"))),
        (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
      )
      const handle = new Database(path.join(dir, "waybill.db"))
      const seen: Array<string> = []
      const engine = sqliteEngine(handle, { onStatement: (sql) => void seen.push(sql) })
      yield* Effect.addFinalizer(() => Effect.promise(() => engine.close()))
      yield* migrate(engine)
      const stores = yield* StorageKysely.make(engine)
      const shipment = Fixtures.shipment()
      yield* stores.shipments.insert(shipment)
      const planOf = (field: "control_no" | "customer_reference", values: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          seen.length = 0
          const found = yield* stores.documents.findOrders({
            field,
            values,
            customers: [shipment.customerNo],
            limit: 101
          })
          const text = seen.find((s) => s.includes("waybill_shipments"))!
          const plan = handle
            .prepare(`explain query plan ${text}`)
            .all(
              ...(field === "control_no"
                ? [shipment.customerNo, ...values, 101]
                : [shipment.customerNo, ...values, ...values, 101])
            )
            .map((r) => (r as { detail: string }).detail)
            .join(" | ")
          return { found, plan }
        })
      // A full lookup: 100 values (the interface's limit), one of them a real order.
      const values = [shipment.trackNo, ...Array.from({ length: 99 }, (_, i) => String(20_000_000 + i))]
      const byTrackNo = yield* planOf("control_no", values)
      expect(byTrackNo.found.map((o) => o.trackNo)).toEqual([shipment.trackNo])
      expect(byTrackNo.plan).toMatch(
        /SEARCH s USING (INDEX sqlite_autoindex_waybill_shipments_1|PRIMARY KEY) \(track_no=\?\)/
      )
      expect(byTrackNo.plan).not.toMatch(/customer/)
      // A reference lookup is the account's index's job.
      const byReference = yield* planOf("customer_reference", [shipment.billingReference])
      expect(byReference.plan).toMatch(/customer_reference_lower_idx/)
    })
  )
})
