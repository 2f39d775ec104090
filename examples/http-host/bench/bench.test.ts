/**
 * The bench's own checks: its parsers and report, and that every target really answers the
 * booking scenario the same way over the same SQLite settings (in-process, one request each),
 * the ceiling with the same rows as Waybill; on PostgreSQL, that Waybill's host and the
 * PostgreSQL floor book on fresh databases (random names, dropped at the end) and leave the same
 * rows. Without a PostgreSQL server those fail on CI (`CI=true`) and are skipped elsewhere.
 * No load and no timing here; `pnpm bench` does that.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readConfig } from "./config.js"
import { nameFromSourceLine } from "./cpuprofile.js"
import { packageOf, startAllocationSampling } from "./allocations.js"
import { startCeiling } from "./ceiling.js"
import { startFloor } from "./floor.js"
import { startFloorPg } from "./floorPg.js"
import { migrateBenchDatabase } from "./pgSchema.js"
import { BENCH_POOL_SIZE, type BenchDatabase, benchServerUrl, createBenchDatabase } from "./postgres.js"
import { DEFAULT_POOL_SIZE } from "../src/host.js"
import { parseProcessStat, parseProcStat, parseProcStatus } from "./proc.js"
import { type CpuProfile, summarize } from "./profile.js"
import {
  ceilingLine,
  formatReport,
  formatWebhookDrain,
  type Measurement,
  ratioOf,
  ratiosOf,
  hostsLine,
  type RunReport,
  verdict,
  goalRows,
  medianRound,
  webhookDrainName,
  webhookRatioOf
} from "./report.js"
import {
  BOOKING_BODY,
  bookSingle,
  bookSinglePg,
  bookSinglePg2Hosts,
  checkSingleBooking,
  selectScenarios,
  type Scenario,
  selectsWebhookDrain,
  SHIPMENT,
  targetsOf
} from "./scenarios.js"
import { type RunningTarget, TARGET_NAMES, type TargetName } from "./target.js"
import { startWaybill } from "./waybill.js"
import { uncheckedFetch } from "../test/apiSchema.js"
import { postgresSuite } from "../test/postgresServer.js"

/**
 * Sends a scenario's request to a target. Waybill's answers go through `fetch`, which the test
 * setup checks against the OpenAPI document; a hand-written target answers only what the bench
 * checks (the floor leaves most fields out), so its answers are not held to the document.
 */
