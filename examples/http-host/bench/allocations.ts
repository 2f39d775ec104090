/**
 * Where a request's allocations go: V8's sampling heap profiler over a measured window, counting
 * every sampled allocation, also those garbage-collected since (a heap snapshot or `--heap-prof`
 * shows only what is still alive). The bytes are charged to the package that allocated them, so
 * the figure answers "how much does each request allocate, and whose code allocates it", which
 * is what drives garbage-collection time and the old generation's growth under load (peak RSS).
 */
import { Session } from "node:inspector/promises"
import { areaOf, repoPath } from "./profile.js"

interface Node {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<Node>
}

/**
 * The package of a script URL, from the CPU profile's areas (`bench/profile.ts`): a library's
 * name, a Waybill workspace folder (`packages/core`), node's own, or V8's built-ins.
 */
export const packageOf = (url: string): string => {
  const area = areaOf({ functionName: "", url, lineNumber: 0 })
  if (area.startsWith("lib: ")) return area.slice(5)
  if (area.startsWith("node: ")) return "node"
  if (area === "native / builtins") return "(V8 built-ins and native)"
  const workspace = /^(packages|adapters|examples)\/[^/]+/.exec(area)
  return workspace === null ? area : workspace[0]
}

export interface Allocations {
  /** Sampled bytes by package, largest first. */
  readonly byPackage: ReadonlyArray<readonly [string, number]>
  /** Sampled bytes by allocating function (`name file:line`), largest first. */
  readonly byFunction: ReadonlyArray<readonly [string, number]>
  /**
   * Sampled bytes by the innermost function of this repository on the allocating stack (library
   * allocations charged to the Waybill code that called into the library), largest first.
   */
  readonly byWaybillFrame: ReadonlyArray<readonly [string, number]>
  readonly totalBytes: number
}

/**
 * Starts sampling (one sample per `intervalBytes` allocated, on average); `stop` sums the samples.
 * With `survivorsOnly`, objects that a young-generation collection freed are left out: what is
 * counted is what lived long enough to be promoted to the old generation (or is still alive).
 */
export const startAllocationSampling = async (intervalBytes = 32 * 1024, survivorsOnly = false) => {
  const session = new Session()
  session.connect()
  await session.post("HeapProfiler.enable")
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !survivorsOnly
  })
  return {
    stop: async (): Promise<Allocations> => {
      const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: Node } }
      session.disconnect()
      const sums = new Map<string, number>()
      const functions = new Map<string, number>()
      const frames = new Map<string, number>()
      let totalBytes = 0
      const walk = (node: Node, waybill: string) => {
        const name = packageOf(node.callFrame.url)
        sums.set(name, (sums.get(name) ?? 0) + node.selfSize)
        const { functionName, lineNumber, url } = node.callFrame
        const where = `${functionName || "(anonymous)"} ${url.slice(url.lastIndexOf("/") + 1)}:${lineNumber + 1}`
        functions.set(where, (functions.get(where) ?? 0) + node.selfSize)
        const own = repoPath(url)
        const nearest = own === undefined ? waybill : `${functionName || "(anonymous)"} ${own}:${lineNumber + 1}`
        frames.set(nearest, (frames.get(nearest) ?? 0) + node.selfSize)
        totalBytes += node.selfSize
        for (const child of node.children) walk(child, nearest)
      }
      walk(profile.head, "(no Waybill frame)")
      const largest = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1])
      return { byPackage: largest(sums), byFunction: largest(functions), byWaybillFrame: largest(frames), totalBytes }
    }
  }
}

/** Prints {@link Allocations} per unit of work (`count` of them): the 12 largest packages, the 15 largest functions. */
export const printAllocations = (
  { byFunction, byPackage, byWaybillFrame, totalBytes }: Allocations,
  count: number,
  unit: string
) => {
  const kb = (bytes: number) => `${(bytes / 1024 / count).toFixed(1)} KB`
  const line = ([name, bytes]: readonly [string, number]) =>
    console.log(`${kb(bytes).padStart(10)} ${((bytes / totalBytes) * 100).toFixed(1).padStart(5)}%  ${name}`)
  console.log(`allocated per ${unit} (sampled): ${kb(totalBytes)}`)
  byPackage.slice(0, 12).forEach(line)
  console.log("by allocating function:")
  byFunction.slice(0, Number(process.env["BENCH_ALLOC_ROWS"] ?? 15)).forEach(line)
  console.log("by nearest Waybill frame (library allocations charged to the Waybill code that called in):")
  byWaybillFrame.slice(0, Number(process.env["BENCH_ALLOC_ROWS"] ?? 20)).forEach(line)
}
