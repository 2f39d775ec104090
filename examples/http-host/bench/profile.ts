/**
 * Summarizes a V8 CPU profile written by `BENCH_PROFILE=waybill pnpm bench` (cpuprofile.ts maps
 * its frames back to the .ts sources):
 *
 *   pnpm --filter @waybill/example-http-host exec tsx bench/profile.ts <file.cpuprofile> [--top N]
 *
 * Four views, in milliseconds and as a share of the non-idle time:
 * 1. self time by area (Waybill package and file, or library: effect, kysely, node internals, ...);
 * 2. the hottest functions by self time;
 * 3. time by the nearest Waybill frame on the stack: each sample is charged to the innermost
 *    function of this repository that was on the stack, so library time lands on the Waybill
 *    code that called it. Effect runs fibers from its own scheduler, so time spent in the
 *    runtime between steps has no Waybill frame above it and is shown as such;
 * 4. inclusive time per function (its own time plus its synchronous callees).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url))

const SPECIAL = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"])

/** Repository-relative path of a frame's file, or undefined for library and native code. */
export const repoPath = (url: string): string | undefined => {
  const path = url.startsWith("file://") ? fileURLToPath(url) : url
  if (!path.startsWith(REPO_ROOT) || path.includes("/node_modules/")) return undefined
  return path.slice(REPO_ROOT.length)
}

/** A coarse owner for a frame: a Waybill file, a library, or a kind of runtime work. */
export const areaOf = (frame: CallFrame): string => {
  if (SPECIAL.has(frame.functionName)) return frame.functionName
  const own = repoPath(frame.url)
  if (own !== undefined) return own
  const lib = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//.exec(frame.url)
  if (lib !== null) return `lib: ${lib[1]}`
  if (frame.url.startsWith("node:")) {
    const m = /^node:internal\/([^/]+)(?:\/([^/.]+))?/.exec(frame.url)
    return m === null ? `node: ${frame.url.slice(5)}` : `node: ${m[1]}${m[2] === undefined ? "" : `/${m[2]}`}`
  }
  return frame.url === "" ? "native / builtins" : frame.url
}

const label = (frame: CallFrame): string => {
  const where = repoPath(frame.url) ?? frame.url.replace(/^.*node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, "")
  return `${frame.functionName || "(anonymous)"} ${where === "" ? "" : `${where}:${frame.lineNumber + 1}`}`.trim()
}

export interface Summary {
  readonly totalMs: number
  readonly idleMs: number
  readonly byArea: ReadonlyArray<readonly [string, number]>
  readonly bySelf: ReadonlyArray<readonly [string, number]>
  readonly byNearestWaybillFrame: ReadonlyArray<readonly [string, number]>
  /** Each function's time including everything it called synchronously (once per sample). */
  readonly byInclusive: ReadonlyArray<readonly [string, number]>
}

const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v)

export const summarize = (profile: CpuProfile): Summary => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const area = new Map<string, number>()
  const self = new Map<string, number>()
  const nearest = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let totalMs = 0
  let idleMs = 0
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000
    const node = byId.get(id)
    if (node === undefined) return
    totalMs += ms
    if (node.callFrame.functionName === "(idle)") {
      idleMs += ms
      return
    }
    add(area, areaOf(node.callFrame), ms)
    add(self, label(node.callFrame), ms)
    let at: ProfileNode | undefined = node
    let owner: string | undefined
    const onStack = new Set<string>()
    while (at !== undefined) {
      if (!SPECIAL.has(at.callFrame.functionName)) onStack.add(label(at.callFrame))
      if (owner === undefined && repoPath(at.callFrame.url) !== undefined) owner = label(at.callFrame)
      const up = parent.get(at.id)
      at = up === undefined ? undefined : byId.get(up)
    }
    for (const f of onStack) add(inclusive, f, ms)
    add(
      nearest,
      owner ??
        (SPECIAL.has(node.callFrame.functionName)
          ? node.callFrame.functionName
          : `(no Waybill frame) ${areaOf(node.callFrame)}`),
      ms
    )
  })
  return {
    totalMs,
    idleMs,
    byArea: sorted(area),
    bySelf: sorted(self),
    byNearestWaybillFrame: sorted(nearest),
    byInclusive: sorted(inclusive)
  }
}

export const formatSummary = (s: Summary, top: number): string => {
  const busy = s.totalMs - s.idleMs
  const rows = (title: string, entries: ReadonlyArray<readonly [string, number]>) => [
    "",
    title,
    ...entries
      .slice(0, top)
      .map(([k, ms]) => `${ms.toFixed(0).padStart(8)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${k}`)
  ]
  return [
    `profile: ${s.totalMs.toFixed(0)} ms sampled, ${s.idleMs.toFixed(0)} ms idle, ${busy.toFixed(0)} ms busy (percentages are of busy time)`,
    ...rows("self time by area", s.byArea),
    ...rows("hottest functions (self time)", s.bySelf),
    ...rows(
      "time by nearest Waybill frame on the stack (library time charged to its Waybill caller)",
      s.byNearestWaybillFrame
    ),
    ...rows(
      "inclusive time (the function and its synchronous callees; async continuations are not on its stack)",
      s.byInclusive
    )
  ].join("\n")
}

const main = (): void => {
  const args = process.argv.slice(2)
  const topAt = args.indexOf("--top")
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25
  // Without --top, topAt is -1 and `topAt + 1` would drop the first file.
  const files = args.filter((a, i) => a !== "--top" && (topAt < 0 || i !== topAt + 1))
  if (files.length === 0) {
    console.error("usage: tsx bench/profile.ts <file.cpuprofile> [...] [--top N]")
    process.exitCode = 2
    return
  }
  for (const file of files) {
    console.log(`== ${file}`)
    console.log(formatSummary(summarize(JSON.parse(readFileSync(file, "utf8")) as CpuProfile), top))
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
