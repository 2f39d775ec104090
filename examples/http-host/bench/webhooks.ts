/**
 * Webhook drain bench, one target per process: drains a backlog of events (default 10,000 over
 * 1,000 shipments) to a loopback HTTPS receiver (`@waybill/testkit/webhook-receiver`, in this
 * process) and prints one `RESULT {json}` line that run.ts (`pnpm bench`, scenario
 * `webhook-drain`) turns into the "webhook drain (10,000 events)" rows.
 *
 * - `waybill`: the real dispatcher (`Webhooks.runDispatcher`: outbox rows in SQLite, leases,
 *   signing, the `@waybill/webhook-fetch` transport with its SSRF guard and kept-alive
 *   connections, the outcome and the delivery log written per attempt).
 * - `handwritten`: what a careful hand-written sender does with none of that: node:https with a
 *   keep-alive Agent, the same Standard Webhooks envelopes signed with node:crypto, the same
 *   number of requests in flight, each shipment's events in order, nothing stored.
 *
 *   BENCH_SCENARIOS=webhook-drain pnpm bench          (both targets, in the report)
 *   cd examples/http-host && node --import tsx --expose-gc bench/webhooks.ts waybill
 *
 * `BENCH_WEBHOOK_EVENTS`, `BENCH_WEBHOOK_SHIPMENTS`, `BENCH_WEBHOOK_CONCURRENCY` change the sizes;
 * `BENCH_WEBHOOK_PROFILE=<file>` writes a CPU profile of the drain, `BENCH_WEBHOOK_ALLOCATIONS=1`
 * prints what a delivery allocates, by package, `BENCH_WEBHOOK_STEPS=1` the Effect runtime steps a
 * delivery takes, by kind (`bench/steps.ts`; the counting slows the drain).
 * Receiver and sender share the process (and its CPU), alike for both targets.
 *
 * The run checks what it measured: every event arrives exactly once, with a signature the
 * npm `standardwebhooks` package accepts (a sample), in `sequence` order per shipment, and (for
 * Waybill) every delivery is recorded as delivered. Anything else is listed in `problems`.
 */
import { createHmac } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import * as https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { Accounts, Entropy, EventOutbox, Transactor, Webhooks, WebhookSignature } from "@waybill/core"
import { StorageKysely } from "@waybill/storage-kysely"
import { certificate, type Received, receiver } from "@waybill/testkit/webhook-receiver"
import { openDatabase, waybillLayer } from "../src/host.js"
import { printAllocations, startAllocationSampling } from "./allocations.js"
import { startProfiler } from "./cpuprofile.js"
import { printSteps, stepCounter } from "./steps.js"
import type { WebhookDrainMeasurement, WebhookTarget } from "./report.js"
import { keyRingLayer, loadMasterSecret } from "../src/secrets.js"
import { allowList, transportLayer } from "../src/webhooks.js"

const WEBHOOK_TARGETS: ReadonlyArray<WebhookTarget> = ["waybill", "handwritten"]
type WebhookDrainResult = WebhookDrainMeasurement

const EVENTS = Number(process.env["BENCH_WEBHOOK_EVENTS"] ?? 10_000)
const SHIPMENTS = Number(process.env["BENCH_WEBHOOK_SHIPMENTS"] ?? 1_000)
const CONCURRENCY = Number(process.env["BENCH_WEBHOOK_CONCURRENCY"] ?? 16)
const DRAIN_TIMEOUT_MS = 10 * 60_000
/** `BENCH_WEBHOOK_STEPS=1`: the dispatcher's runtime counts its steps. */
const steps = process.env["BENCH_WEBHOOK_STEPS"] === "1" ? stepCounter(true) : undefined

const mib = (n: number) => n / 1024 / 1024

/** The bench's events: `perShipment` per shipment, in sequence order. */
const plan = () => {
  const perShipment = Math.ceil(EVENTS / SHIPMENTS)
  const out: Array<{ trackNo: string; n: number }> = []
  for (let s = 0; s < SHIPMENTS && out.length < EVENTS; s++) {
    const trackNo = String(10_000_000 + s)
    for (let i = 0; i < perShipment && out.length < EVENTS; i++) out.push({ trackNo, n: i })
  }
  return out
}

const dataOf = (trackNo: string, n: number) => ({ track_no: trackNo, state: "assigned", stop: n, role: "stop" })

/**
 * Counts what arrives, as it arrives: ids (exactly once), order per shipment, and a sample of
 * signatures verified. The receiver's list is emptied as it goes, so it holds no history.
 */
