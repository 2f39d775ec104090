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
  it.scoped("a lookup finds its orders by the key it names, and walks the account's index only for references", () =>
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
      yield* stores.documents.setInvoice(shipment.trackNo, "INV-1")
      const planOf = (
        field: "control_no" | "customer_reference" | "invoice_no" | "any",
        values: ReadonlyArray<string>
      ) =>
        Effect.gen(function* () {
          seen.length = 0
          const found = yield* stores.documents.findOrders({
            field,
            values,
            customers: [shipment.customerNo],
            limit: 101
          })
          const text = seen.find((s) => s.includes("waybill_shipments"))!
          // The plan does not depend on the values bound: any of the right number will do.
          const slots = (text.match(/\?/g) ?? []).length
          const plan = handle
            .prepare(`explain query plan ${text}`)
            .all(...Array.from({ length: slots - 1 }, () => shipment.customerNo), 101)
            .map((r) => (r as { detail: string }).detail)
            .join(" | ")
          return { found, plan }
        })
      // The account's index searched on the customer alone walks every shipment of the account.
      const walksAccount = /USING INDEX waybill_shipments_customer_reference_lower_idx \(customer_no=\?\)/
      // A full lookup: 100 values (the interface's limit), one of them a real order.
      const others = Array.from({ length: 99 }, (_, i) => String(20_000_000 + i))
      const byTrackNo = yield* planOf("control_no", [shipment.trackNo, ...others])
      expect(byTrackNo.found.map((o) => o.trackNo)).toEqual([shipment.trackNo])
      expect(byTrackNo.plan).toMatch(
        /SEARCH s USING (INDEX sqlite_autoindex_waybill_shipments_1|PRIMARY KEY) \(track_no=\?\)/
      )
      expect(byTrackNo.plan).not.toMatch(/customer/)
      // A reference lookup is the account's index's job, on the customer and the reference.
      const byReference = yield* planOf("customer_reference", [shipment.billingReference])
      expect(byReference.plan).toMatch(/customer_reference_lower_idx \(customer_no=\? AND <expr>=\?\)/)
      // An invoice lookup starts from the invoice index (20 ms instead of 0.75 for 100 values in
      // an account of 50,000 shipments, measured).
      const byInvoice = yield* planOf("invoice_no", ["INV-1", ...others])
      expect(byInvoice.found.map((o) => o.trackNo)).toEqual([shipment.trackNo])
      expect(byInvoice.plan).toMatch(/SEARCH o USING (COVERING )?INDEX waybill_orders_invoice_idx \(invoice_no=\?\)/)
      expect(byInvoice.plan).not.toMatch(walksAccount)
      // Any of the three: each key by its own index (30 ms instead of 0.7, same account).
      for (const value of [shipment.trackNo, shipment.billingReference, "INV-1"]) {
        const byAny = yield* planOf("any", [value, ...others])
        expect(byAny.found.map((o) => o.trackNo)).toEqual([shipment.trackNo])
        expect(byAny.plan).toMatch(/waybill_orders_invoice_idx \(invoice_no=\?\)/)
        expect(byAny.plan).toMatch(/customer_reference_lower_idx \(customer_no=\? AND <expr>=\?\)/)
        expect(byAny.plan).not.toMatch(walksAccount)
      }
    })
  )
})