const sendBooking = async (
  scenario: Scenario,
  t: RunningTarget,
  isWaybill: boolean,
  apiKey: string,
  body?: string
): Promise<{ readonly status: number; readonly body: unknown }> => {
  const spec = scenario.request({ url: t.url, apiKey })
  const send = isWaybill ? fetch : uncheckedFetch
  const response = await send(t.url + spec.path, {
    method: spec.method,
    headers: spec.headers,
    body: body ?? spec.body!
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

describe("proc parsers", () => {
  it("reads VmHWM and VmRSS from /proc/<pid>/status", () => {
    const status = "Name:\tnode\nVmPeak:\t 1234 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t11\n"
    expect(parseProcStatus(status)).toEqual({ vmHwmKiB: 204800, vmRssKiB: 102400 })
    expect(parseProcStatus("Name:\tnode\n")).toEqual({})
  })

  it("reads busy and idle time from /proc/stat (iowait is idle, steal is busy)", () => {
    const stat = "cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 50 2 25 500 10 0 1 1 0 0\n"
    expect(parseProcStat(stat)).toEqual({ busyMs: (100 + 5 + 50 + 1 + 2 + 3) * 10, idleMs: (1000 + 20) * 10 })
    expect(parseProcStat("intr 1 2 3\n")).toBeUndefined()
  })

  it("reads a process's user + system time from /proc/<pid>/stat, whatever its name holds", () => {
    // utime 250 and stime 50 ticks (fields 14 and 15); the name has a space and a parenthesis.
    const stat = "4242 (postgres: x) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 1 0 100 0 0"
    expect(parseProcessStat(stat)).toBe(3000)
    expect(parseProcessStat("4242 (x) S")).toBeUndefined()
  })
})

describe("configuration", () => {
  it("defaults to 32 connections, 2 s warm-up, 10 s measured, every target, no profiling", () => {
    expect(readConfig({})).toEqual({
      durationSec: 10,
      warmupSec: 2,
      connections: 32,
      scenarios: undefined,
      targets: ["waybill", "floor", "ceiling"],
      profile: [],
      fromSource: false
    })
  })

  it("reads overrides and refuses nonsense", () => {
    const c = readConfig({
      BENCH_DURATION: "3",
      BENCH_CONNECTIONS: "8",
      BENCH_TARGETS: "floor",
      BENCH_PROFILE: "waybill"
    })
    expect([c.durationSec, c.connections, c.targets, c.profile]).toEqual([3, 8, ["floor"], ["waybill"]])
    expect(readConfig({ BENCH_TARGETS: "floor,waybill" }).targets).toEqual(["waybill", "floor"])
    expect(() => readConfig({ BENCH_DURATION: "ten" })).toThrow(/BENCH_DURATION/)
    expect(() => readConfig({ BENCH_CONNECTIONS: "0" })).toThrow(/BENCH_CONNECTIONS/)
    expect(() => readConfig({ BENCH_TARGETS: "nginx" })).toThrow(/BENCH_TARGETS/)
    expect(() => readConfig({ BENCH_PROFILE: "yes please" })).toThrow(/BENCH_PROFILE/)
  })

  it("selects scenarios by name", () => {
    expect(selectScenarios(undefined).map((s) => s.name)).toContain("book-single")
    expect(selectScenarios(" book-single ").map((s) => s.name)).toEqual(["book-single"])
    expect(() => selectScenarios("book-single,teleport")).toThrow(/teleport/)
    // The webhook drain is selected by the same list, and is no HTTP scenario.
    expect(selectScenarios("webhook-drain")).toEqual([])
    expect(selectsWebhookDrain("webhook-drain")).toBe(true)
    expect(selectsWebhookDrain(undefined)).toBe(true)
    expect(selectsWebhookDrain("book-single")).toBe(false)
    expect(() => selectsWebhookDrain("webhook-drain,teleport")).toThrow(/teleport/)
  })

  it("runs the PostgreSQL scenarios against waybill and the PostgreSQL floor, the two-host one on waybill only", () => {
    expect(selectScenarios("book-single-pg,book-single-pg-2hosts")).toEqual([bookSinglePg, bookSinglePg2Hosts])
    expect(targetsOf(bookSinglePg, TARGET_NAMES)).toEqual(["waybill", "floor"])
    expect(targetsOf(bookSinglePg2Hosts, TARGET_NAMES)).toEqual(["waybill"])
    expect([bookSinglePg.database, bookSinglePg2Hosts.database, bookSinglePg2Hosts.hosts]).toEqual([
      "postgres",
      "postgres",
      2
    ])
    // Same request as on SQLite: only the storage underneath differs.
    expect(bookSinglePg.request({ url: "http://a", apiKey: "k" })).toEqual(
      bookSingle.request({ url: "http://a", apiKey: "k" })
    )
    // The PostgreSQL floor's pool is as large as Waybill's default.
    expect(BENCH_POOL_SIZE).toBe(DEFAULT_POOL_SIZE)
  })
})

describe("the booking scenario's check", () => {
  const good = {
    data: {
      jsonstrn: "bench",
      shipments_with_errors: 0,
      shipments: [{ order: 1, result: "success", track_no: "12345678" }]
    },
    error: null
  }

  it("accepts one booked shipment", () => {
    expect(checkSingleBooking(200, good)).toEqual([])
    expect(bookSingle.quickCheck(JSON.stringify(good))).toBe(true)
  })

  it("names what is wrong", () => {
    expect(
      checkSingleBooking(401, { data: null, error: { message: "Access denied.", exception: null } }).join("\n")
    ).toMatch(/status 401[\s\S]*error is/)
    const failed = {
      ...good,
      data: { ...good.data, shipments: [{ order: 1, result: "error", track_no: "", errors: ["x"] }] }
    }
    expect(checkSingleBooking(200, failed).join("\n")).toMatch(/result is "error"[\s\S]*track_no/)
    expect(checkSingleBooking(200, "oops")).not.toEqual([])
    expect(bookSingle.quickCheck(JSON.stringify(failed))).toBe(false)
  })

  it("sends the same body to every target", () => {
    const a = bookSingle.request({ url: "http://a", apiKey: "k1" })
    const b = bookSingle.request({ url: "http://b", apiKey: "k2" })
    expect(a.body).toBe(BOOKING_BODY)
    expect(b.body).toBe(BOOKING_BODY)
    expect(JSON.parse(BOOKING_BODY)).toEqual({ data: { jsonstrn: "bench", shipments: [SHIPMENT] } })
    expect(a.headers["authorization"]).toBe("Bearer k1")
  })
})

describe("report", () => {
  const measurement = (target: TargetName, requestsPerSec: number, problems: Array<string> = []): Measurement => ({
    target,
    requestsPerSec,
    totalRequests: requestsPerSec * 10,
    durationSec: 10,
    latencyMs: { p50: 5, p99: 20, mean: 6, max: 40 },
    peakRssMiB: 100,
    non2xx: 0,
    errors: 0,
    statusCodes: { "200": requestsPerSec * 10 },
    serverCpuPercent: 99,
    serverCpuMicrosPerRequest: 1e6 / requestsPerSec,
    loadGeneratorCpuPercent: 30,
    otherCpuPercent: 1,
    rows: { shipments: requestsPerSec * 10, events: requestsPerSec * 10 },
    pragmas: {},
    cpuProfile: null,
    problems
  })

  it("computes the ratio and states it against the goal", () => {
    expect(ratioOf([measurement("waybill", 600), measurement("floor", 1000)])).toBeCloseTo(0.6)
    expect(ratioOf([measurement("floor", 1000)])).toBeNull()
    expect(verdict(0.6, true)).toMatch(/0\.60 \(goal >= 0\.50\): MEETS/)
    expect(verdict(0.2, true)).toMatch(/0\.20 .*BELOW/)
    expect(verdict(0.2, false)).toMatch(/INVALID/)
  })

  it("adds the ceiling's ratios when the ceiling ran, and only then", () => {
    const all = [measurement("waybill", 300), measurement("floor", 1000), measurement("ceiling", 600)]
    const ratios = ratiosOf(all)
    expect(ratios["waybill/floor"]).toBeCloseTo(0.3)
    expect(ratios["ceiling/floor"]).toBeCloseTo(0.6)
    expect(ratios["waybill/ceiling"]).toBeCloseTo(0.5)
    expect(ceilingLine(ratios)).toMatch(/ceiling\/floor = 0\.60 .*waybill\/ceiling = 0\.50/)
    expect(ratiosOf(all.slice(0, 2))).toEqual({ "waybill/floor": 0.3 })
    expect(ceilingLine(ratiosOf(all.slice(0, 2)))).toBeNull()
  })

  it("runs the documents scenarios without the ceiling, booking against every target", () => {
    const [book, lookup, download] = selectScenarios(undefined)
    expect(targetsOf(book!, TARGET_NAMES)).toEqual(["waybill", "floor", "ceiling"])
    expect(targetsOf(lookup!, TARGET_NAMES)).toEqual(["waybill", "floor"])
    expect(targetsOf(download!, ["floor", "ceiling"])).toEqual(["floor"])
  })

  /** A run of waybill and floor over `scenarios`, the way run.ts records one. */
  const reportOf = (scenarios: RunReport["scenarios"], valid: boolean): RunReport => ({
    startedAt: "2026-01-01T00:00:00.000Z",
    config: { durationSec: 10, warmupSec: 2, connections: 32, targets: ["waybill", "floor"], profiled: [] },
    environment: { node: "20", platform: "linux-x64", cpus: 2, cpuModel: "cpu", gitCommit: null, gitDirty: null },
    goalRatio: 0.5,
    scenarios,
    valid
  })

  it("prints one row per target and the problems of an invalid run", () => {
    const measurements = [measurement("waybill", 300, ["measured: 3 non-2xx answers"]), measurement("floor", 1000)]
    const report = reportOf(
      [{ scenario: "book-single", description: "", measurements, ratio: ratioOf(measurements), problems: [] }],
      false
    )
    const text = formatReport(report)
    expect(text).toMatch(/book-single\s+waybill\s+300\s/)
    expect(text).toMatch(/book-single\s+floor\s+1000\s/)
    expect(text).toMatch(/ratio waybill\/floor = 0\.30/)
    expect(text).toMatch(/problem \(waybill\): measured: 3 non-2xx answers/)
    expect(text).toMatch(/RUN INVALID/)
  })

  it("states every goal of the run in one table, each against its own bar, and says which did not run", () => {
    const scenario = (name: string, waybill: number, floor: number, rss: [number, number]) => {
      const ms = [
        { ...measurement("waybill", waybill), peakRssMiB: rss[0] },
        { ...measurement("floor", floor), peakRssMiB: rss[1] }
      ]
      return { scenario: name, description: "", measurements: ms, ratio: ratioOf(ms), problems: [] }
    }
    const report = reportOf(
      [
        scenario("book-single", 600, 1000, [150, 120]),
        // 0.6 meets booking's bar but not the download's (0.7)
        scenario("docs-download", 600, 1000, [200, 100]),
        // The PostgreSQL floor keeps its rows in the server: its RSS is left out of the RSS goal.
        scenario("book-single-pg", 400, 1000, [500, 60])
      ],
      true
    )
    const rows = goalRows(report)
    expect(rows.map((r) => [r[0], r[3]])).toEqual([
      ["book-single", "MEETS"],
      ["docs-lookup-100", "n/a"],
      ["docs-download", "BELOW"],
      ["book-single-pg", "BELOW"],
      ["peak RSS", "BELOW"],
      ["webhook drain", "n/a"]
    ])
    expect(rows[3]![1]).toMatch(/^0\.40 \(400 vs 1000 req\/s/)
    expect(rows[4]![1]).toMatch(/^2\.00x .*docs-download/)
    expect(formatReport(report)).toMatch(/goals \(issues 13 and 14\)/)
  })

  it("compares two PostgreSQL hosts with one when both ran, and labels the two-host row", () => {
    const one = [measurement("waybill", 500), measurement("floor", 1000)]
    const two = [{ ...measurement("waybill", 450), hosts: 2 }]
    const result = (scenario: string, measurements: Array<Measurement>) => ({
      scenario,
      description: "",
      measurements,
      ratio: ratioOf(measurements),
      problems: []
    })
    const both = reportOf([result("book-single-pg", one), result("book-single-pg-2hosts", two)], true)
    expect(hostsLine(both)).toMatch(/^book-single-pg-2hosts: 2 hosts \/ 1 host = 0\.90 \(450 vs 500 req\/s/)
    expect(formatReport(both)).toMatch(/book-single-pg-2hosts\s+waybill x2\s+450\s/)
    expect(hostsLine(reportOf([result("book-single-pg", one)], true))).toBeNull()
  })
})

describe("the webhook drain row", () => {
  const drained = (target: "waybill" | "handwritten", perSec: number, problems: ReadonlyArray<string> = []) => ({
    target,
    events: 10_000,
    shipments: 1_000,
    concurrency: 16,
    received: 10_000,
    drainSeconds: 10_000 / perSec,
    deliveriesPerSec: perSec,
    cpuPercent: 50,
    rssPeakMiB: 200,
    retainedHeapFirstThirdMiB: 31,
    retainedHeapLastThirdMiB: 32,
    problems
  })

  it("prints both targets, the ratio and the absolute goal", () => {
    const measurements = [drained("waybill", 2_500), drained("handwritten", 4_000)]
    const text = formatWebhookDrain({
      scenario: webhookDrainName(10_000),
      measurements,
      ratio: webhookRatioOf(measurements),
      problems: []
    })
    expect(text).toMatch(/webhook drain \(10,000 events\)\s+waybill\s+2500\s+4\.0\s+50\s+200\s/)
    expect(text).toMatch(/webhook drain \(10,000 events\)\s+handwritten\s+4000\s/)
    expect(text).toMatch(/ratio waybill\/handwritten = 0\.63 \(goal >= 0\.50\): MEETS the goal/)
    expect(text).toMatch(/waybill 2500 deliveries\/s \(goal >= 2000\): MEETS the goal/)
    expect(text).not.toMatch(/INVALID/)
  })

  it("counts a target's median round, and lists every round and every round's problems", () => {
    const median = medianRound([
      drained("waybill", 4_100),
      drained("waybill", 3_000, ["a slow round"]),
      drained("waybill", 3_900)
    ])
    expect(median.deliveriesPerSec).toBe(3_900)
    expect(median.roundsPerSec).toEqual([4_100, 3_000, 3_900])
    expect(median.problems).toEqual(["a slow round"])
    // An even count takes the lower middle; one round is itself.
    expect(medianRound([drained("handwritten", 9_000), drained("handwritten", 8_000)]).deliveriesPerSec).toBe(8_000)
    expect(medianRound([drained("handwritten", 9_000)]).deliveriesPerSec).toBe(9_000)
    expect(() => medianRound([])).toThrow(/no rounds/)
    const measurements = [median, medianRound([drained("handwritten", 8_000)])]
    const text = formatWebhookDrain({ scenario: webhookDrainName(10_000), measurements, ratio: 0.49, problems: [] })
    expect(text).toMatch(/waybill: median of 3 rounds \(4100, 3000, 3900\/s\)/)
    expect(text).not.toMatch(/handwritten: median/)
  })

  it("marks a drain that lost deliveries invalid", () => {
    const measurements = [drained("waybill", 500, ["only 9990 of 10000 events arrived"]), drained("handwritten", 4_000)]
    const text = formatWebhookDrain({ scenario: webhookDrainName(10_000), measurements, ratio: 0.125, problems: [] })
    expect(text).toMatch(/BELOW the goal.*BELOW the goal \[run INVALID, see problems\]/)
    expect(text).toMatch(/problem \(waybill\): only 9990 of 10000 events arrived/)
  })
})

describe("allocation sampling", () => {
  it("charges a script to its package", () => {
    const root = new URL("../../../", import.meta.url).href
    const store = `${root}node_modules/.pnpm`
    expect(packageOf(`${store}/effect@3.22.4/node_modules/effect/dist/esm/internal/fiberRuntime.js`)).toBe("effect")
    expect(packageOf(`${store}/@effect+vitest@0.30.0_x/node_modules/@effect/vitest/dist/index.js`)).toBe(
      "@effect/vitest"
    )
    expect(packageOf(`${root}packages/core/dist/index.js`)).toBe("packages/core")
    expect(packageOf(`${root}adapters/storage-kysely/src/SqliteEngine.ts`)).toBe("adapters/storage-kysely")
    expect(packageOf("node:internal/streams/readable")).toBe("node")
    expect(packageOf("")).toBe("(V8 built-ins and native)")
  })

  it("counts what was allocated and collected since, charged to this file", async () => {
    const sampling = await startAllocationSampling(1024)
    let kept = 0
    for (let i = 0; i < 20_000; i++) kept += new Array(16).fill(i).length
    const { byPackage, totalBytes } = await sampling.stop()
    expect(kept).toBe(320_000)
    // 20,000 arrays of 16 elements: well over a megabyte, none of it alive any more.
    expect(totalBytes).toBeGreaterThan(1_000_000)
    expect(byPackage.find(([name]) => name === "examples/http-host")?.[1]).toBeGreaterThan(1_000_000)
  })
})

describe("profile summary", () => {
  it("charges library time to the nearest Waybill frame and counts inclusive time once per sample", () => {
    const root = process.cwd().replace(/\/examples\/http-host$/, "")
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 })
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", ""), children: [2, 5] },
        { id: 2, callFrame: frame("plan", `file://${root}/packages/core/src/Booking.ts`), children: [3] },
        {
          id: 3,
          callFrame: frame("compile", `file://${root}/node_modules/.pnpm/kysely@1/node_modules/kysely/x.js`),
          children: [4]
        },
        { id: 4, callFrame: frame("run", ""), children: [] },
        { id: 5, callFrame: frame("(idle)", ""), children: [] }
      ],
      samples: [2, 3, 4, 4, 5],
      timeDeltas: [1000, 1000, 1000, 1000, 1000]
    }
    const s = summarize(profile)
    expect([s.totalMs, s.idleMs]).toEqual([5, 1])
    expect(new Map(s.byArea).get("lib: kysely")).toBe(1)
    expect(new Map(s.byNearestWaybillFrame).get("plan packages/core/src/Booking.ts:1")).toBe(4)
    expect(new Map(s.byInclusive).get("compile kysely/x.js:1")).toBe(3)
  })

  it("names anonymous functions after their source line", () => {
    expect(nameFromSourceLine("export const plan = (input: ShipmentInput) => {")).toBe("plan")
    expect(nameFromSourceLine("    insert: (s) =>")).toBe("insert")
    expect(nameFromSourceLine("  Effect.gen(function*() {")).toBe("<Effect.gen(function*() {>")
  })
})

describe("targets answer the booking scenario", () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-bench-test-"))
  const file = (name: TargetName) => join(dir, `${name}.db`)
  const targets = new Map<TargetName, RunningTarget>()
  const target = (name: TargetName): RunningTarget => targets.get(name)!

  beforeAll(async () => {
    targets.set("waybill", await startWaybill({ dbFile: file("waybill"), host: "127.0.0.1", port: 0 }))
    targets.set("floor", await startFloor({ dbFile: file("floor"), host: "127.0.0.1", port: 0 }))
    targets.set("ceiling", await startCeiling({ dbFile: file("ceiling"), host: "127.0.0.1", port: 0 }))
  })
  afterAll(async () => {
    for (const t of targets.values()) await t.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const send = (t: RunningTarget, apiKey = t.apiKey, body?: string) =>
    sendBooking(bookSingle, t, t === targets.get("waybill"), apiKey, body)

  it("all run on the same SQLite settings", () => {
    const expected = { journal_mode: "wal", synchronous: "1", busy_timeout: "5000", foreign_keys: "1" }
    for (const name of TARGET_NAMES) expect(target(name).pragmas).toEqual(expected)
  })

  it.each(TARGET_NAMES)("%s books the shipment and writes one shipment and one event", async (name) => {
    const t = target(name)
    const before = await t.rowCounts()
    const r = await send(t)
    expect(checkSingleBooking(r.status, r.body)).toEqual([])
    const after = await t.rowCounts()
    expect(after["shipments"]! - before["shipments"]!).toBe(1)
    expect(after["events"]! - before["events"]!).toBe(1)
  })

  it.each(TARGET_NAMES)("%s refuses a wrong key and a shipment without required fields", async (name) => {
    const t = target(name)
    expect((await send(t, "wb_live_nope")).status).toBe(401)
    const { Phone: _phone, ...noPhone } = SHIPMENT
    const r = await send(t, t.apiKey, JSON.stringify({ data: { shipments: [noPhone] } }))
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.body)).toMatch(/Phone/)
  })

  /** Every row of every Waybill table a booking writes, minus what differs by nature (ids, times, keys). */
  const bookingRows = (name: TargetName) => {
    const db = new Database(file(name), { readonly: true })
    try {
      const tables = db
        .prepare(`select name from sqlite_master where type = 'table' and name like 'waybill_%' order by name`)
        .pluck()
        .all() as Array<string>
      const volatile =
        /^(track_no|id|event_id|created_at|updated_at|occurred_at|ready_at|requested_delivery_at|estimated_delivery_at|guaranteed_delivery_at|eta_at|next_attempt_at|customer_no|hash|hint|last4|generation|window_start|expires_at|count|key|at|request_id)$/
      const out: Record<string, Array<Record<string, unknown>>> = {}
      for (const table of tables) {
        if (/accounts|api_keys|key_check|rate_counters|schema|migration/.test(table)) continue
        const rows = db.prepare(`select * from ${table}`).all() as Array<Record<string, unknown>>
        out[table] = rows.map((r) => {
          const kept = Object.entries(r).filter(([k]) => !volatile.test(k))
          // The event's data holds the booking time's answer; its keys are what must match.
          return Object.fromEntries(kept.map(([k, v]) => [k, k === "data" ? Object.keys(JSON.parse(String(v))) : v]))
        })
      }
      return out
    } finally {
      db.close()
    }
  }

  it("the ceiling writes the same rows, in the same tables, as Waybill", async () => {
    // One more booking each, so the test stands alone (the tests above booked one on each).
    for (const name of ["waybill", "ceiling"] as const) expect((await send(target(name))).status).toBe(200)
    for (const name of ["waybill", "ceiling"] as const)
      await activityWritten(() => bookingRows(name)["waybill_activity"]!.length)
    const waybillRows = bookingRows("waybill")
    expect(waybillRows["waybill_shipments"]!.length).toBeGreaterThanOrEqual(1)
    expect(waybillRows["waybill_stops"]).toHaveLength(2 * waybillRows["waybill_shipments"]!.length)
    expect(bookingRows("ceiling")).toEqual(waybillRows)
  })
})

