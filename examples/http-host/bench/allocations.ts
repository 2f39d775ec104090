/**
 * Where a request's allocations go: V8's sampling heap profiler over a measured window, counting
 * every sampled allocation, also those garbage-collected since (a heap snapshot or `--heap-prof`
 * shows only what is still alive). The bytes are charged to the package that allocated them, so
 * the figure answers "how much does each request allocate, and whose code allocates it", which
 * is what drives garbage-collection time and the old generation's growth under load (peak RSS).
 */
import { Session } from "node:inspector/promises"
import { areaOf } from "./profile.js"

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
  readonly totalBytes: number
}

/** Starts sampling (one sample per `intervalBytes` allocated, on average); `stop` sums the samples. */
export const startAllocationSampling = async (intervalBytes = 32 * 1024) => {
  const session = new Session()
  session.connect()
  await session.post("HeapProfiler.enable")
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  return {
    stop: async (): Promise<Allocations> => {
      const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: Node } }
      session.disconnect()
      const sums = new Map<string, number>()
      let totalBytes = 0
      const walk = (node: Node) => {
        const name = packageOf(node.callFrame.url)
        sums.set(name, (sums.get(name) ?? 0) + node.selfSize)
        totalBytes += node.selfSize
        for (const child of node.children) walk(child)
      }
      walk(profile.head)
      return { byPackage: [...sums.entries()].sort((a, b) => b[1] - a[1]), totalBytes }
    }
  }
}
