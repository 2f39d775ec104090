/**
 * In-process documents micro-benchmark: the example host's handler (as `serve` composes it,
 * with the WAL checkpointer) called in a loop without a socket, so the CPU time per documents
 * lookup (100 orders, one document each) and per download is Waybill's own. Also prints the
 * process's memory (`process.memoryUsage()` and the peak RSS, VmHWM) after each phase.
 *
 *   pnpm build && cd examples/http-host && node --import tsx bench/inprocDocs.ts \
 *     [--n 1000] [--concurrency 32] [--profile lookup|core|download] [--out file.cpuprofile] [--rotated] [--keep] [--bound]
 *     [--steps] [--sql] [--core] [--allocations lookup|core|download] [--pretenuring] [--fiber-set]
 *
 * `--bound` also times, on the same database, what any implementation of Waybill's lookup design
 * must do by hand (`bench/lookupBound.ts`: its query, a hundred tickets and the grant's row).
 * `--core` also times `Documents.lookup` called directly with the key's principal (no handler, no
 * authentication, no JSON), so the handler's share of a lookup is the difference.
 * `--allocations lookup|core|download` samples every allocation of that phase, by package and function.
 * `--sql` times every SQLite statement and lists them by time per request after each phase.
 * `--pretenuring` keeps V8's allocation-site pretenuring on (`serve` turns it off), and
 * `--fiber-set` Effect's `Set` of root fibers (`serve` uses a list, `src/fiberRoots.ts`), to compare.
 * `--rotated` uploads JPEGs saved with a rotation of 90 degrees instead of PDFs, so downloads go
 * through the image rendition. `--steps` prints the Effect runtime steps per request, by kind
 * (`bench/steps.ts`; the counting slows the run, so its times are not the request's). This is a tool for finding where the time goes; `pnpm bench`
 * remains the measurement.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AccountStore, Accounts, Config, Documents } from "@waybill/core"
import { createHandler } from "@waybill/http"
import { prepareProcess, openDatabase, waybillLayer } from "../src/host.js"
import { loggingLayer } from "../src/observability.js"
import { sampleShipment } from "../src/sample.js"
import { benchLog } from "./logSink.js"
import { startProfiler } from "./cpuprofile.js"
import { printAllocations, startAllocationSampling } from "./allocations.js"
import { measureLoop } from "./inprocLoop.js"
import { BENCH_OPERATOR_TOKEN, BENCH_PDF, LOOKUP_ORDERS } from "./documentScenarios.js"
import { readProcMemory } from "./proc.js"
import { measureLookupBound } from "./lookupBound.js"
import { printSteps, stepCounter } from "./steps.js"

// As `serve` runs; `--pretenuring` and `--fiber-set` keep V8's and Effect's defaults, to compare.
prepareProcess({ pretenuring: process.argv.includes("--pretenuring"), fiberSet: process.argv.includes("--fiber-set") })

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : (process.argv[i + 1] ?? "")
}
const N = Number(arg("n") ?? 1000)
const CONCURRENCY = Number(arg("concurrency") ?? 32)
const PROFILE = arg("profile")
const ROTATED = process.argv.includes("--rotated")
const SQL = process.argv.includes("--sql")

/**
 * CPU time per SQL text, when `--sql`: every statement the host prepares is timed where it runs
 * (process CPU, not wall time: the machine is shared, and a preempted statement would count the
 * other process's time).
 */
const sqlTimes = new Map<string, { calls: number; us: number }>()
const cpuNow = () => {
  const { system, user } = process.cpuUsage()
  return user + system
}
if (SQL) {
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function (this: Database.Database, text: string) {
    const statement = prepare.call(this, text) as unknown as Record<string, (...a: Array<unknown>) => unknown>
    for (const method of ["run", "get", "all"]) {
      const original = statement[method]!
      statement[method] = (...args: Array<unknown>) => {
        const start = cpuNow()
        try {
          return original.apply(statement, args)
        } finally {
          const entry = sqlTimes.get(text) ?? { calls: 0, us: 0 }
          entry.calls++
          entry.us += cpuNow() - start
          sqlTimes.set(text, entry)
        }
      }
    }
    return statement as unknown as Database.Statement
  } as typeof prepare
}
const printSql = (n: number, name: string) => {
  if (!SQL) return
  const rows = [...sqlTimes.entries()].sort((a, b) => b[1].us - a[1].us)
  let total = 0
  for (const [, t] of rows) total += t.us
  console.log(`${name}: SQL total ${(total / n).toFixed(1)} us CPU/request`)
  for (const [text, t] of rows.slice(0, 12))
    console.log(
      `${(t.us / n).toFixed(1).padStart(7)} us ${(t.calls / n).toFixed(2).padStart(5)} calls  ${text.replace(/\s+/g, " ").slice(0, 140)}`
    )
  sqlTimes.clear()
}

