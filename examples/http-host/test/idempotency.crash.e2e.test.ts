/**
 * `Idempotency-Key` and a crash: the real host, in a child process, commits a booking and is
 * killed (SIGKILL) before it writes the answer. The client heard nothing, so it retries with the
 * same key on a host started again on the same file: the retry replays the committed booking
 * (its answer was stored in the booking's own transaction) and books nothing twice.
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
import { shipment } from "./harness.js"

describe("Idempotency-Key across a crash", () => {
  it("a host killed between the booking's commit and its answer: the retry replays, nothing is booked twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waybill-idem-crash-"))
    const children: Array<ChildProcess> = []
    try {
      const dbFile = join(dir, "waybill.db")
      const database = await openDatabase(dbFile)
      const created = await Effect.runPromise(
        Accounts.createAccount({ name: "Crash test" }).pipe(Effect.provide(waybillLayer(database.engine, { dbFile })))
      )
      await database.close()
      const headers = {
        "content-type": "application/json",
        authorization: `Bearer ${Redacted.value(created.liveKey)}`,
        "idempotency-key": "order-42-attempt"
      }
      const body = JSON.stringify({ data: { shipments: [shipment({ BillingReference: "CRASH-42" })] } })

      const first = await startBookingHost(dbFile, "crash-before-answer")
      children.push(first.child)
      const lost = await fetch(`${first.url}/api/v1/order/json/`, { method: "POST", headers, body }).then(
        () => "answered",
        () => "no answer"
      )
      await exited(first.child)
      expect(lost).toBe("no answer")
      expect(first.child.signalCode).toBe("SIGKILL")

      const booked = () => {
        const sqlite = new Database(dbFile, { readonly: true })
        try {
          return (
            sqlite
              .prepare("select track_no from waybill_shipments where billing_reference = ?")
              .all("CRASH-42") as Array<{ track_no: string }>
          ).map((r) => r.track_no)
        } finally {
          sqlite.close()
        }
      }
      // The booking committed before the kill.
      const committed = booked()
      expect(committed).toHaveLength(1)

      const second = await startBookingHost(dbFile)
      children.push(second.child)
      const retry = await fetch(`${second.url}/api/v1/order/json/`, { method: "POST", headers, body })
      expect(retry.status).toBe(200)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      const answer = (await retry.json()) as { data: { shipments: Array<{ track_no: string }> } }
      expect(answer.data.shipments[0]!.track_no).toBe(committed[0])
      second.child.kill("SIGTERM")
      await exited(second.child)
      expect(booked()).toEqual(committed)
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
