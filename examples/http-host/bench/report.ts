/**
 * What a bench run records, and how it is printed. Pure: run.ts fills these in and writes them
 * to bench-results/<timestamp>.json; the table and the verdict come from here.
 */
import type { TargetName } from "./target.js"

/** The throughput Waybill must reach, as a fraction of the floor's (issue: "at least 0.5"). */
export const GOAL_RATIO = 0.5

/** Deliveries per second Waybill's dispatcher must reach in the webhook drain (issue 13). */
export const WEBHOOK_GOAL_PER_SEC = 2_000

/** Who sends in the webhook drain: Waybill's dispatcher, or the hand-written keep-alive sender. */
export type WebhookTarget = "waybill" | "handwritten"

/** One target's webhook drain (the `RESULT` line of bench/webhooks.ts). */
export interface WebhookDrainMeasurement {
  readonly target: WebhookTarget
  readonly events: number
  readonly shipments: number
  readonly concurrency: number
  readonly received: number
  readonly drainSeconds: number
  readonly deliveriesPerSec: number
  /** Process CPU over the drain as a share of one core (sender and receiver share the process). */
  readonly cpuPercent: number
  readonly rssPeakMiB: number
  /** Deliveries per second of every round, when this is the median of several ({@link medianRound}). */
  readonly roundsPerSec?: ReadonlyArray<number>
  /** Heap after a full collection, mean over the first and the last third of the drain. */
  readonly retainedHeapFirstThirdMiB: number | null
  readonly retainedHeapLastThirdMiB: number | null
  readonly problems: ReadonlyArray<string>
}

/** The webhook drain: both targets over the same backlog. */
export interface WebhookDrainResult {
  /** `webhook drain (10,000 events)` */
  readonly scenario: string
  readonly measurements: ReadonlyArray<WebhookDrainMeasurement>
  /** waybill deliveries/s divided by handwritten's; null unless both ran. */
  readonly ratio: number | null
  readonly problems: ReadonlyArray<string>
}

/**
 * A target's drain from several rounds: the median round by deliveries per second (a lower
 * middle for an even count), with every round's problems and `roundsPerSec` listing all rounds.
 * A drain of 10,000 events lasts about a second for the hand-written sender, so one round's
 * ratio moves by a tenth with the machine; the median of a few does not.
 */
export const medianRound = (rounds: ReadonlyArray<WebhookDrainMeasurement>): WebhookDrainMeasurement => {
  if (rounds.length === 0) throw new Error("medianRound: no rounds")
  const sorted = [...rounds].sort((a, b) => a.deliveriesPerSec - b.deliveriesPerSec)
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]!
  return {
    ...middle,
    roundsPerSec: rounds.map((r) => r.deliveriesPerSec),
    problems: rounds.flatMap((r) => r.problems)
  }
}

/** The name of the drain's row: `webhook drain (10,000 events)`. */
export const webhookDrainName = (events: number): string => `webhook drain (${events.toLocaleString("en-US")} events)`

/** waybill/handwritten deliveries per second; null unless both ran. */
export const webhookRatioOf = (measurements: ReadonlyArray<WebhookDrainMeasurement>): number | null => {
  const w = measurements.find((m) => m.target === "waybill")
  const h = measurements.find((m) => m.target === "handwritten")
  return w === undefined || h === undefined || h.deliveriesPerSec <= 0 ? null : w.deliveriesPerSec / h.deliveriesPerSec
}