const memory = (phase: string) => {
  const m = process.memoryUsage()
  const mib = (n: number) => (n / 1048576).toFixed(1)
  const peak = readProcMemory(process.pid)?.vmHwmKiB
  console.log(
    `${phase.padEnd(22)} rss ${mib(m.rss)} MiB, peak ${peak === undefined ? "?" : (peak / 1024).toFixed(1)} MiB, ` +
      `heap ${mib(m.heapUsed)}/${mib(m.heapTotal)} MiB, external ${mib(m.external)} MiB`
  )
}
memory("start")

const dir = mkdtempSync(join(tmpdir(), "waybill-inproc-docs-"))
const dbFile = join(dir, "bench.db")
const database = await openDatabase(dbFile, { backgroundCheckpoints: true })
const config = {
  ...Config.defaults,
  limits: { ...Config.defaults.limits, perKey: { requests: Number.MAX_SAFE_INTEGER, windowSeconds: 60 } }
}
const layer = waybillLayer(database.engine, { dbFile, config })
const created = await Effect.runPromise(Accounts.createAccount({ name: "Bench" }).pipe(Effect.provide(layer)))
const steps = process.argv.includes("--steps") ? stepCounter(true) : undefined
const handler = createHandler(Layer.mergeAll(layer, loggingLayer(benchLog()), steps?.layer ?? Layer.empty), {
  allowInsecureHttp: true,
  operatorToken: Redacted.make(BENCH_OPERATOR_TOKEN)
})
const key = Redacted.value(created.liveKey)
memory("host ready")

const headersOf = (entries: Record<string, string>) => {
  const map = new Map(Object.entries(entries).map(([k, v]) => [k.toLowerCase(), v]))
  return { get: (name: string) => map.get(name.toLowerCase()) ?? null }
}
const call = (method: string, path: string, headers: Record<string, string>, body?: Uint8Array) =>
  handler.handleRaw(
    {
      method,
      url: `http://127.0.0.1${path}`,
      headers: headersOf({ host: "127.0.0.1", ...headers }),
      body: null,
      ...(body === undefined ? {} : { bodyBytes: body })
    },
    { remoteAddress: "127.0.0.1" }
  )
const text = async (body: unknown): Promise<string> => {
  if (body === null || body === undefined) return ""
  if (body instanceof Uint8Array) return new TextDecoder().decode(body)
  if (typeof body === "string") return body
  return new Response(body as ReadableStream<Uint8Array>).text()
}
/** Reads (and so drains) whatever body a reply has. */
const drain = async (body: unknown): Promise<number> => {
  if (body === null || body === undefined) return 0
  if (body instanceof Uint8Array) return body.byteLength
  if (typeof body === "string") return body.length
  const reader = (body as ReadableStream<Uint8Array>).getReader()
  let n = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.byteLength
  return n
}

const jpeg = async (): Promise<Uint8Array> => {
  const sharp = (await import("sharp")).default
  return new Uint8Array(
    await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .jpeg()
      .toBuffer()
  )
}

