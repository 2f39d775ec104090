/**
 * In-process booking micro-benchmark: the example host's handler, called in a loop without a
 * socket, so the time per booking is Waybill's own (no HTTP server, no load generator). With
 * `--sql` every SQL statement is timed and the statements are listed by total time.
 *
 *   pnpm build && cd examples/http-host && node --import tsx bench/inproc.ts \
 *     [--n 4000] [--sql] [--concurrency 32]
 *     [--profile out.cpuprofile] [--allocations] [--promoted] [--steps] [--fetch] [--quiet-logs]
 *     [--pretenuring] [--fiber-set]
 *
 * `--profile` writes a CPU profile of the measured run (summarize it with bench/profile.ts);
 * `--allocations` prints the bytes a booking allocates, by package (`bench/allocations.ts`);
 * `--promoted` prints only the bytes that outlived a young-generation collection (promoted to
 * the old generation, or still alive), by package and allocating function;
 * `--pretenuring` keeps V8's allocation-site pretenuring on (`serve` turns it off, see
 * `src/pretenuring.ts`), to compare; `--fiber-set` keeps Effect's `Set` of root fibers
 * (`serve` uses a list, see `src/fiberRoots.ts`);
 * `--steps` prints the Effect runtime steps a booking takes, by kind (`bench/steps.ts`; the
 * counting slows the run, so its times are not the booking's);
 * `--fetch` calls `handler(Request)` (what Hono, Bun or Deno use) instead of `handleRaw` with a
 * plain request and body bytes (what `@waybill/http-node` does, and what `pnpm bench` measures).
 *
 * This is a tool for finding where the time goes; `pnpm bench` remains the measurement.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Accounts, Config } from "@waybill/core"
import { createHandler } from "@waybill/http"
import { migrate, sqliteEngine, type SqliteHandle } from "@waybill/storage-kysely"
import { prepareProcess, waybillLayer } from "../src/host.js"
import { loggingLayer } from "../src/observability.js"
import { benchLog } from "./logSink.js"
import { SAFETY_NET_PAGES, startCheckpointer } from "../src/checkpointer.js"
import { startProfiler } from "./cpuprofile.js"
import { printAllocations, startAllocationSampling } from "./allocations.js"
import { measureLoop } from "./inprocLoop.js"
import { BOOKING_BODY } from "./scenarios.js"
import { printSteps, stepCounter } from "./steps.js"

// As `serve` runs; `--pretenuring` and `--fiber-set` keep V8's and Effect's defaults, to compare.
prepareProcess({ pretenuring: process.argv.includes("--pretenuring"), fiberSet: process.argv.includes("--fiber-set") })

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : (process.argv[i + 1] ?? "")
}
const N = Number(arg("n") ?? 4000)
const CONCURRENCY = Number(arg("concurrency") ?? 32)
const SQL = process.argv.includes("--sql")

const sqlTimes = new Map<string, { calls: number; ns: bigint }>()
const timed = (sql: string, statement: Record<string, unknown>): unknown =>
  new Proxy(statement, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown
      if (typeof value !== "function" || !["run", "get", "all"].includes(String(property))) {
        return typeof value === "function" ? (value as (...a: Array<unknown>) => unknown).bind(target) : value
      }
      return (...args: Array<unknown>) => {
        const start = process.hrtime.bigint()
        try {
          return (value as (...a: Array<unknown>) => unknown).apply(target, args)
        } finally {
          const entry = sqlTimes.get(sql) ?? { calls: 0, ns: 0n }
          entry.calls++
          entry.ns += process.hrtime.bigint() - start
          sqlTimes.set(sql, entry)
        }
      }
    }
  })

const dir = mkdtempSync(join(tmpdir(), "waybill-inproc-"))
const dbFile = join(dir, "bench.db")
const sqlite = new Database(dbFile)
sqlite.pragma("journal_mode = WAL")
sqlite.pragma("synchronous = NORMAL")
sqlite.pragma("foreign_keys = ON")
// As `serve` runs it (src/host.ts `openDatabase`): WAL checkpoints by the checkpointer, not in commits.
sqlite.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`)
const checkpointer = startCheckpointer(dbFile)
const driver = SQL
  ? new Proxy(sqlite, {
      get(target, property) {
        if (property === "prepare")
          return (sql: string) => timed(sql, target.prepare(sql) as unknown as Record<string, unknown>)
        const value = Reflect.get(target, property) as unknown
        return typeof value === "function" ? (value as (...a: Array<unknown>) => unknown).bind(target) : value
      }
    })
  : sqlite
const db = sqliteEngine(driver as SqliteHandle)
await Effect.runPromise(migrate(db))
const config = {
  ...Config.defaults,
  limits: { ...Config.defaults.limits, perKey: { requests: Number.MAX_SAFE_INTEGER, windowSeconds: 60 } }
}
const layer = waybillLayer(db, { dbFile, config })
const created = await Effect.runPromise(Accounts.createAccount({ name: "Bench" }).pipe(Effect.provide(layer)))
// BENCH_ACTIVITY=off: no account activity recording (what recording costs, compared).
const steps = process.argv.includes("--steps") ? stepCounter(true) : undefined
const handler = createHandler(Layer.mergeAll(layer, loggingLayer(benchLog()), steps?.layer ?? Layer.empty), {
  allowInsecureHttp: true,
  ...(process.env["BENCH_ACTIVITY"] === "off" ? { activity: false as const } : {})
})
const key = Redacted.value(created.liveKey)

const FETCH = process.argv.includes("--fetch")
const headerMap = new Map([
  ["content-type", "application/json"],
  ["authorization", `Bearer ${key}`],
  ["content-length", String(Buffer.byteLength(BOOKING_BODY))],
  ["host", "127.0.0.1"]
])
const rawHeaders = { get: (name: string) => headerMap.get(name.toLowerCase()) ?? null }
const bodyBytes = new TextEncoder().encode(BOOKING_BODY)

const once = async (): Promise<void> => {
  if (!FETCH) {
    const reply = await handler.handleRaw(
      { method: "POST", url: "http://127.0.0.1/api/v1/order/json/", headers: rawHeaders, body: null, bodyBytes },
      { remoteAddress: "127.0.0.1" }
    )
    if (reply.status !== 200) throw new Error(`booking failed: ${reply.status} ${String(reply.body)}`)
    return
  }
  const response = await handler.handler(
    new Request("http://127.0.0.1/api/v1/order/json/", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: BOOKING_BODY
    }),
    { remoteAddress: "127.0.0.1" }
  )
  const text = await response.text()
  if (response.status !== 200) throw new Error(`booking failed: ${response.status} ${text}`)
}

const run = async (n: number): Promise<number> => {
  const { cpuUs, wallUs } = await measureLoop(n, CONCURRENCY, once)
  console.log(
    `${n} bookings, concurrency ${CONCURRENCY}: ${wallUs.toFixed(0)} us wall/booking, ${cpuUs.toFixed(0)} us CPU/booking`
  )
  return wallUs
}

await run(Math.min(1000, N)) // warm-up
sqlTimes.clear()
const profileFile = arg("profile")
const profiler = profileFile === undefined ? undefined : await startProfiler()
const PROMOTED = process.argv.includes("--promoted")
const sampling =
  process.argv.includes("--allocations") || PROMOTED ? await startAllocationSampling(32 * 1024, PROMOTED) : undefined
const stepsBefore = steps === undefined ? undefined : { steps: steps.steps(), kinds: steps.kinds() }
await run(N)
if (steps !== undefined && stepsBefore !== undefined) printSteps(steps, stepsBefore, N, "booking")
if (profiler !== undefined && profileFile !== undefined) console.log(`CPU profile: ${await profiler.stop(profileFile)}`)
if (sampling !== undefined) printAllocations(await sampling.stop(), N, PROMOTED ? "booking, promoted only" : "booking")
if (SQL) {
  const rows = [...sqlTimes.entries()].sort((a, b) => Number(b[1].ns - a[1].ns))
  let total = 0n
  for (const [, t] of rows) total += t.ns
  console.log(`SQL total ${(Number(total) / 1000 / N).toFixed(1)} us/booking`)
  for (const [sql, t] of rows.slice(0, 25)) {
    console.log(
      `${(Number(t.ns) / 1000 / N).toFixed(1).padStart(7)} us/booking ${(t.calls / N).toFixed(2).padStart(5)} calls  ${sql.replace(/\s+/g, " ").slice(0, 150)}`
    )
  }
}
await handler.dispose()
await checkpointer.stop()
await db.close()
rmSync(dir, { recursive: true, force: true })