/** The drain's table rows and verdict lines. */
export const formatWebhookDrain = (drain: WebhookDrainResult): string => {
  const header = [
    "scenario",
    "target",
    "deliveries/s",
    "drain s",
    "CPU %",
    "CPU us/delivery",
    "peak RSS MiB",
    "heap MiB 1st/last third"
  ]
  const rows = drain.measurements.map((m) => [
    drain.scenario,
    m.target,
    m.deliveriesPerSec.toFixed(0),
    m.drainSeconds.toFixed(1),
    m.cpuPercent.toFixed(0),
    m.received > 0 ? (((m.cpuPercent / 100) * m.drainSeconds * 1e6) / m.received).toFixed(0) : "n/a",
    m.rssPeakMiB.toFixed(1),
    m.retainedHeapFirstThirdMiB === null || m.retainedHeapLastThirdMiB === null
      ? "n/a"
      : `${m.retainedHeapFirstThirdMiB.toFixed(1)}/${m.retainedHeapLastThirdMiB.toFixed(1)}`
  ])
  const out = [table(header, rows), ""]
  const valid = drain.problems.length === 0 && drain.measurements.every((m) => m.problems.length === 0)
  const waybill = drain.measurements.find((m) => m.target === "waybill")
  const parts: Array<string> = []
  if (drain.ratio !== null) {
    parts.push(
      `ratio waybill/handwritten = ${drain.ratio.toFixed(2)} (goal >= ${GOAL_RATIO.toFixed(2)}): ${drain.ratio >= GOAL_RATIO ? "MEETS the goal" : "BELOW the goal"}`
    )
  } else parts.push("ratio: n/a (needs both targets)")
  if (waybill !== undefined) {
    parts.push(
      `waybill ${waybill.deliveriesPerSec.toFixed(0)} deliveries/s (goal >= ${WEBHOOK_GOAL_PER_SEC}): ${waybill.deliveriesPerSec >= WEBHOOK_GOAL_PER_SEC ? "MEETS the goal" : "BELOW the goal"}`
    )
  }
  out.push(`${drain.scenario}: ${parts.join("; ")}${valid ? "" : " [run INVALID, see problems]"}`)
  for (const m of drain.measurements) {
    if (m.roundsPerSec !== undefined && m.roundsPerSec.length > 1)
      out.push(
        `  ${m.target}: median of ${m.roundsPerSec.length} rounds (${m.roundsPerSec.map((r) => r.toFixed(0)).join(", ")}/s)`
      )
  }
  for (const m of drain.measurements) for (const p of m.problems) out.push(`  problem (${m.target}): ${p}`)
  for (const p of drain.problems) out.push(`  problem: ${p}`)
  return out.join("\n")
}

/** One target under one scenario. */
export interface Measurement {
  readonly target: TargetName
  /**
   * Server processes that shared the load (scenario `hosts`), absent for one. Their CPU is
   * summed; peak RSS is the largest host's.
   */
  readonly hosts?: number
  /** Completed requests per second over the measured window. */
  readonly requestsPerSec: number
  readonly totalRequests: number
  readonly durationSec: number
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly mean: number; readonly max: number }
  /** Peak RSS of the server process since it started (warm-up included), MiB; null if unknown. */
  readonly peakRssMiB: number | null
  readonly non2xx: number
  /** Socket errors + timeouts + bodies failing the scenario's quick check. */
  readonly errors: number
  readonly statusCodes: Readonly<Record<string, number>>
  /** Server CPU time over the measured window as a share of one core (100 = one core busy). */
  readonly serverCpuPercent: number
  /** Server CPU time per completed request, microseconds. */
  readonly serverCpuMicrosPerRequest: number
  /** The load generator's own CPU share; near 100 means it, not the server, set the pace. */
  readonly loadGeneratorCpuPercent: number
  /**
   * On PostgreSQL, when the server runs on this machine: the CPU of the backends serving the
   * measurement's database (not the server's shared WAL writer and checkpointer), as a share of
   * one core and per completed request.
   */
  readonly databaseCpuPercent?: number
  readonly databaseCpuMicrosPerRequest?: number
  /**
   * CPU the rest of the machine used meanwhile (all cores, minus the server and the load
   * generator), as a share of one core; null without /proc. High values mean the run competed
   * with other work and its figures are noisy.
   */
  readonly otherCpuPercent: number | null
  /** Rows the target holds at the end, by kind. */
  readonly rows: Readonly<Record<string, number>>
  readonly pragmas: Readonly<Record<string, string>>
  /** The .cpuprofile of the measured window when the target was profiled (BENCH_PROFILE). */
  readonly cpuProfile: string | null
  /** Why this measurement is invalid; empty when it is valid. */
  readonly problems: ReadonlyArray<string>
}

export interface ScenarioResult {
  readonly scenario: string
  readonly description: string
  readonly measurements: ReadonlyArray<Measurement>
  /** waybill req/s divided by floor req/s; null unless both ran. */
  readonly ratio: number | null
  /**
   * Every throughput ratio between the targets that ran, by `a/b` (`waybill/floor`,
   * `ceiling/floor`, `waybill/ceiling`).
   */
  readonly ratios?: Readonly<Record<string, number>>
  readonly problems: ReadonlyArray<string>
}