const tally = (r: { readonly received: Array<Received> }, secret: () => string | undefined) => {
  const ids = new Set<string>()
  const lastSequence = new Map<string, number>()
  const problems: Array<string> = []
  let duplicates = 0
  let outOfOrder = 0
  let verified = 0
  const take = () => {
    for (const x of r.received) {
      const id = x.headers["webhook-id"] ?? ""
      if (ids.has(id)) duplicates++
      ids.add(id)
      const m = /"sequence":(\d+),"data":\{"track_no":"(\d+)"/.exec(x.body)
      if (m === null) problems.push(`an unexpected body: ${x.body.slice(0, 120)}`)
      else {
        const sequence = Number(m[1])
        if (sequence <= (lastSequence.get(m[2]!) ?? 0)) outOfOrder++
        lastSequence.set(m[2]!, sequence)
      }
      if (verified < 20) {
        const s = secret()
        try {
          if (s === undefined) throw new Error("no secret")
          new StandardWebhook(s).verify(x.body, x.headers)
          verified++
        } catch (e) {
          problems.push(`a delivery failed standardwebhooks verification: ${String(e)}`)
          verified = 20
        }
      }
    }
    r.received.length = 0
  }
  return {
    take,
    count: () => ids.size + duplicates + r.received.length,
    problems: () => [
      ...problems.slice(0, 5),
      ...(duplicates > 0 ? [`${duplicates} deliveries arrived more than once`] : []),
      ...(outOfOrder > 0 ? [`${outOfOrder} deliveries arrived out of sequence order`] : []),
      ...(ids.size < EVENTS ? [`only ${ids.size} of ${EVENTS} events arrived`] : [])
    ]
  }
}

/**
 * Samples RSS, and (with --expose-gc) the heap retained after a full collection at 10% and 25%
 * of the drain (the first third) and at 75% and 90% (the last third). Sampling by progress, not
 * by time, gives both targets the same four forced collections: a collection every second would
 * cost the slower target more of its drain.
 */
const memory = (arrived: () => number) => {
  let rssPeak = process.memoryUsage().rss
  const gc = (globalThis as { gc?: () => void }).gc
  const points = [0.1, 0.25, 0.75, 0.9]
  const retained: Array<number> = []
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
    if (gc !== undefined && retained.length < points.length && arrived() >= points[retained.length]! * EVENTS) {
      gc()
      retained.push(process.memoryUsage().heapUsed)
    }
  }, 100)
  return () => {
    clearInterval(sampler)
    const mean = (xs: Array<number>) => (xs.length === 0 ? null : mib(xs.reduce((a, b) => a + b, 0) / xs.length))
    return {
      rssPeakMiB: mib(rssPeak),
      retainedHeapFirstThirdMiB: mean(retained.slice(0, 2)),
      retainedHeapLastThirdMiB: retained.length < 4 ? null : mean(retained.slice(2))
    }
  }
}

/** Waits until `done()`, checking every 20 ms (and taking what arrived meanwhile). */
const until = async (done: () => boolean, take: () => void): Promise<boolean> => {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  for (;;) {
    take()
    if (done()) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 20))
  }
}

const measure = async (
  target: WebhookTarget,
  drain: (arrived: () => number, take: () => void) => Promise<ReadonlyArray<string>>,
  t: ReturnType<typeof tally>
): Promise<WebhookDrainResult> => {
  // BENCH_WEBHOOK_PROFILE=<file>: a CPU profile of the drain alone (run with
  // --enable-source-maps to see .ts lines; summarize with bench/profile.ts).
  const profileFile = process.env["BENCH_WEBHOOK_PROFILE"]
  const profiler = profileFile === undefined ? undefined : await startProfiler()
  // BENCH_WEBHOOK_ALLOCATIONS=1: the bytes a delivery allocates, by package (bench/allocations.ts).
  const sampling = process.env["BENCH_WEBHOOK_ALLOCATIONS"] === "1" ? await startAllocationSampling() : undefined
  const stopMemory = memory(t.count)
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const problems = [...(await drain(t.count, t.take))]
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  if (profiler !== undefined && profileFile !== undefined) console.log(`profile: ${await profiler.stop(profileFile)}`)
  if (sampling !== undefined) printAllocations(await sampling.stop(), EVENTS, "delivery")
  // Only the dispatcher's runtime counts steps (its layer carries the counter).
  if (steps !== undefined && target === "waybill") printSteps(steps, { steps: 0, kinds: new Map() }, EVENTS, "delivery")
  t.take()
  problems.push(...t.problems())
  const received = t.count()
  return {
    target,
    events: EVENTS,
    shipments: SHIPMENTS,
    concurrency: CONCURRENCY,
    received,
    drainSeconds: seconds,
    deliveriesPerSec: received / seconds,
    cpuPercent: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100,
    ...stopMemory(),
    problems
  }
}

