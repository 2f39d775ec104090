/**
 * `pnpm bench`: loads Waybill, a hand-written floor (floor.ts) and, for booking, a hand-written
 * ceiling (ceiling.ts: Waybill's own statements without Waybill) with the same request, one
 * after the other, each in its own child process over a fresh SQLite file, and prints
 * requests/s, p50/p99 latency, peak RSS and the Waybill/floor throughput ratio per scenario
 * (with ceiling/floor and waybill/ceiling where the ceiling ran).
 * The `*-pg` scenarios run the same way on a fresh PostgreSQL database per measurement (created,
 * migrated, dropped: postgres.ts), against the PostgreSQL floor (floorPg.ts); the two-host one
 * starts two Waybill hosts on one database and splits the load across them.
 * Results also go to bench-results/<timestamp>.json at the repository root.
 *
 * A run is only valid if every answer was a 2xx that passed the scenario's check and the
 * targets wrote the rows those answers promise; otherwise the process exits 1. A low ratio is
 * reported, never an exit code. See docs/benchmarks.md.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon, { type Result } from "autocannon"
import { type BenchConfig, readConfig } from "./config.js"
import { readMachineCpu, readProcessCpuMs, readProcMemory } from "./proc.js"
import type { ChildMessage, ChildOp, ChildOpResult, ParentMessage } from "./protocol.js"
import {
  formatReport,
  GOAL_RATIO,
  type Measurement,
  medianRound,
  ratioOf,
  ratiosOf,
  type RunReport,
  type ScenarioResult,
  type WebhookDrainMeasurement,
  type WebhookDrainResult,
  webhookDrainName,
  webhookRatioOf,
  type WebhookTarget
} from "./report.js"
import {
  type RequestSpec,
  type Scenario,
  selectScenarios,
  selectsWebhookDrain,
  type Session,
  targetsOf
} from "./scenarios.js"
import { backendPids, benchServerUrl, type BenchDatabase, createBenchDatabase, unreachable } from "./postgres.js"
import { migrateBenchDatabase } from "./pgSchema.js"
import type { PragmaValues } from "./sqlite.js"
import type { TargetName } from "./target.js"

const HOST_DIR = fileURLToPath(new URL("../", import.meta.url))
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))
const CHILD_ENTRY = fileURLToPath(new URL("./child.ts", import.meta.url))
const WEBHOOK_ENTRY = fileURLToPath(new URL("./webhooks.ts", import.meta.url))
/** Rounds of the webhook drain per target (`BENCH_WEBHOOK_ROUNDS`, default 3); each target's median counts. */
const WEBHOOK_ROUNDS = Math.max(1, Number(process.env["BENCH_WEBHOOK_ROUNDS"] ?? 3))
const WEBHOOK_TIMEOUT_MS = 15 * 60_000
const WEBHOOK_DRAIN_DESCRIPTION =
  "webhook-drain: a backlog of events delivered to a loopback HTTPS receiver, by Waybill's dispatcher " +
  "(outbox, leases, signing, SSRF-guarded kept-alive transport, outcome per attempt) and by a hand-written " +
  "keep-alive sender (node:https, same signed payloads, same concurrency, nothing stored)"
const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000

/** A broken run: printed and turned into exit code 1. */
class BenchFailure extends Error {}

// ---------------------------------------------------------------------------------------------
// Server children

interface ServerChild {
  readonly target: TargetName
  readonly pid: number
  readonly session: Session
  readonly pragmas: PragmaValues
  readonly request: <Op extends ChildOp>(op: Op, arg?: string) => Promise<ChildOpResult[Op]>
  /** Resolves with the exit code once the child is gone. */
  readonly exited: Promise<number | null>
  readonly kill: () => void
}

