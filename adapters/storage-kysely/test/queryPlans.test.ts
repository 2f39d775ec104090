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
import * as Option from "effect/Option"
import type { Webhook } from "@waybill/core"
import { DocumentStoreContract, Fixtures, WebhookStoreContract } from "@waybill/testkit"
import { migrate, sqliteEngine, StorageKysely } from "../src/index.js"
import { describeSqliteOnly } from "./dialects.js"

/** A migrated SQLite file whose statements are recorded, and the plan of any of them. */
const recorded = Effect.gen(function* () {
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
  /** The plan of `text`, one step a line; it does not depend on the values bound, so any will do. */
  const planOf = (text: string) =>
    handle
      .prepare(`explain query plan ${text}`)
      .all(...Array.from({ length: (text.match(/\?/g) ?? []).length }, () => "x"))
      .map((r) => (r as { detail: string }).detail)
  return { handle, seen, stores, planOf }
})

/** What `complete` records for a first attempt of `claimed` answered 200 at `at`. */
const delivered = (owner: string, claimed: Webhook.Claimed, at: number) => ({
  owner,
  attempt: {
    endpointId: claimed.endpoint.id,
    eventId: claimed.event.id,
    attempt: 1,
    at,
    status: 200,
    ok: true,
    durationMs: 1,
    response: "ok"
  },
  outcome: { _tag: "Delivered" } as const
})