export interface RunReport {
  readonly startedAt: string
  readonly config: {
    readonly durationSec: number
    readonly warmupSec: number
    readonly connections: number
    readonly targets: ReadonlyArray<TargetName>
    readonly profiled: ReadonlyArray<TargetName>
    /** Waybill ran from TypeScript sources (BENCH_FROM_SOURCE=1) rather than its built packages. */
    readonly fromSource?: boolean
  }
  readonly environment: {
    readonly node: string
    readonly platform: string
    readonly cpus: number
    readonly cpuModel: string
    readonly gitCommit: string | null
    readonly gitDirty: boolean | null
  }
  readonly goalRatio: number
  readonly scenarios: ReadonlyArray<ScenarioResult>
  /** The webhook drain, when selected (scenario `webhook-drain`). */
  readonly webhookDrain?: WebhookDrainResult
  /** False when any scenario or measurement has problems; the process then exits non-zero. */
  readonly valid: boolean
}

/** `of`'s req/s divided by `to`'s (by default waybill/floor, the goal's ratio); null unless both ran. */
export const ratioOf = (
  measurements: ReadonlyArray<Measurement>,
  of: TargetName = "waybill",
  to: TargetName = "floor"
): number | null => {
  const a = measurements.find((m) => m.target === of)
  const b = measurements.find((m) => m.target === to)
  if (a === undefined || b === undefined || b.requestsPerSec <= 0) return null
  return a.requestsPerSec / b.requestsPerSec
}

const RATIO_PAIRS: ReadonlyArray<readonly [TargetName, TargetName]> = [
  ["waybill", "floor"],
  ["ceiling", "floor"],
  ["waybill", "ceiling"]
]

/** The ratios of {@link RATIO_PAIRS} whose two targets both ran. */
export const ratiosOf = (measurements: ReadonlyArray<Measurement>): Readonly<Record<string, number>> => {
  const out: Record<string, number> = {}
  for (const [of, to] of RATIO_PAIRS) {
    const r = ratioOf(measurements, of, to)
    if (r !== null) out[`${of}/${to}`] = r
  }
  return out
}

/**
 * What the ceiling's ratios say, when it ran: how far Waybill's data model alone lets any
 * implementation go, and what share of that Waybill reaches.
 */
export const ceilingLine = (ratios: Readonly<Record<string, number>>): string | null => {
  const ofFloor = ratios["ceiling/floor"]
  const waybill = ratios["waybill/ceiling"]
  if (ofFloor === undefined && waybill === undefined) return null
  const parts: Array<string> = []
  if (ofFloor !== undefined) parts.push(`ceiling/floor = ${ofFloor.toFixed(2)} (Waybill's own writes, by hand)`)
  if (waybill !== undefined) parts.push(`waybill/ceiling = ${waybill.toFixed(2)} (Waybill's code on top of them)`)
  return `  ${parts.join("; ")}`
}

/**
 * The throughput goal of each HTTP scenario, as waybill/floor (issue 13): a download is mostly
 * streaming a file, so less of Waybill's own work stands between the two and the bar is higher.
 * Booking on PostgreSQL (issue 14) is held to the PostgreSQL floor, which sends Waybill's statements.
 */
export const SCENARIO_GOALS: Readonly<Record<string, number>> = {
  "book-single": 0.5,
  "docs-lookup-100": 0.5,
  "docs-download": 0.7,
  "book-single-pg": 0.5
}

/**
 * The scenarios the peak RSS goal compares (issue 13's, on SQLite): the PostgreSQL floor keeps
 * its rows in another process, so its RSS is no yardstick for a host.
 */
export const RSS_SCENARIOS: ReadonlyArray<string> = ["book-single", "docs-lookup-100", "docs-download"]

/**
 * Two hosts against one on PostgreSQL: the two-host scenario's req/s over the one-host booking's
 * Waybill req/s, when both ran; null otherwise.
 */