const booking = new TextEncoder().encode(
  JSON.stringify({
    data: { jsonstrn: "bench-docs", shipments: Array.from({ length: LOOKUP_ORDERS }, () => sampleShipment()) }
  })
)
const booked = await call(
  "POST",
  "/api/v1/order/json/",
  { "content-type": "application/json", authorization: `Bearer ${key}` },
  booking
)
const trackNos = (
  JSON.parse(await text(booked.body)) as { data: { shipments: Array<{ track_no: string }> } }
).data.shipments.map((s) => s.track_no)
const file = ROTATED ? await jpeg() : BENCH_PDF
for (const trackNo of trackNos) {
  const r = await call(
    "POST",
    `/ops/v1/orders/${trackNo}/documents/?type=bol&id=BOL-${trackNo}${ROTATED ? "&rotation=90" : ""}`,
    { authorization: `Bearer ${BENCH_OPERATOR_TOKEN}`, "content-type": ROTATED ? "image/jpeg" : "application/pdf" },
    file
  )
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${await text(r.body)}`)
}
memory("prepared")

const lookupPath = `/api/v1/order/docs/?control_no=${trackNos.join(",")}`
const auth = { authorization: `Bearer ${key}` }
const first = JSON.parse(await text((await call("GET", lookupPath, auth)).body)) as {
  data: { orders: Array<{ documents: Array<{ uri: string }> }> }
}
if (first.data.orders.length !== LOOKUP_ORDERS) throw new Error("lookup: not 100 orders")
const uri = new URL(first.data.orders[0]!.documents[0]!.uri)
const downloadPath = uri.pathname + uri.search

const lookupOnce = async () => {
  const r = await call("GET", lookupPath, auth)
  if (r.status !== 200) throw new Error(`lookup: ${r.status}`)
  await drain(r.body)
}
const downloadOnce = async () => {
  const r = await call("GET", downloadPath, {})
  if (r.status !== 200) throw new Error(`download: ${r.status} ${await text(r.body)}`)
  const n = await drain(r.body)
  if (n === 0) throw new Error("download: empty body")
}

const ALLOCATIONS = arg("allocations")
const run = async (name: string, once: () => Promise<void>, n: number, profile: boolean) => {
  const profiler = profile ? await startProfiler() : undefined
  const sampling =
    ALLOCATIONS !== undefined && !name.endsWith("warm-up") && name.startsWith(ALLOCATIONS)
      ? await startAllocationSampling()
      : undefined
  const before = steps === undefined ? undefined : { steps: steps.steps(), kinds: steps.kinds() }
  sqlTimes.clear()
  const { cpuUs, wallUs } = await measureLoop(n, CONCURRENCY, once)
  console.log(
    `${name}: ${n} requests, concurrency ${CONCURRENCY}: ${wallUs.toFixed(0)} us wall, ${cpuUs.toFixed(0)} us CPU per request`
  )
  if (steps !== undefined && before !== undefined && !name.endsWith("warm-up")) printSteps(steps, before, n, name)
  if (!name.endsWith("warm-up")) printSql(n, name)
  if (profiler !== undefined) console.log(`CPU profile: ${await profiler.stop(arg("out") ?? `${name}.cpuprofile`)}`)
  if (sampling !== undefined) printAllocations(await sampling.stop(), n, name)
}

await run("lookup warm-up", lookupOnce, Math.max(100, N / 5), false)
await run("lookup", lookupOnce, N, PROFILE === "lookup")
memory("after lookups")
if (process.argv.includes("--core")) {
  // Tracing off, as the handler runs a request without a tracer.
  const runtime = ManagedRuntime.make(Layer.mergeAll(layer, Layer.setTracerEnabled(false), steps?.layer ?? Layer.empty))
  const slot = await runtime.runPromise(
    Effect.flatMap(AccountStore, (s) => s.findSlotWithAccount(created.account.customerNo, "live"))
  )
  const principal = Option.getOrThrow(slot)
  const params = { control_no: [trackNos.join(",")], search_field: [], search_value: [], id: [] }
  const coreOnce = async () => {
    const r = await runtime.runPromise(Documents.lookup({ client: Option.none(), principal, params }))
    if (r.orders.length !== LOOKUP_ORDERS) throw new Error("core lookup: not 100 orders")
  }
  await run("core lookup warm-up", coreOnce, Math.max(100, N / 5), false)
  await run("core lookup (Documents.lookup)", coreOnce, N, PROFILE === "core")
  await runtime.dispose()
}
if (process.argv.includes("--bound")) {
  const b = measureLookupBound(dbFile, created.account.customerNo, trackNos, N)
  console.log(
    `lookup bound by hand: the joined query ${b.queryUs.toFixed(0)} us + ${b.documents} tickets (one AES-CTR keystream) ` +
      `${b.ticketsUs.toFixed(0)} us + the grant's row ${b.grantUs.toFixed(0)} us = ${b.totalUs.toFixed(0)} us per lookup`
  )
  console.log(
    `  other designs: the previous release's two queries ${b.previous.ordersUs.toFixed(0)} + ` +
      `${b.previous.documentsUs.toFixed(0)} us and ${b.documents} AES-GCM tickets ${b.previous.ticketsUs.toFixed(0)} us; ` +
      `stateless tickets (one AES-CTR pass + an HMAC-SHA-256 each) ${b.statelessTicketsUs.toFixed(0)} us`
  )
}
await run("download warm-up", downloadOnce, Math.max(100, N / 5), false)
await run("download", downloadOnce, N, PROFILE === "download")
memory("after downloads")

await handler.dispose()
await database.close()
if (process.argv.includes("--keep")) console.log(`database kept: ${dbFile}`)
else rmSync(dir, { recursive: true, force: true })