describeSqliteOnly("SQLite query plans", "the plans are SQLite's", () => {
  it.scoped("a lookup finds its orders by the key it names, and walks the account's index only for references", () =>
    Effect.gen(function* () {
      const { handle, seen, stores } = yield* recorded
      const shipment = Fixtures.shipment()
      yield* stores.shipments.insert(shipment)
      yield* stores.documents.setInvoice(shipment.trackNo, "INV-1")
      const planOf = (
        field: "control_no" | "customer_reference" | "invoice_no" | "any",
        values: ReadonlyArray<string>
      ) =>
        Effect.gen(function* () {
          seen.length = 0
          const found = (yield* stores.documents.lookupOrders({
            field,
            values,
            customers: [shipment.customerNo],
            limit: 101
          })).map((listing) => listing.order)
          const text = seen.find((s) => s.includes("waybill_shipments"))!
          // The plan does not depend on the values bound: any of the right number will do.
          const slots = (text.match(/\?/g) ?? []).length
          const plan = handle
            .prepare(`explain query plan ${text}`)
            .all(...Array.from({ length: slots }, () => shipment.customerNo))
            .map((r) => (r as { detail: string }).detail)
            .join(" | ")
          // Each order's documents by the order's index, whatever found the order.
          expect(plan).toMatch(/SEARCH d USING INDEX waybill_documents_order_idx \(track_no=\?/)
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

  it.scoped("a download reads its grant by primary key; the purge deletes a range of that key", () =>
    Effect.gen(function* () {
      const { seen, stores, planOf } = yield* recorded
      const grant = DocumentStoreContract.grant(Fixtures.baseTime)
      seen.length = 0
      yield* stores.documents.insertGrant(grant)
      yield* stores.documents.findGrant(grant.id)
      const find = seen.find((s) => s.startsWith("select") && s.includes("waybill_ticket_grants"))!
      expect(planOf(find).join(" | ")).toMatch(
        /SEARCH waybill_ticket_grants USING INDEX sqlite_autoindex_waybill_ticket_grants_1 \(id=\?\)/
      )
      yield* stores.documents.deleteExpiredGrants(Fixtures.baseTime + 1000, 100)
      const purge = seen.find((s) => s.startsWith("delete") && s.includes("waybill_ticket_grants"))!
      expect(planOf(purge).join(" | ")).toMatch(
        /SEARCH g USING INDEX sqlite_autoindex_waybill_ticket_grants_1 \(id<\?\)/
      )
      expect(yield* stores.documents.findGrant(grant.id)).toEqual(Option.none())
    })
  )

  it.scoped("the webhook statements go by their indexes, whatever size the tables grow to", () =>
    Effect.gen(function* () {
      const { handle, seen, stores, planOf } = yield* recorded
      const T = Fixtures.baseTime
      const e = WebhookStoreContract.endpoint()
      seen.length = 0
      yield* stores.webhooks.insertEndpoint(e)
      yield* stores.webhooks.updateEndpoint({ ...e, eventTypes: ["shipment.booked"] })
      // Every statement that keeps the claimable flag: fan-out, outcome (hand-over), requeue,
      // recover, enqueue, disabling and enabling.
      const event = yield* stores.outbox.append(Fixtures.event({ customerNo: e.customerNo, occurredAt: T }))
      const [claimed] = yield* stores.webhooks.claimDue({ owner: "o", now: T, leaseMs: 1000, limit: 10 })
      yield* stores.webhooks.complete(delivered("o", claimed!, T))
      yield* stores.webhooks.requeueEvent(event.id, T + 1)
      yield* stores.webhooks.recover(e.id, T - 1, T + 2)
      yield* stores.webhooks.enqueue(e.id, event.id, T + 3)
      expect(yield* stores.webhooks.noteHealth({ endpointId: e.id, ok: false, now: T, disableAfterMs: 0 })).toBe(true)
      yield* stores.webhooks.updateEndpoint({ ...e, eventTypes: ["shipment.booked"] })
      yield* stores.webhooks.prune(T)
      yield* stores.webhooks.deleteEndpoint(e.id)
      // Plain inserts have no plan to keep; an insert from a select (the fan-out) has.
      const statements = seen.filter(
        (s) => s.includes("waybill_webhook_") && (!s.startsWith("insert") || / select /.test(s))
      )
      for (const part of [
        'insert into "waybill_webhook_deliveries"',
        'set "claimable" = 1 where "endpoint_id" = ?',
        'set "claimable" = 0',
        '"waybill_webhook_deliveries"."track_no" = (select'
      ])
        expect(
          statements.some((text) => text.includes(part)),
          part
        ).toBe(true)
      const planned = (part: string) => {
        const text = statements.find((s) => s.includes(part))
        expect(text, part).toBeDefined()
        return planOf(text!)
      }
      // No statement reads a whole webhook table (subscriptions by endpoint alone used to); the
      // prune's own list of endpoint ids (`ids`) is scanned, and its sweep of the claimable flag
      // walks the pending deliveries alone (the order index holds nothing else).
      for (const text of statements) {
        const plan = planOf(text).join(" | ")
        // The sweep is the one statement with nothing to narrow it: no parameter at all.
        if (text.startsWith('update "waybill_webhook_deliveries" set "claimable" = 1') && !text.includes("?"))
          expect(plan, text).toMatch(
            /^SCAN waybill_webhook_deliveries USING INDEX waybill_webhook_deliveries_order_idx/
          )
        else expect(plan, text).not.toMatch(/SCAN (?!ids\b)\w+/)
      }
      // The claim walks the index of claimable deliveries: a shipment's later deliveries and a
      // disabled endpoint's backlog are not in it. Its order and endpoint checks stay as guards,
      // the order check after the endpoint's lookup.
      const claim = planned('from "waybill_webhook_deliveries" as "d" inner join')
      expect(claim[0], claim.join(" | ")).toMatch(
        /SEARCH d USING INDEX waybill_webhook_deliveries_claimable_idx \(next_attempt_at<\?\)/
      )
      const endpointStep = claim.findIndex((step) => /SEARCH e USING/.test(step))
      const orderStep = claim.findIndex((step) => /CORRELATED SCALAR SUBQUERY/.test(step))
      expect(endpointStep, claim.join(" | ")).toBeGreaterThanOrEqual(0)
      expect(orderStep, claim.join(" | ")).toBeGreaterThan(endpointStep)
      // The order check is one seek into an index of pending rows alone, not a walk over the
      // shipment's sent deliveries (a table read each).
      expect(claim[orderStep + 1], claim.join(" | ")).toMatch(
        /SEARCH p USING COVERING INDEX waybill_webhook_deliveries_order_idx \(endpoint_id=\? AND track_no=\? AND sequence<\?\)/
      )
      // The hourly prune finds the old rows by index, so a prune with nothing to do costs nothing.
      expect(planned('delete from "waybill_webhook_deliveries" where "status" <>').join(" | ")).toMatch(
        /done_idx \(next_attempt_at<\?\)/
      )
      expect(planned('delete from "waybill_webhook_attempts" where "endpoint_id" in').join(" | ")).toMatch(
        /attempts_list_idx \(endpoint_id=\? AND at<\?\)/
      )

      // The prune takes the old log of every endpoint id the log holds, one whose endpoint is
      // gone included (an attempt recorded after its endpoint was deleted), and nothing newer.
      const log = (endpointId: string, at: number) =>
        handle
          .prepare(
            "insert into waybill_webhook_attempts (endpoint_id, event_id, attempt, at, status, ok, duration_ms, response) values (?, ?, 1, ?, 200, 1, 5, 'ok')"
          )
          .run(endpointId, `evt_${endpointId}_${at}`, at)
      const kept = WebhookStoreContract.endpoint()
      yield* stores.webhooks.insertEndpoint(kept)
      for (const [id, at] of [
        [kept.id, T - 10],
        [kept.id, T + 10],
        ["we_gone", T - 10],
        ["we_gone", T + 10],
        ["we_zz_gone", T - 5]
      ] as const)
        log(id, at)
      expect(yield* stores.webhooks.prune(T)).toBe(3)
      const left = handle.prepare("select endpoint_id, at from waybill_webhook_attempts").all()
      expect(left).toHaveLength(2)
      expect(left).toEqual(
        expect.arrayContaining([
          { endpoint_id: kept.id, at: T + 10 },
          { endpoint_id: "we_gone", at: T + 10 }
        ])
      )
    })
  )

  it.scoped("a claim never walks a shipment's later deliveries nor a disabled endpoint's backlog", () =>
    Effect.gen(function* () {
      const { handle, stores } = yield* recorded
      const T = Fixtures.baseTime
      const e = WebhookStoreContract.endpoint({ eventTypes: ["shipment.booked"] })
      yield* stores.webhooks.insertEndpoint(e)
      const trackNos = [Fixtures.trackNo(), Fixtures.trackNo()]
      for (const trackNo of trackNos)
        for (let i = 0; i < 5; i++)
          yield* stores.outbox.append(Fixtures.event({ customerNo: e.customerNo, trackNo, occurredAt: T }))
      /** The deliveries the claim's index holds: what a claim walks. */
      const walked = () =>
        (
          handle
            .prepare(
              "select track_no, sequence from waybill_webhook_deliveries indexed by waybill_webhook_deliveries_claimable_idx where status = 'pending' and claimable = 1 and next_attempt_at <= ? order by track_no"
            )
            .all(T + 10_000) as Array<{ track_no: string; sequence: number }>
        ).map((r) => [r.track_no, r.sequence])
      const sorted = [...trackNos].sort()
      // Ten pending deliveries, two of them claimable: each shipment's first.
      expect(walked()).toEqual(sorted.map((t) => [t, 1]))
      const [first] = yield* stores.webhooks.claimDue({ owner: "o", now: T, leaseMs: 1000, limit: 1 })
      yield* stores.webhooks.complete(delivered("o", first!, T))
      // Its shipment's next one took its place.
      expect(walked()).toEqual(sorted.map((t) => [t, t === first!.event.trackNo ? 2 : 1]))
      // Disabled (by hand or for failing 5 days): nothing of its backlog stays in the walk.
      yield* stores.webhooks.updateEndpoint({ ...e, enabled: false, disabledReason: "gone" })
      expect(walked()).toEqual([])
      yield* stores.webhooks.updateEndpoint(e)
      expect(walked()).toEqual(sorted.map((t) => [t, t === first!.event.trackNo ? 2 : 1]))
      expect(yield* stores.webhooks.noteHealth({ endpointId: e.id, ok: false, now: T + 1, disableAfterMs: 0 })).toBe(
        true
      )
      expect(walked()).toEqual([])
      // Deliveries a host of an earlier version queued carry no flag: the hourly prune's sweep
      // marks each shipment's first one, and only that one.
      yield* stores.webhooks.updateEndpoint(e)
      handle.prepare("update waybill_webhook_deliveries set claimable = 0").run()
      expect(walked()).toEqual([])
      yield* stores.webhooks.prune(T - 1)
      expect(walked()).toEqual(sorted.map((t) => [t, t === first!.event.trackNo ? 2 : 1]))
    })
  )
})
