/**
 * Bench settings from the environment. Defaults keep a whole `pnpm bench` (two targets, one
 * scenario, start-up included) around half a minute on a 2-core machine.
 *
 * - BENCH_DURATION     measured seconds per target (default 10)
 * - BENCH_WARMUP       warm-up seconds per target, not measured (default 2)
 * - BENCH_CONNECTIONS  concurrent keep-alive connections (default 32)
 * - BENCH_SCENARIOS    comma-separated scenario names (default: all)
 * - BENCH_TARGETS      comma-separated targets (default: waybill,floor,ceiling; the goal ratio needs
 *                      waybill and floor)
 * - BENCH_PROFILE      waybill | floor | ceiling | all: CPU-profile those children over the measured
 *                      window (bench-results/profiles/; summarize with bench/profile.ts). The
 *                      profiler slows them down: such a run is for finding hot spots, not for
 *                      its figures.
 * - BENCH_PG_URL       the PostgreSQL server of the `*-pg` scenarios (default WAYBILL_PG_URL, else
 *                      postgres://postgres@127.0.0.1:5432/test); each measurement creates its own
 *                      database there under a random name and drops it afterwards
 * - BENCH_FROM_SOURCE  1: run Waybill's packages from their TypeScript sources (through tsx)
 *                      instead of their built `dist/` (the default, and what an embedding team
 *                      gets from npm; `pnpm bench` builds first). tsx compiles with esbuild's
 *                      `keepNames`, which renames every closure as it is created: measurably
 *                      slower, so such figures are not the library's.
 * - BENCH_ACTIVITY     off: the Waybill target records no account activity (read by the target
 *                      itself, `waybill.ts`), to measure what recording costs booking
 * - BENCH_BLOB_CACHE   off: the Waybill target keeps no document files in memory (read by the
 *                      target itself), so every download reads its file as the floor does
 */
import { isTargetName, TARGET_NAMES, type TargetName } from "./target.js"

export interface BenchConfig {
  readonly durationSec: number
  readonly warmupSec: number
  readonly connections: number
  readonly scenarios: string | undefined
  readonly targets: ReadonlyArray<TargetName>
  readonly profile: ReadonlyArray<TargetName>
  /** Load Waybill's packages from `src/` (tsx) rather than `dist/`. */
  readonly fromSource: boolean
}

const positiveInt = (env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be an integer >= ${min} (got ${JSON.stringify(raw)})`)
  return n
}

const targetList = (raw: string | undefined): ReadonlyArray<TargetName> => {
  if (raw === undefined || raw.trim() === "") return TARGET_NAMES
  const names = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const unknown = names.filter((n) => !isTargetName(n))
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`BENCH_TARGETS: unknown target ${unknown.join(", ")}; known: ${TARGET_NAMES.join(", ")}`)
  }
  // Always in the registry's order, so a table reads the same whatever the variable's order.
  return TARGET_NAMES.filter((t) => names.includes(t))
}

export const readConfig = (env: NodeJS.ProcessEnv = process.env): BenchConfig => {
  const profileRaw = (env["BENCH_PROFILE"] ?? "").trim()
  let profile: ReadonlyArray<TargetName>
  if (profileRaw === "" || profileRaw === "0" || profileRaw === "none") profile = []
  else if (profileRaw === "all" || profileRaw === "1") profile = TARGET_NAMES
  else if ((TARGET_NAMES as ReadonlyArray<string>).includes(profileRaw)) profile = [profileRaw as TargetName]
  else
    throw new Error(`BENCH_PROFILE must be one of ${TARGET_NAMES.join(", ")}, all (got ${JSON.stringify(profileRaw)})`)
  return {
    durationSec: positiveInt(env, "BENCH_DURATION", 10, 1),
    warmupSec: positiveInt(env, "BENCH_WARMUP", 2, 0),
    connections: positiveInt(env, "BENCH_CONNECTIONS", 32, 1),
    scenarios: env["BENCH_SCENARIOS"],
    targets: targetList(env["BENCH_TARGETS"]),
    profile,
    fromSource: (env["BENCH_FROM_SOURCE"] ?? "").trim() === "1"
  }
}
