/**
 * Webhook delivery bench: drains a backlog of events (default 10,000, over 1,000 shipments) to
 * a local HTTPS receiver through the real dispatcher, transport (TLS, SSRF guard with the
 * loopback allow-list) and SQLite storage, and reports throughput, drain time and memory
 * sampled during the drain (it should stay flat: the dispatcher holds one batch at a time).
 *
 *   pnpm --filter @waybill/example-http-host exec tsx bench/webhooks.ts
 *
 * `BENCH_WEBHOOK_EVENTS`, `BENCH_WEBHOOK_SHIPMENTS`, `BENCH_WEBHOOK_CONCURRENCY` change the sizes.
 * Receiver and dispatcher share this process (and its CPU), so the figure is a floor.
 */
import { mkdtempSync, rmSync } from "node:fs"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Accounts, Entropy, EventOutbox, Transactor, Webhooks } from "@waybill/core"
import { StorageKysely } from "@waybill/storage-kysely"
import { certificate } from "@waybill/testkit/webhook-receiver"
import { openDatabase, waybillLayer } from "../src/host.js"
import { keyRingLayer, loadMasterSecret } from "../src/secrets.js"
import { allowList, transportLayer } from "../src/webhooks.js"

const EVENTS = Number(process.env["BENCH_WEBHOOK_EVENTS"] ?? 10_000)
const SHIPMENTS = Number(process.env["BENCH_WEBHOOK_SHIPMENTS"] ?? 1_000)
const CONCURRENCY = Number(process.env["BENCH_WEBHOOK_CONCURRENCY"] ?? 16)

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-bench-webhooks-"))
  // The tests' self-signed certificate (valid for 127.0.0.1); a counting receiver of its own.
  const pems = await Effect.runPromise(certificate)
  let received = 0
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    req.resume()
    req.on("end", () => {
      received++
      res.end("ok")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`

  const dbFile = join(dir, "waybill.db")
  const database = await openDatabase(dbFile)
  try {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { account } = yield* Accounts.createAccount({ name: "Bench" })
        yield* Webhooks.addEndpoint(
          { customerNo: account.customerNo, url, eventTypes: ["*"] },
          { allowPrivate: allowList(["127.0.0.1"]) }
        )
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        const perShipment = Math.ceil(EVENTS / SHIPMENTS)
        let n = 0
        for (let s = 0; s < SHIPMENTS && n < EVENTS; s++) {
          const trackNo = String(10_000_000 + s)
          yield* tx.withTransaction(
            Effect.forEach(Array.from({ length: Math.min(perShipment, EVENTS - n) }), (_, i) =>
              outbox.append({
                id: `evt_bench_${trackNo}_${i + 1}`,
                type: i === 0 ? "shipment.booked" : "shipment.stop_arrived",
                customerNo: account.customerNo,
                trackNo,
                livemode: true,
                occurredAt: Date.now(),
                data: { track_no: trackNo, state: "assigned", stop: i, role: "stop" }
              })
            )
          )
          n += Math.min(perShipment, EVENTS - n)
        }
      }).pipe(Effect.provide(waybillLayer(database.engine, { dbFile })))
    )

    const layer = Layer.mergeAll(
      StorageKysely.layer(database.engine),
      Entropy.webCrypto,
      keyRingLayer(loadMasterSecret(`${dbFile}.secret`)),
      transportLayer({ allowPrivate: ["127.0.0.1"], ca: [pems.cert] })
    )
    const samples: Array<{ rss: number; heap: number }> = []
    const sampler = setInterval(() => {
      const m = process.memoryUsage()
      samples.push({ rss: m.rss, heap: m.heapUsed })
    }, 250)
    // Raw heap peaks include garbage not yet collected; what must stay flat is what survives a
    // full collection. With --expose-gc (as `pnpm bench` runs it) that is sampled every second.
    const gc = (globalThis as { gc?: () => void }).gc
    const retained: Array<number> = []
    const retainedSampler =
      gc === undefined
        ? undefined
        : setInterval(() => {
            gc()
            retained.push(process.memoryUsage().heapUsed)
          }, 1000)
    const started = performance.now()
    let rounds = 0
    await Effect.runPromise(
      Effect.gen(function* () {
        for (;;) {
          const r = yield* Webhooks.dispatchOnce({ owner: "bench", concurrency: CONCURRENCY, batch: 4 * CONCURRENCY })
          rounds++
          if (r.claimed === 0) return
        }
      }).pipe(Effect.provide(layer))
    )
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    if (retainedSampler !== undefined) clearInterval(retainedSampler)
    const rthird = Math.max(1, Math.floor(retained.length / 3))
    const mean = (xs: Array<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
    const third = Math.max(1, Math.floor(samples.length / 3))
    const peak = (xs: typeof samples, k: "rss" | "heap") => Math.max(...xs.map((x) => x[k]))
    const result = {
      events: EVENTS,
      shipments: SHIPMENTS,
      concurrency: CONCURRENCY,
      received,
      drainSeconds: Number(seconds.toFixed(2)),
      deliveriesPerSecond: Math.round(received / seconds),
      rounds,
      heapFirstThirdPeak: mb(peak(samples.slice(0, third), "heap")),
      heapLastThirdPeak: mb(peak(samples.slice(-third), "heap")),
      rssPeak: mb(peak(samples, "rss")),
      retainedHeapFirstThird: gc === undefined ? "run with --expose-gc" : mb(mean(retained.slice(0, rthird))),
      retainedHeapLastThird: gc === undefined ? "run with --expose-gc" : mb(mean(retained.slice(-rthird)))
    }
    console.log(JSON.stringify(result, null, 2))
    if (received < EVENTS) throw new Error(`only ${received} of ${EVENTS} deliveries arrived`)
  } finally {
    await database.close()
    server.closeAllConnections()
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