export const hostsLine = (report: RunReport): string | null => {
  const one = report.scenarios
    .find((s) => s.scenario === "book-single-pg")
    ?.measurements.find((m) => m.target === "waybill")
  const two = report.scenarios
    .find((s) => s.scenario === "book-single-pg-2hosts")
    ?.measurements.find((m) => m.target === "waybill")
  if (one === undefined || two === undefined || one.requestsPerSec <= 0) return null
  return (
    `book-single-pg-2hosts: ${two.hosts ?? 1} hosts / 1 host = ${(two.requestsPerSec / one.requestsPerSec).toFixed(2)} ` +
    `(${two.requestsPerSec.toFixed(0)} vs ${one.requestsPerSec.toFixed(0)} req/s; CPU ${two.serverCpuMicrosPerRequest.toFixed(0)} ` +
    `vs ${one.serverCpuMicrosPerRequest.toFixed(0)} us/req, every host on the same core: see docs/benchmarks.md)`
  )
}

/** The goal of `scenario` ({@link GOAL_RATIO} for a scenario without its own). */
export const goalOf = (scenario: string): number => SCENARIO_GOALS[scenario] ?? GOAL_RATIO

/** Peak RSS of Waybill's process may be at most this multiple of the floor's. */
export const RSS_GOAL = 1.5

/** One line on the ratio against the scenario's goal. */
export const verdict = (ratio: number | null, valid: boolean, goal: number = GOAL_RATIO): string => {
  if (ratio === null) return "ratio: n/a (needs both targets)"
  const line = `ratio waybill/floor = ${ratio.toFixed(2)} (goal >= ${goal.toFixed(2)}): ${ratio >= goal ? "MEETS the goal" : "BELOW the goal"}`
  return valid ? line : `${line} [run INVALID, see problems]`
}

/**
 * The goals of issue 13, one row each, from one run: the three HTTP scenarios (waybill/floor
 * throughput, with CPU per request), peak RSS (the largest waybill/floor ratio over the HTTP
 * scenarios), and the webhook drain (deliveries/s and waybill/handwritten). A goal whose
 * scenario did not run says so.
 */
export const goalRows = (report: RunReport): ReadonlyArray<ReadonlyArray<string>> => {
  const meets = (ok: boolean) => (ok ? "MEETS" : "BELOW")
  const of = (s: ScenarioResult, target: TargetName) => s.measurements.find((m) => m.target === target)
  const rows: Array<Array<string>> = []
  for (const [name, goal] of Object.entries(SCENARIO_GOALS)) {
    const s = report.scenarios.find((x) => x.scenario === name)
    const w = s === undefined ? undefined : of(s, "waybill")
    const f = s === undefined ? undefined : of(s, "floor")
    if (s === undefined || s.ratio === null || w === undefined || f === undefined) {
      rows.push([name, "not run", `>= ${goal.toFixed(2)}`, "n/a"])
      continue
    }
    rows.push([
      name,
      `${s.ratio.toFixed(2)} (${w.requestsPerSec.toFixed(0)} vs ${f.requestsPerSec.toFixed(0)} req/s; CPU ${w.serverCpuMicrosPerRequest.toFixed(0)} vs ${f.serverCpuMicrosPerRequest.toFixed(0)} us/req)`,
      `>= ${goal.toFixed(2)}`,
      meets(s.ratio >= goal)
    ])
  }
  const rss = report.scenarios
    .filter((s) => RSS_SCENARIOS.includes(s.scenario))
    .flatMap((s) => {
      const w = of(s, "waybill")?.peakRssMiB
      const f = of(s, "floor")?.peakRssMiB
      return w === null || w === undefined || f === null || f === undefined || f <= 0 ? [] : [{ s, w, f, r: w / f }]
    })
  const worst = rss.reduce<(typeof rss)[number] | undefined>(
    (a, b) => (a === undefined || b.r > a.r ? b : a),
    undefined
  )
  rows.push(
    worst === undefined
      ? ["peak RSS", "not run", `<= ${RSS_GOAL.toFixed(1)}x`, "n/a"]
      : [
          "peak RSS",
          `${worst.r.toFixed(2)}x (${worst.w.toFixed(0)} vs ${worst.f.toFixed(0)} MiB, ${worst.s.scenario})`,
          `<= ${RSS_GOAL.toFixed(1)}x`,
          meets(worst.r <= RSS_GOAL)
        ]
  )
  const drain = report.webhookDrain
  const waybill = drain?.measurements.find((m) => m.target === "waybill")
  rows.push(
    drain === undefined || drain.ratio === null || waybill === undefined
      ? ["webhook drain", "not run", `>= ${WEBHOOK_GOAL_PER_SEC}/s and >= ${GOAL_RATIO.toFixed(2)}`, "n/a"]
      : [
          drain.scenario,
          `${waybill.deliveriesPerSec.toFixed(0)}/s, ${drain.ratio.toFixed(2)} of hand-written`,
          `>= ${WEBHOOK_GOAL_PER_SEC}/s and >= ${GOAL_RATIO.toFixed(2)}`,
          meets(waybill.deliveriesPerSec >= WEBHOOK_GOAL_PER_SEC && drain.ratio >= GOAL_RATIO)
        ]
  )
  return rows
}

