import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Fixtures, shipmentSearchContract } from "@waybill/testkit"
import { CompiledQuery, sql } from "kysely"
import { migrate, StorageKysely } from "../src/index.js"
import { type Sent, storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  shipmentSearchContract(`ShipmentStore.search (storage-kysely: ${target.name})`, () => storageLayer(target))
}

/**
 * Each index of 0016_shipment_search serves the search (and the documents lookup by customer
 * reference, which now reads the lower() index): the plan of each statement names it. On
 * PostgreSQL the tables are nearly empty, so sequential scans are turned off for the session to
 * ask whether the index can serve the query at all.
 */
for (const target of targets) {
  describe(`shipment search query plans: ${target.name}`, () => {
    it.scoped("the list, each search branch and the reference lookup use the 0016 indexes", () =>
      Effect.gen(function* () {
        const queries: Array<Sent> = []
        const db = yield* target.open({ onStatement: (text, parameters) => queries.push({ sql: text, parameters }) })
        yield* migrate(db)
        const { documents, shipments } = yield* StorageKysely.make(db)
        const s = Fixtures.shipment()
        yield* shipments.insert(s)
        yield* documents.setInvoice(s.trackNo, "INV-1")
        if (target.dialect === "postgres") {
          // PostgreSQL plans by statistics: an account with a history, analyzed, is what the
          // search must not walk (on a one-row table any plan is as good).
          yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) =>
              Fixtures.shipment({ customerNo: s.customerNo, createdAt: s.createdAt - i - 1 })
            ),
            (other) => shipments.insert(other),
            { discard: true }
          )
          yield* Effect.promise(() => sql`analyze`.execute(db.kysely))
        }

        const plan = (q: Sent) =>
          Effect.promise(() =>
            db.kysely.connection().execute(async (conn) => {
              if (target.dialect === "postgres") {
                await sql`set enable_seqscan = off`.execute(conn)
                const result = await conn.executeQuery(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]))
                await sql`reset enable_seqscan`.execute(conn)
                return result.rows.map((r) => String((r as Record<string, unknown>)["QUERY PLAN"])).join("\n")
              }
              const result = await conn.executeQuery(
                CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters])
              )
              return result.rows.map((r) => String((r as Record<string, unknown>)["detail"])).join("\n")
            })
          )
        const last = (operation: string) => queries.filter((q) => q.sql.includes(operation)).at(-1)!

        queries.length = 0
        yield* shipments.search({ customerNo: s.customerNo }, { limit: 5, startingAfter: [s.createdAt + 1, "9"] })
        const list = yield* plan(last('"waybill_shipments" as "s"'))
        expect(list).toContain("waybill_shipments_customer_created_idx")
        if (target.dialect === "sqlite") expect(list).not.toContain("TEMP B-TREE")

        queries.length = 0
        yield* shipments.search({ customerNo: s.customerNo, q: "inv-1" }, { limit: 5 })
        const searched = yield* plan(last('"waybill_shipments" as "s"'))
        expect(searched).toContain("waybill_shipments_customer_reference_lower_idx")
        expect(searched).toContain("waybill_orders_invoice_lower_idx")
        // The matches drive the search: each is looked up by primary key, the account's list is not walked.
        expect(searched).not.toContain("waybill_shipments_customer_created_idx")
        expect(searched).toMatch(
          target.dialect === "sqlite"
            ? /SEARCH s USING INDEX sqlite_autoindex_waybill_shipments_1 \(track_no=\?\)/
            : /Index Scan using waybill_shipments_pkey on waybill_shipments s/
        )

        queries.length = 0
        yield* documents.lookupOrders({
          customers: [s.customerNo],
          field: "customer_reference",
          values: [s.billingReference],
          limit: 10
        })
        expect(yield* plan(queries.at(-1)!)).toContain("waybill_shipments_customer_reference_lower_idx")
      })
    )
  })
}
