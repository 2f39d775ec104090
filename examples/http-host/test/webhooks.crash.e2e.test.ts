/**
 * Crash safety with real processes: a dispatcher child is killed (SIGKILL) while a delivery is
 * in flight; a new one is started on the same database. Every event must arrive at least once,
 * and each shipment's events must first arrive in `sequence` order.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Accounts, EventOutbox, Webhooks } from "@waybill/core"
import { openDatabase, waybillLayer } from "../src/host.js"
import { allowList } from "../src/webhooks.js"
import { waitFor } from "./harness.js"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"

const hostDir = resolve(import.meta.dirname, "..")

const startChild = (dbFile: string, caFile: string) =>
  new Promise<ChildProcess>((ready, fail) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/webhookDispatcherChild.ts", dbFile, caFile, "1500"],
      {
        cwd: hostDir,
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("ready")) ready(child)
    })
    child.once("exit", (code) => fail(new Error(`dispatcher exited early (${code})`)))
  })

describe("webhook dispatcher crash safety", () => {
  it("a killed dispatcher loses nothing and keeps per-shipment order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waybill-crash-"))
    const scope = Effect.runSync(Scope.make())
    const children: Array<ChildProcess> = []
    try {
      const pems = await Effect.runPromise(certificate)
      const caFile = join(dir, "ca.pem")
      writeFileSync(caFile, pems.cert)
      const r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
      let hold = true
      let held = 0
      r.setHandler((_req, res) => {
        // The 6th request is never answered by the first dispatcher: it dies waiting.
        if (hold && r.received.length >= 6) {
          held++
          return
        }
        res.end("ok")
      })

      const dbFile = join(dir, "waybill.db")
      const database = await openDatabase(dbFile)
      const layer = waybillLayer(database.engine, { dbFile })
      const shipments = ["S1", "S2", "S3", "S4"]
      const ids = await Effect.runPromise(
        Effect.gen(function* () {
          const { account } = yield* Accounts.createAccount({ name: "Crash test" })
          yield* Webhooks.addEndpoint(
            { customerNo: account.customerNo, url: r.url, eventTypes: ["*"] },
            { allowPrivate: allowList(["127.0.0.1"]) }
          )
          const outbox = yield* EventOutbox
          const out: Array<string> = []
          for (let seq = 1; seq <= 5; seq++)
            for (const trackNo of shipments) {
              const e = yield* outbox.append({
                id: `evt_crash_${trackNo}_${seq}`,
                type: seq === 1 ? "shipment.booked" : "shipment.stop_arrived",
                customerNo: account.customerNo,
                trackNo,
                livemode: true,
                occurredAt: Date.now(),
                data: { track_no: trackNo, step: seq }
              })
              out.push(e.id)
            }
          return out
        }).pipe(Effect.provide(layer))
      )
      await database.close()

      const first = await startChild(dbFile, caFile)
      children.push(first)
      await waitFor("a delivery in flight", () => held > 0, 60_000)
      first.kill("SIGKILL")
      await new Promise((r) => first.once("exit", r))
      hold = false

      children.push(await startChild(dbFile, caFile))
      await waitFor(
        "every event",
        () => ids.every((id) => r.received.some((x) => x.headers["webhook-id"] === id)),
        60_000
      )

      for (const trackNo of shipments) {
        const seen: Array<number> = []
        for (const x of r.received) {
          const p = JSON.parse(x.body) as { data: { track_no: string }; sequence: number }
          if (p.data.track_no === trackNo && !seen.includes(p.sequence)) seen.push(p.sequence)
        }
        expect([trackNo, seen]).toEqual([trackNo, [1, 2, 3, 4, 5]])
      }
      // The delivery in flight at the crash went out again with the same webhook-id and bytes.
      const counts = new Map<string, Array<string>>()
      for (const x of r.received)
        counts.set(x.headers["webhook-id"]!, [...(counts.get(x.headers["webhook-id"]!) ?? []), x.body])
      const repeated = [...counts.values()].filter((bodies) => bodies.length > 1)
      expect(repeated.length).toBeGreaterThanOrEqual(1)
      for (const bodies of repeated) expect(new Set(bodies).size).toBe(1)
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