const live = new Set<ChildProcess>()
process.on("exit", () => {
  for (const c of live) c.kill("SIGKILL")
})

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BenchFailure(`${what} took longer than ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Node flags of a server child: Waybill's packages from their built `dist/` (what `import` resolves
 * to, as for npm users), or from `src/` through the `waybill-source` export condition when the run
 * is from source; source maps on when profiling, so profiles name the `.ts` lines.
 */
const childFlags = (config: BenchConfig, target: TargetName): ReadonlyArray<string> => [
  ...(config.fromSource ? ["--conditions=waybill-source"] : []),
  ...(config.profile.includes(target) ? ["--enable-source-maps"] : []),
  "--import",
  "tsx"
]

/**
 * CPU pinning (`taskset`): on a machine with two or more cores the load generator (this process,
 * which runs autocannon) keeps CPU 0 and each server child gets CPU 1, so the two never compete
 * for a core and the ratios are stable from run to run. The webhook drain's children, which
 * send and receive in one process, get every core back. `BENCH_PIN=0`, a single core, or no
 * `taskset` (not Linux): nothing is pinned, and the run says so.
 */
const pinning = ((): { readonly on: boolean; readonly all: string } => {
  const all = `0-${cpus().length - 1}`
  if (process.env["BENCH_PIN"] === "0" || cpus().length < 2) return { on: false, all }
  try {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" })
    return { on: true, all }
  } catch {
    return { on: false, all }
  }
})()

/** `spawn`, on the given CPUs when pinning is on (taskset execs the command: the pid is the child's). */
const spawnOn = (cpuList: string, args: ReadonlyArray<string>, options: Parameters<typeof spawn>[2]) =>
  pinning.on
    ? spawn("taskset", ["-c", cpuList, process.execPath, ...args], options)
    : spawn(process.execPath, [...args], options)

const startChild = async (
  config: BenchConfig,
  target: TargetName,
  dbFile: string,
  databaseUrl?: string
): Promise<ServerChild> => {
  const args = [
    ...childFlags(config, target),
    CHILD_ENTRY,
    target,
    dbFile,
    ...(databaseUrl === undefined ? [] : [databaseUrl])
  ]
  const child = spawnOn("1", args, {
    cwd: HOST_DIR,
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  live.add(child)
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      live.delete(child)
      resolve(code)
    })
  )
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let nextId = 1
  const ready = new Promise<Extract<ChildMessage, { type: "ready" }>>((resolve, reject) => {
    child.on("message", (message: ChildMessage) => {
      if (message.type === "ready") resolve(message)
      else if (message.type === "failed") reject(new BenchFailure(`${target} failed to start:\n${message.message}`))
      else {
        const waiter = pending.get(message.id)
        pending.delete(message.id)
        if (waiter === undefined) return
        if (message.ok) waiter.resolve(message.value)
        else waiter.reject(new BenchFailure(`${target}: ${message.message}`))
      }
    })
    void exited.then((code) => {
      const gone = new BenchFailure(`${target} child exited (code ${code})`)
      reject(gone)
      for (const w of pending.values()) w.reject(gone)
      pending.clear()
    })
  })
  const announced = await withTimeout(ready, READY_TIMEOUT_MS, `starting ${target}`).catch((e: unknown) => {
    child.kill("SIGKILL")
    throw e
  })
  if (child.pid === undefined) throw new BenchFailure(`${target} child has no pid`)
  return {
    target,
    pid: child.pid,
    session: { url: announced.url, apiKey: announced.apiKey },
    pragmas: announced.pragmas,
    request: <Op extends ChildOp>(op: Op, arg?: string) =>
      new Promise<ChildOpResult[Op]>((resolve, reject) => {
        const id = nextId++
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
        child.send({ id, op, ...(arg === undefined ? {} : { arg }) } satisfies ParentMessage)
      }),
    exited,
    kill: () => child.kill("SIGKILL")
  }
}

// ---------------------------------------------------------------------------------------------
// Load

/** One request outside the load, checked in full; throws (loudly) when the answer is wrong. */
const smoke = async (scenario: Scenario, target: TargetName, session: Session, spec: RequestSpec): Promise<void> => {
  const response = await fetch(session.url + spec.path, {
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body })
  })
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  const problems = scenario.check(response.status, body)
  if (problems.length > 0) {
    throw new BenchFailure(
      `${scenario.name} / ${target}: the check request got an unexpected answer, refusing to load it:\n` +
        problems.map((p) => `  - ${p}`).join("\n") +
        `\n  status ${response.status}, body: ${text.slice(0, 2000)}`
    )
  }
}

/** Loads `urls` (the hosts of one target, connections dealt to them in turn) with `spec`. */
const fire = (
  urls: ReadonlyArray<string>,
  spec: RequestSpec,
  seconds: number,
  connections: number,
  quickCheck: (body: string) => boolean
): Promise<Result> =>
  autocannon({
    url: urls.length === 1 ? urls[0]! : [...urls],
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 10,
    verifyBody: quickCheck
  })

const failures = (r: Result): number => r.errors + r.mismatches
const describeFailures = (phase: string, r: Result): Array<string> => {
  const out: Array<string> = []
  if (r.non2xx > 0) out.push(`${phase}: ${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodeStats)})`)
  if (r.errors > 0) out.push(`${phase}: ${r.errors} request errors (${r.timeouts} timeouts)`)
  if (r.mismatches > 0) out.push(`${phase}: ${r.mismatches} answers failed the scenario's quick check`)
  return out
}