const runWaybill = async (pems: { readonly private: string; readonly cert: string }): Promise<WebhookDrainResult> => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-bench-webhooks-"))
  const scope = Effect.runSync(Scope.make())
  const dbFile = join(dir, "waybill.db")
  const database = await openDatabase(dbFile)
  try {
    const r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
    let secret: string | undefined
    const t = tally(r, () => secret)
    await Effect.runPromise(
      Effect.gen(function* () {
        const { account } = yield* Accounts.createAccount({ name: "Bench" })
        const created = yield* Webhooks.addEndpoint(
          { customerNo: account.customerNo, url: r.url, eventTypes: ["*"] },
          { allowPrivate: allowList(["127.0.0.1"]) }
        )
        secret = Redacted.value(created.secret)
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        const events = plan()
        for (let i = 0; i < events.length; i += 500) {
          yield* tx.withTransaction(
            Effect.forEach(events.slice(i, i + 500), ({ n, trackNo }) =>
              outbox.append({
                id: `evt_bench_${trackNo}_${n + 1}`,
                type: n === 0 ? "shipment.booked" : "shipment.stop_arrived",
                customerNo: account.customerNo,
                trackNo,
                livemode: true,
                occurredAt: Date.now(),
                data: dataOf(trackNo, n)
              })
            )
          )
        }
      }).pipe(Effect.provide(waybillLayer(database.engine, { dbFile })))
    )
    const layer = Layer.mergeAll(
      StorageKysely.layer(database.engine),
      Entropy.webCrypto,
      keyRingLayer(loadMasterSecret(`${dbFile}.secret`)),
      transportLayer({ allowPrivate: ["127.0.0.1"], ca: [pems.cert] }),
      steps?.layer ?? Layer.empty
    )
    const pending = () =>
      database.db
        .selectFrom("waybill_webhook_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("status", "!=", "delivered")
        .executeTakeFirstOrThrow()
        .then((row) => Number(row.n))
    return await measure(
      "waybill",
      async (arrived, take) => {
        const fiber = Effect.runFork(
          Webhooks.runDispatcher({
            owner: "bench",
            concurrency: CONCURRENCY,
            perEndpoint: CONCURRENCY,
            idle: "20 millis"
          }).pipe(Effect.provide(layer))
        )
        const all = await until(() => arrived() >= EVENTS, take)
        // The last outcomes are being written; the drain ends when the outbox is empty.
        let left = await pending()
        for (let i = 0; left > 0 && i < 500; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          left = await pending()
        }
        await Effect.runPromise(Fiber.interrupt(fiber))
        return [
          ...(all ? [] : ["the drain did not finish in time"]),
          ...(left > 0 ? [`${left} deliveries are not recorded as delivered`] : [])
        ]
      },
      t
    )
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Standard Webhooks v1 by hand: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
const signer = (secret: string) => {
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  return (id: string, timestamp: number, body: string) =>
    `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`
}

const runHandwritten = async (pems: {
  readonly private: string
  readonly cert: string
}): Promise<WebhookDrainResult> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
    const secret = WebhookSignature.formatSecret(globalThis.crypto.getRandomValues(new Uint8Array(32)))
    const t = tally(r, () => secret)
    const sign = signer(secret)
    // The same envelope bytes Waybill sends, built up front (Waybill stores them with the event).
    const shipments = new Map<string, Array<{ id: string; body: string }>>()
    for (const { n, trackNo } of plan()) {
      const id = `evt_bench_${trackNo}_${n + 1}`
      const body = `{"id":"${id}","type":"${n === 0 ? "shipment.booked" : "shipment.stop_arrived"}","timestamp":"${new Date().toISOString()}","livemode":true,"sequence":${n + 1},"data":${JSON.stringify(dataOf(trackNo, n))}}`
      const list = shipments.get(trackNo) ?? []
      list.push({ id, body })
      shipments.set(trackNo, list)
    }
    const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    const post = (id: string, body: string) =>
      new Promise<number>((resolve, reject) => {
        const bytes = Buffer.from(body)
        const timestamp = Math.floor(Date.now() / 1000)
        const req = https.request(r.url, {
          method: "POST",
          agent,
          ca: pems.cert,
          headers: {
            "content-type": "application/json",
            "content-length": String(bytes.length),
            "webhook-id": id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": sign(id, timestamp, body)
          }
        })
        req.on("error", reject)
        req.on("response", (res) => {
          res.resume()
          res.on("end", () => resolve(res.statusCode ?? 0))
        })
        req.end(bytes)
      })
    return await measure(
      "handwritten",
      async (arrived, take) => {
        // Shipments in parallel, each shipment's events in order, CONCURRENCY in flight.
        const queue = [...shipments.values()]
        let failed = 0
        const worker = async () => {
          for (let list = queue.shift(); list !== undefined; list = queue.shift()) {
            for (const e of list) if ((await post(e.id, e.body)) !== 200) failed++
          }
        }
        const taker = setInterval(take, 20)
        await Promise.all(Array.from({ length: CONCURRENCY }, worker))
        clearInterval(taker)
        await until(() => arrived() >= EVENTS, take)
        agent.destroy()
        return failed > 0 ? [`${failed} deliveries were not answered 200`] : []
      },
      t
    )
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const main = async () => {
  const target = process.argv[2]
  if (target !== "waybill" && target !== "handwritten")
    throw new Error(`usage: webhooks.ts <${WEBHOOK_TARGETS.join("|")}> (got ${String(target)})`)
  const pems = await Effect.runPromise(certificate)
  const result = target === "waybill" ? await runWaybill(pems) : await runHandwritten(pems)
  console.log(`RESULT ${JSON.stringify(result)}`)
}

await main()