const fixed = (n: number | null, digits: number): string => (n === null ? "n/a" : n.toFixed(digits))

/** A plain-text table, columns padded; the first column left-aligned, the rest right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i <= 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

export const formatReport = (report: RunReport): string => {
  const header = [
    "scenario",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "peak RSS MiB",
    "non-2xx",
    "errors",
    "CPU %",
    "CPU us/req",
    "DB CPU us/req",
    "other CPU %"
  ]
  const rows = report.scenarios.flatMap((s) =>
    s.measurements.map((m) => [
      s.scenario,
      m.hosts === undefined ? m.target : `${m.target} x${m.hosts}`,
      fixed(m.requestsPerSec, 0),
      fixed(m.latencyMs.p50, 0),
      fixed(m.latencyMs.p99, 0),
      fixed(m.peakRssMiB, 1),
      String(m.non2xx),
      String(m.errors),
      fixed(m.serverCpuPercent, 0),
      fixed(m.serverCpuMicrosPerRequest, 0),
      m.databaseCpuMicrosPerRequest === undefined ? "" : fixed(m.databaseCpuMicrosPerRequest, 0),
      fixed(m.otherCpuPercent, 0)
    ])
  )
  const out = [
    `${report.config.connections} connections, ${report.config.warmupSec} s warm-up + ${report.config.durationSec} s measured per target; ` +
      `node ${report.environment.node}, ${report.environment.cpus} x ${report.environment.cpuModel}`,
    ""
  ]
  if (rows.length > 0) out.push(table(header, rows), "")
  for (const s of report.scenarios) {
    const valid = s.problems.length === 0 && s.measurements.every((m) => m.problems.length === 0)
    out.push(`${s.scenario}: ${verdict(s.ratio, valid, goalOf(s.scenario))}`)
    const ceiling = ceilingLine(s.ratios ?? {})
    if (ceiling !== null) out.push(ceiling)
    for (const m of s.measurements) {
      if (m.otherCpuPercent !== null && m.otherCpuPercent >= 20) {
        out.push(
          `  note: other processes used ${m.otherCpuPercent.toFixed(0)}% of a core while ${m.target} was measured; its figures are noisy`
        )
      }
      if (m.loadGeneratorCpuPercent >= 90) {
        out.push(
          `  note: the load generator used ${m.loadGeneratorCpuPercent.toFixed(0)}% of a core against ${m.target}; its req/s may be a lower bound`
        )
      }
      for (const p of m.problems) out.push(`  problem (${m.target}): ${p}`)
    }
    for (const p of s.problems) out.push(`  problem: ${p}`)
  }
  const hosts = hostsLine(report)
  if (hosts !== null) out.push(hosts)
  if (report.webhookDrain !== undefined) out.push("", formatWebhookDrain(report.webhookDrain))
  out.push("", "goals (issues 13 and 14), one run:", table(["goal", "measured", "target", "verdict"], goalRows(report)))
  if (report.config.profiled.length > 0) {
    out.push(
      "",
      `profiled run (${report.config.profiled.join(", ")} sampled by the V8 profiler): figures are slowed by the profiler`
    )
  }
  out.push("", report.valid ? "run valid" : "RUN INVALID: errors or unexpected answers (see problems above)")
  return out.join("\n")
}
