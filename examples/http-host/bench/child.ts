/**
 * Entry point of a server child: `node --import tsx bench/child.ts <target> <dbFile> [<postgres url>]`
 * (with the URL, the target runs on that PostgreSQL database and the file only places local
 * files). Starts
 * one target on 127.0.0.1 with an OS-assigned port, reports over IPC (see protocol.ts), and
 * exits on `stop` or when the orchestrator goes away. On request it profiles its own CPU
 * (cpuprofile.ts) between `profile-start` and `profile-stop`.
 */
import { getHeapSpaceStatistics } from "node:v8"
import { type Profiler, startProfiler } from "./cpuprofile.js"
import type { ChildMemory, ChildMessage, ChildOp, ChildOpResult, ParentMessage } from "./protocol.js"
import { isTargetName } from "./target.js"
import { loadTarget } from "./targets.js"

const send = (message: ChildMessage): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined) throw new Error("bench/child.ts must be spawned with an IPC channel")
    process.send(message, undefined, {}, () => resolve())
  })

const MiB = 1024 * 1024
/** RSS before the target's modules load: Node, the module loader (tsx) and this file's imports. */
const beforeTarget = process.memoryUsage.rss() / MiB

const memory = (gc: boolean): ChildMemory => {
  if (gc) {
    const collect = (globalThis as { gc?: () => void }).gc
    if (collect === undefined) throw new Error("memory gc needs the child started with --expose-gc")
    collect()
  }
  const m = process.memoryUsage()
  const old = getHeapSpaceStatistics().find((s) => s.space_name === "old_space")
  return {
    beforeTargetMiB: beforeTarget,
    rssMiB: m.rss / MiB,
    heapTotalMiB: m.heapTotal / MiB,
    heapUsedMiB: m.heapUsed / MiB,
    oldSpaceMiB: (old?.space_size ?? 0) / MiB,
    externalMiB: m.external / MiB,
    maxRssMiB: process.resourceUsage().maxRSS / 1024
  }
}

const main = async (): Promise<void> => {
  const [name, dbFile, databaseUrl] = process.argv.slice(2)
  if (name === undefined || !isTargetName(name) || dbFile === undefined) {
    throw new Error(`usage: child.ts <waybill|floor> <dbFile> (got ${process.argv.slice(2).join(" ")})`)
  }
  const start = await loadTarget(name, databaseUrl !== undefined)
  const target = await start({
    dbFile,
    host: "127.0.0.1",
    port: 0,
    ...(databaseUrl === undefined ? {} : { databaseUrl })
  })

  let profiler: Profiler | undefined

  const answer = async (op: ChildOp, arg: string | undefined): Promise<ChildOpResult[ChildOp]> => {
    switch (op) {
      case "usage": {
        const r = process.resourceUsage()
        return { userMicros: r.userCPUTime, systemMicros: r.systemCPUTime, maxRssKiB: r.maxRSS }
      }
      case "memory":
        return memory(arg === "gc")
      case "rows":
        return target.rowCounts()
      case "profile-start":
        if (profiler !== undefined) throw new Error("the profiler is already running")
        profiler = await startProfiler()
        return null
      case "profile-stop": {
        if (profiler === undefined || arg === undefined)
          throw new Error("profile-stop needs a running profiler and a file")
        const file = await profiler.stop(arg)
        profiler = undefined
        return file
      }
      case "stop":
        await target.close()
        return null
    }
  }

  process.on("message", (message: ParentMessage) => {
    answer(message.op, message.arg).then(
      async (value) => {
        await send({ type: "reply", id: message.id, ok: true, value })
        if (message.op === "stop") process.exit(0)
      },
      (error: unknown) => send({ type: "reply", id: message.id, ok: false, message: String(error) })
    )
  })
  process.on("disconnect", () => process.exit(1))
  await send({ type: "ready", url: target.url, apiKey: target.apiKey, pragmas: target.pragmas })
}

main().catch(async (error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error)
  if (process.send !== undefined) await send({ type: "failed", message })
  else console.error(message)
  process.exit(1)
})