const measure = async (
  scenario: Scenario,
  target: TargetName,
  config: BenchConfig,
  profileRoot: string
): Promise<Measurement> => {
  const dir = mkdtempSync(join(tmpdir(), `waybill-bench-${target}-`))
  const profileFile = config.profile.includes(target)
    ? join(profileRoot, `${scenario.name}-${target}.cpuprofile`)
    : null
  if (profileFile !== null) mkdirSync(profileRoot, { recursive: true })
  const log = (s: string) => console.log(`[${scenario.name} / ${target}] ${s}`)
  const hosts = scenario.hosts ?? 1
  const children: Array<ServerChild> = []
  let database: BenchDatabase | undefined
  try {
    if (scenario.database === "postgres") {
      database = await createBenchDatabase(benchServerUrl(), `${scenario.name}_${target}`)
      // Both targets start on a migrated schema: the floor cannot migrate without loading Waybill.
      await migrateBenchDatabase(database.url)
      log(`fresh PostgreSQL database ${database.name}`)
    } else if (hosts > 1) throw new BenchFailure(`${scenario.name}: several hosts need PostgreSQL`)
    // One after the other: the first host creates the bench account and the shared secret file.
    for (let i = 0; i < hosts; i++) {
      const child = await startChild(config, target, join(dir, hosts === 1 ? "bench.db" : `host${i}.db`), database?.url)
      children.push(child)
      log(`pid ${child.pid} listening on ${child.session.url}`)
    }
    const child = children[0]!
    const session = child.session
    await scenario.prepare?.(session)
    const spec = scenario.request(session)
    // Every host answers the first one's key: they share the database and the master secret.
    for (const c of children) await smoke(scenario, target, { ...session, url: c.session.url }, spec)
    const urls = children.map((c) => c.session.url + spec.path)

    const problems: Array<string> = []
    let okAnswers = children.length // the smoke requests, one per host
    if (config.warmupSec > 0) {
      log(`warm-up ${config.warmupSec} s`)
      const warm = await fire(urls, spec, config.warmupSec, config.connections, scenario.quickCheck)
      problems.push(...describeFailures("warm-up", warm))
      okAnswers += warm["2xx"]
    }

    log(`measuring ${config.durationSec} s at ${config.connections} connections`)
    if (profileFile !== null) await child.request("profile-start")
    const usage = async () => {
      const all = await Promise.all(children.map((c) => c.request("usage")))
      return {
        userMicros: all.reduce((n, u) => n + u.userMicros, 0),
        systemMicros: all.reduce((n, u) => n + u.systemMicros, 0),
        maxRssKiB: Math.max(...all.map((u) => u.maxRssKiB))
      }
    }
    // The PostgreSQL backends serving this database, when the server runs on this machine: their
    // CPU is the database's share of a booking (the server's shared background processes are not).
    const backendsCpu = async (): Promise<Map<number, number>> => {
      const out = new Map<number, number>()
      if (database === undefined) return out
      for (const pid of await backendPids(benchServerUrl(), database.name)) {
        const ms = readProcessCpuMs(pid)
        if (ms !== undefined) out.set(pid, ms)
      }
      return out
    }
    const backendsBefore = await backendsCpu()
    const before = await usage()
    const selfBefore = process.cpuUsage()
    const machineBefore = readMachineCpu()
    const wallBefore = performance.now()
    const result = await fire(urls, spec, config.durationSec, config.connections, scenario.quickCheck)
    const wallMs = performance.now() - wallBefore
    const self = process.cpuUsage(selfBefore)
    const machineAfter = readMachineCpu()
    const after = await usage()
    const backendsAfter = await backendsCpu()
    // A backend that started in the window counts whole; one that ended in it is lost (pools keep theirs).
    const databaseMicros =
      database === undefined || backendsAfter.size === 0
        ? null
        : [...backendsAfter].reduce((n, [pid, ms]) => n + (ms - (backendsBefore.get(pid) ?? 0)), 0) * 1000
    if (profileFile !== null)
      log(`CPU profile of the measured window: ${await child.request("profile-stop", profileFile)}`)
    problems.push(...describeFailures("measured", result))
    okAnswers += result["2xx"]

    const serverMicros = after.userMicros - before.userMicros + (after.systemMicros - before.systemMicros)
    const selfMicros = self.user + self.system
    // Whatever else kept the machine's cores busy meanwhile: other processes competing with the run.
    const otherCpuPercent =
      machineBefore === undefined || machineAfter === undefined
        ? null
        : Math.max(
            0,
            ((machineAfter.busyMs - machineBefore.busyMs - (serverMicros + selfMicros + (databaseMicros ?? 0)) / 1000) /
              wallMs) *
              100
          )
    // Per host: the largest of the hosts' peaks.
    const peakKiB = Math.max(...children.map((c) => readProcMemory(c.pid)?.vmHwmKiB ?? after.maxRssKiB))
    const rows = await child.request("rows")
    // Every 2xx wrote its rows; requests cut off when a phase ended may have written theirs too.
    const phases = config.warmupSec > 0 ? 2 : 1
    for (const [kind, perRequest] of Object.entries(scenario.writesPerRequest)) {
      const have = rows[kind] ?? 0
      const min = okAnswers * perRequest
      const max = (okAnswers + phases * config.connections) * perRequest
      if (have < min || have > max)
        problems.push(`${kind}: ${have} rows for ${okAnswers} successful answers (expected ${min}..${max})`)
    }

    for (const c of children) {
      await withTimeout(c.request("stop"), STOP_TIMEOUT_MS, `stopping ${target}`)
      const code = await withTimeout(c.exited, STOP_TIMEOUT_MS, `waiting for ${target} to exit`)
      if (code !== 0) problems.push(`the server (pid ${c.pid}) exited with code ${code}`)
    }

    const requestsPerSec = result.requests.total / result.duration
    const measurement: Measurement = {
      target,
      ...(hosts === 1 ? {} : { hosts }),
      requestsPerSec,
      totalRequests: result.requests.total,
      durationSec: result.duration,
      latencyMs: {
        p50: result.latency.p50,
        p99: result.latency.p99,
        mean: result.latency.mean,
        max: result.latency.max
      },
      peakRssMiB: peakKiB > 0 ? peakKiB / 1024 : null,
      non2xx: result.non2xx,
      errors: failures(result),
      statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
      serverCpuPercent: (serverMicros / 1000 / wallMs) * 100,
      serverCpuMicrosPerRequest: result.requests.total > 0 ? serverMicros / result.requests.total : 0,
      loadGeneratorCpuPercent: (selfMicros / 1000 / wallMs) * 100,
      ...(databaseMicros === null
        ? {}
        : {
            databaseCpuPercent: (databaseMicros / 1000 / wallMs) * 100,
            databaseCpuMicrosPerRequest: result.requests.total > 0 ? databaseMicros / result.requests.total : 0
          }),
      otherCpuPercent,
      rows,
      pragmas: child.pragmas,
      cpuProfile: profileFile,
      problems
    }
    log(
      `${requestsPerSec.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms` +
        (problems.length > 0 ? `, ${problems.length} problem(s)` : "")
    )
    return measurement
  } finally {
    for (const c of children) c.kill()
    await Promise.all(
      children.map((c) => withTimeout(c.exited, STOP_TIMEOUT_MS, `killing ${target}`).catch(() => null))
    )
    await database?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// Run

const git = (...args: Array<string>): string | null => {
  try {
    return execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return null
  }
}

// ---------------------------------------------------------------------------------------------
// Webhook drain

/** One target's drain in its own process (fresh heap, its own receiver), read from its RESULT line. */
const drainOnce = (config: BenchConfig, target: WebhookTarget): Promise<WebhookDrainMeasurement> =>
  withTimeout(
    new Promise<WebhookDrainMeasurement>((resolve, reject) => {
      const child = spawnOn(pinning.all, [...childFlags(config, "waybill"), "--expose-gc", WEBHOOK_ENTRY, target], {
        cwd: HOST_DIR,
        stdio: ["ignore", "pipe", "inherit"]
      })
      live.add(child)
      let out = ""
      const stdout = child.stdout!
      stdout.setEncoding("utf8")
      stdout.on("data", (chunk: string) => {
        out += chunk
      })
      child.once("exit", (code) => {
        live.delete(child)
        const line = out.split("\n").find((l) => l.startsWith("RESULT "))
        if (code !== 0 || line === undefined) {
          reject(new BenchFailure(`webhook drain / ${target} exited with code ${code}:\n${out.slice(-2000)}`))
          return
        }
        resolve(JSON.parse(line.slice("RESULT ".length)) as WebhookDrainMeasurement)
      })
    }),
    WEBHOOK_TIMEOUT_MS,
    `the webhook drain of ${target}`
  )

const runWebhookDrain = async (config: BenchConfig): Promise<WebhookDrainResult> => {
  const targets = ["waybill", "handwritten"] as const
  const rounds = new Map<WebhookTarget, Array<WebhookDrainMeasurement>>(targets.map((t) => [t, []]))
  // One target at a time, like the HTTP scenarios: each has the machine to itself. The targets
  // alternate, round by round, so a change in the machine's speed reaches both.
  for (let round = 1; round <= WEBHOOK_ROUNDS; round++) {
    for (const target of targets) {
      console.log(`[webhook drain / ${target}] round ${round} of ${WEBHOOK_ROUNDS}: draining`)
      const m = await drainOnce(config, target)
      console.log(
        `[webhook drain / ${target}] ${m.received} deliveries in ${m.drainSeconds.toFixed(1)} s: ${m.deliveriesPerSec.toFixed(0)}/s` +
          (m.problems.length > 0 ? `, ${m.problems.length} problem(s)` : "")
      )
      rounds.get(target)!.push(m)
    }
  }
  const measurements = targets.map((t) => medianRound(rounds.get(t)!))
  const [a, b] = measurements
  const problems =
    a !== undefined && b !== undefined && (a.events !== b.events || a.concurrency !== b.concurrency)
      ? ["the targets drained different backlogs"]
      : []
  return {
    scenario: webhookDrainName(a?.events ?? 0),
    measurements,
    ratio: webhookRatioOf(measurements),
    problems
  }
}

const runScenario = async (scenario: Scenario, config: BenchConfig, profileRoot: string): Promise<ScenarioResult> => {
  console.log(`\n${scenario.name}: ${scenario.description}`)
  const measurements: Array<Measurement> = []
  // One target at a time: on a small machine the load generator needs the other core.
  for (const target of targetsOf(scenario, config.targets)) {
    measurements.push(await measure(scenario, target, config, profileRoot))
  }
  const problems: Array<string> = []
  const [a, ...others] = measurements
  for (const b of others) {
    if (a !== undefined && JSON.stringify(a.pragmas) !== JSON.stringify(b.pragmas)) {
      problems.push(
        `SQLite settings differ: ${a.target} ${JSON.stringify(a.pragmas)} vs ${b.target} ${JSON.stringify(b.pragmas)}`
      )
    }
  }
  return {
    scenario: scenario.name,
    description: scenario.description,
    measurements,
    ratio: ratioOf(measurements),
    ratios: ratiosOf(measurements),
    problems
  }
}

const main = async (): Promise<number> => {
  const config = readConfig()
  const scenarios = selectScenarios(config.scenarios)
  if (!config.fromSource && !existsSync(join(REPO_ROOT, "packages/core/dist/index.js"))) {
    throw new BenchFailure("Waybill's packages are not built: run `pnpm build` first (or BENCH_FROM_SOURCE=1)")
  }
  console.log(
    config.fromSource
      ? "Waybill from TypeScript sources (tsx): figures are not the built library's"
      : "Waybill from the built packages (dist/)"
  )
  console.log(
    pinning.on
      ? "pinned: load generator on CPU 0, each server on CPU 1 (taskset)"
      : "not pinned (BENCH_PIN=0, one core, or no taskset): server and load generator share the cores"
  )
  const needsPostgres = scenarios.filter((s) => s.database === "postgres").map((s) => s.name)
  if (needsPostgres.length > 0) {
    const why = await unreachable(benchServerUrl())
    if (why !== undefined) {
      throw new BenchFailure(
        `${needsPostgres.join(", ")} need${needsPostgres.length === 1 ? "s" : ""} PostgreSQL, and ${benchServerUrl().replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@")} ` +
          `does not answer (${why}): set BENCH_PG_URL, or leave them out with BENCH_SCENARIOS`
      )
    }
  }
  const startedAt = new Date()
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-")
  const resultsDir = join(REPO_ROOT, "bench-results")
  const profileRoot = join(resultsDir, "profiles", stamp)

  const results: Array<ScenarioResult> = []
  for (const scenario of scenarios) results.push(await runScenario(scenario, config, profileRoot))
  let webhookDrain: WebhookDrainResult | undefined
  if (selectsWebhookDrain(config.scenarios)) {
    console.log(`\n${WEBHOOK_DRAIN_DESCRIPTION}`)
    webhookDrain = await runWebhookDrain(config)
  }

  const valid =
    results.every((s) => s.problems.length === 0 && s.measurements.every((m) => m.problems.length === 0)) &&
    (webhookDrain === undefined ||
      (webhookDrain.problems.length === 0 && webhookDrain.measurements.every((m) => m.problems.length === 0)))
  const report: RunReport = {
    startedAt: startedAt.toISOString(),
    config: {
      durationSec: config.durationSec,
      warmupSec: config.warmupSec,
      connections: config.connections,
      targets: config.targets,
      profiled: config.profile,
      fromSource: config.fromSource
    },
    environment: {
      node: process.versions.node,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      gitCommit: git("rev-parse", "HEAD"),
      gitDirty: ((s) => (s === null ? null : s !== ""))(git("status", "--porcelain"))
    },
    goalRatio: GOAL_RATIO,
    scenarios: results,
    ...(webhookDrain === undefined ? {} : { webhookDrain }),
    valid
  }
  console.log(`\n${formatReport(report)}`)
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `${stamp}.json`)
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n")
  console.log(`results: ${file}`)
  if (config.profile.length > 0) {
    console.log(
      `CPU profiles in ${profileRoot}; summarize one with: pnpm --filter @waybill/example-http-host exec tsx bench/profile.ts <file>`
    )
  }
  return valid ? 0 : 1
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(
      `\nBENCH FAILED: ${error instanceof Error ? (error instanceof BenchFailure ? error.message : error.stack) : String(error)}`
    )
    process.exitCode = 1
  }
)
