/**
 * Group commit and `kill -9`: the real host, in a child process, takes bookings from many
 * concurrent clients and is killed (SIGKILL) while batches are in flight; then it is started
 * again on the same file. Every booking that was answered 200 must be in the database, with its
 * stops and its `shipment.booked` event: the host answers a booking only after the COMMIT that
 * holds it. Bookings cut off by the kill may or may not be there (nobody was told either way).
 */
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Accounts } from "@waybill/core"
import { openDatabase, waybillLayer } from "../src/host.js"
import { exited, startBookingHost } from "./bookingHost.js"
import { waitFor } from "./harness.js"
import { BOOKING_BODY } from "../bench/scenarios.js"

/**
 * `clients` concurrent loops of bookings until `stop()`: the tracking numbers answered 200, and
 * how many requests got no answer (cut off by the kill).
 */
const load = (url: string, apiKey: string, clients: number) => {
  const acknowledged: Array<string> = []
  let cutOff = 0
  let other = 0
  let running = true
  const client = async () => {
    while (running) {
      try {
        const response = await fetch(`${url}/api/v1/order/json/`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
          body: BOOKING_BODY
        })
        const body = (await response.json()) as { data?: { shipments?: Array<{ track_no?: string }> } }
        const trackNo = body.data?.shipments?.[0]?.track_no
        if (response.status === 200 && typeof trackNo === "string") acknowledged.push(trackNo)
        else other++
      } catch {
        // The connection died with the host (or the answer was cut off): not acknowledged. The
        // error may arrive after the test has seen the process exit and called stop(), so it is
        // counted whatever \`running\` says: only the kill ends requests with an error.
        cutOff++
        return
      }
    }
  }
  const done = Promise.all(Array.from({ length: clients }, client))
  return {
    acknowledged,
    get cutOff() {
      return cutOff
    },
    get other() {
      return other
    },
    stop: async () => {
      running = false
      await done
    }
  }
}

describe("booking crash safety (group commit)", () => {
  it("a host killed with SIGKILL under concurrent bookings loses none it answered 200", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waybill-booking-crash-"))
    const children: Array<ChildProcess> = []
    try {
      const dbFile = join(dir, "waybill.db")
      const database = await openDatabase(dbFile)
      const created = await Effect.runPromise(
        Accounts.createAccount({ name: "Crash test" }).pipe(Effect.provide(waybillLayer(database.engine, { dbFile })))
      )
      await database.close()
      const apiKey = Redacted.value(created.liveKey)

      const acknowledged: Array<string> = []
      for (let round = 0; round < 2; round++) {
        const { child, url } = await startBookingHost(dbFile)
        children.push(child)
        const traffic = load(url, apiKey, 48)
        // Kill in the middle of sustained load, at a moment of the host's choosing, not ours.
        const target = 150 + round * 50 + Math.floor(Math.random() * 100)
        await waitFor(`${target} acknowledged bookings`, () => traffic.acknowledged.length >= target, 60_000)
        child.kill("SIGKILL")
        await exited(child)
        await traffic.stop()
        expect(traffic.other).toBe(0) // nothing but 200s until the kill
        expect(traffic.cutOff).toBeGreaterThan(0) // requests were in flight when it died
        acknowledged.push(...traffic.acknowledged)
      }

      // Started again on the same file: it recovers the WAL and serves.
      const { child, url } = await startBookingHost(dbFile)
      children.push(child)
      const after = load(url, apiKey, 1)
      await waitFor("a booking after the restart", () => after.acknowledged.length >= 1, 60_000)
      await after.stop()
      child.kill("SIGTERM")
      await exited(child)

      const sqlite = new Database(dbFile, { readonly: true })
      try {
        const stored = new Set(
          (sqlite.prepare("select track_no from waybill_shipments").all() as Array<{ track_no: string }>).map(
            (r) => r.track_no
          )
        )
        const missing = acknowledged.filter((t) => !stored.has(t))
        expect(missing, `acknowledged but lost: ${missing.slice(0, 10).join(", ")}`).toEqual([])
        expect(stored.has(after.acknowledged[0]!)).toBe(true)
        // Each acknowledged booking is whole: its stops and its booked event committed with it.
        const stops = sqlite.prepare("select count(*) as n from waybill_stops where track_no = ?")
        const events = sqlite.prepare(
          "select count(*) as n from waybill_events where track_no = ? and type = 'shipment.booked'"
        )
        for (const trackNo of acknowledged) {
          expect((stops.get(trackNo) as { n: number }).n).toBe(2)
          expect((events.get(trackNo) as { n: number }).n).toBe(1)
        }
        expect(new Set(acknowledged).size).toBe(acknowledged.length)
      } finally {
        sqlite.close()
      }
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