/**
 * Waits until a target's activity log stops growing: every target writes it in batches every
 * 250 ms (Waybill's recorder and `handActivity.ts`), so a call's row lands a little after its
 * answer. Bounded (12 s).
 */
const activityWritten = async (rows: () => number | Promise<number>): Promise<void> => {
  let last = -1
  for (let i = 0; i < 40; i++) {
    const now = await rows()
    if (now === last && now > 0) return
    last = now
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

const pgServer = benchServerUrl()

const { suite: pgSuite, title: pgTitle } = await postgresSuite(
  "targets answer the booking scenario on PostgreSQL",
  pgServer
)

pgSuite(pgTitle, () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-bench-pg-test-"))
  const databases = new Map<"waybill" | "floor", BenchDatabase>()
  const targets = new Map<"waybill" | "floor", RunningTarget>()
  const target = (name: "waybill" | "floor"): RunningTarget => targets.get(name)!

  beforeAll(async () => {
    for (const name of ["waybill", "floor"] as const) {
      const database = await createBenchDatabase(pgServer, `test_${name}`)
      databases.set(name, database)
      // As run.ts does: the floor starts on a migrated schema (Waybill's host migrates it anyway).
      await migrateBenchDatabase(database.url)
    }
    const options = (name: "waybill" | "floor") => ({
      dbFile: join(dir, `${name}.db`),
      host: "127.0.0.1",
      port: 0,
      databaseUrl: databases.get(name)!.url
    })
    targets.set("waybill", await startWaybill(options("waybill")))
    targets.set("floor", await startFloorPg(options("floor")))
  })
  afterAll(async () => {
    for (const t of targets.values()) await t.close()
    for (const d of databases.values()) await d.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const send = (t: RunningTarget, apiKey = t.apiKey, body?: string) =>
    sendBooking(bookSinglePg, t, t === targets.get("waybill"), apiKey, body)

  it("both run with the same server settings and pool size", () => {
    expect(target("waybill").pragmas).toEqual(target("floor").pragmas)
    expect(target("floor").pragmas["pool_size"]).toBe(String(BENCH_POOL_SIZE))
    expect(target("floor").pragmas["synchronous_commit"]).toBeTruthy()
  })

  it.each(["waybill", "floor"] as const)("%s books, refuses a wrong key and a missing field", async (name) => {
    const t = target(name)
    const before = await t.rowCounts()
    const r = await send(t)
    expect(checkSingleBooking(r.status, r.body)).toEqual([])
    const after = await t.rowCounts()
    expect([after["shipments"]! - before["shipments"]!, after["events"]! - before["events"]!]).toEqual([1, 1])
    expect((await send(t, "wb_live_nope")).status).toBe(401)
    const { Phone: _phone, ...noPhone } = SHIPMENT
    const refused = await send(t, t.apiKey, JSON.stringify({ data: { shipments: [noPhone] } }))
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toMatch(/Phone/)
  })

  /** Every row of every Waybill table a booking writes, minus what differs by nature, in a stable order. */
  const bookingRows = async (name: "waybill" | "floor") => {
    const client = new pg.Client({ connectionString: databases.get(name)!.url })
    await client.connect()
    try {
      const tables = (
        await client.query<{ name: string }>(
          `select table_name as name from information_schema.tables
           where table_schema = 'public' and table_name like 'waybill_%' order by table_name`
        )
      ).rows.map((r) => r.name)
      const volatile =
        /^(track_no|id|event_id|created_at|updated_at|occurred_at|ready_at|requested_delivery_at|estimated_delivery_at|guaranteed_delivery_at|eta_at|next_attempt_at|customer_no|hash|hint|last4|generation|window_start|expires_at|count|key|at|request_id)$/
      const out: Record<string, Array<string>> = {}
      for (const table of tables) {
        if (/accounts|api_keys|key_check|rate_counters|schema|migration/.test(table)) continue
        const rows = (await client.query<Record<string, unknown>>(`select * from ${table}`)).rows
        out[table] = rows
          .map((r) => {
            const kept = Object.entries(r).filter(([k]) => !volatile.test(k))
            // The event's data holds the booking time's answer; its keys are what must match.
            const data = (v: unknown) => Object.keys(typeof v === "string" ? JSON.parse(v) : (v as object))
            return JSON.stringify(Object.fromEntries(kept.map(([k, v]) => [k, k === "data" ? data(v) : v])))
          })
          .sort()
      }
      return out
    } finally {
      await client.end()
    }
  }

  it("the PostgreSQL floor writes the same rows, in the same tables, as Waybill", async () => {
    for (const name of ["waybill", "floor"] as const) expect((await send(target(name))).status).toBe(200)
    for (const name of ["waybill", "floor"] as const)
      await activityWritten(async () => (await bookingRows(name))["waybill_activity"]!.length)
    const waybillRows = await bookingRows("waybill")
    expect(waybillRows["waybill_shipments"]!.length).toBeGreaterThanOrEqual(1)
    expect(waybillRows["waybill_stops"]).toHaveLength(2 * waybillRows["waybill_shipments"]!.length)
    expect(await bookingRows("floor")).toEqual(waybillRows)
  })
})
