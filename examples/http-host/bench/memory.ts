/**
 * Where a server's memory goes, target by target: `pnpm build`, then from examples/http-host
 *
 *   node --import tsx bench/memory.ts [waybill,floor,ceiling] [--seconds 10]
 *
 * Each target runs in a child process (child.ts, as in `pnpm bench`, built packages, pinned to
 * CPU 1 when `taskset` exists) started with `--expose-gc`. The table shows its RSS before it
 * loaded its target's modules (Node and tsx), at rest after start-up, the peak RSS of a
 * book-single load (32 connections, `--seconds`), and then, after a full collection, the
 * V8 heap that is live and the old generation V8 kept. The gap between the peak and the rest
 * is garbage the load left in the old generation; the gap between the rest and the first
 * column is the code and data the target loads. "CPU us/req" is the child's CPU time (every
 * thread) during the load over the requests answered, as `pnpm bench` counts it. See
 * docs/benchmarks.md, "Memory" and "Memory at rest (2026-11-28, session 11)".
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import type { ChildMemory, ChildMessage, ChildOp, ChildOpResult } from "./protocol.js"
import { bookSingle } from "./scenarios.js"
import { isTargetName, type TargetName } from "./target.js"

const HOST_DIR = fileURLToPath(new URL("../", import.meta.url))
const CHILD_ENTRY = fileURLToPath(new URL("./child.ts", import.meta.url))

const args = process.argv.slice(2)
const secondsAt = args.indexOf("--seconds")
const seconds = secondsAt === -1 ? 10 : Number(args[secondsAt + 1])
const names = (args.find((a, i) => !a.startsWith("--") && i !== secondsAt + 1) ?? "waybill,floor").split(",")
const targets = names.filter(isTargetName)
if (targets.length !== names.length || !(seconds > 0)) {
  console.error("usage: node --import tsx bench/memory.ts [waybill,floor,ceiling] [--seconds 10]")
  process.exit(2)
}

const pinned = ((): boolean => {
  if (cpus().length < 2) return false
  try {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

interface Row {
  readonly target: TargetName
  readonly reqPerSec: number
  readonly cpuMicrosPerRequest: number
  readonly rest: ChildMemory
  readonly loaded: ChildMemory
  readonly live: ChildMemory
}

const measure = async (target: TargetName, dir: string): Promise<Row> => {
  const childArgs = ["--expose-gc", "--import", "tsx", CHILD_ENTRY, target, join(dir, `${target}.db`)]
  const child = pinned
    ? spawn("taskset", ["-c", "1", process.execPath, ...childArgs], {
        cwd: HOST_DIR,
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
    : spawn(process.execPath, childArgs, { cwd: HOST_DIR, stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const waiting = new Map<number, (message: ChildMessage) => void>()
  let nextId = 1
  const ready = new Promise<Extract<ChildMessage, { type: "ready" }>>((resolve, reject) => {
    child.on("message", (message: ChildMessage) => {
      if (message.type === "ready") resolve(message)
      else if (message.type === "failed") reject(new Error(`${target} failed to start:\n${message.message}`))
      else waiting.get(message.id)?.(message)
    })
    child.once("exit", (code) => reject(new Error(`${target} exited (code ${code})`)))
  })
  const request = <Op extends ChildOp>(op: Op, arg?: string): Promise<ChildOpResult[Op]> =>
    new Promise((resolve, reject) => {
      const id = nextId++
      waiting.set(id, (message) => {
        waiting.delete(id)
        if (message.type === "reply" && message.ok) resolve(message.value as ChildOpResult[Op])
        else reject(new Error(`${target} ${op}: ${message.type === "reply" && !message.ok ? message.message : "?"}`))
      })
      child.send({ id, op, ...(arg === undefined ? {} : { arg }) })
    })
  try {
    const { url, apiKey } = await ready
    const rest = await request("memory")
    const cpuBefore = await request("usage")
    const spec = bookSingle.request({ url, apiKey })
    const result = await autocannon({
      url: `${url}${spec.path}`,
      method: spec.method,
      headers: spec.headers,
      ...(spec.body === undefined ? {} : { body: spec.body }),
      connections: 32,
      duration: seconds
    })
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${target}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    const cpuAfter = await request("usage")
    const loaded = await request("memory")
    const live = await request("memory", "gc")
    await request("stop")
    const cpu = cpuAfter.userMicros + cpuAfter.systemMicros - (cpuBefore.userMicros + cpuBefore.systemMicros)
    const cpuMicrosPerRequest = cpu / Math.max(1, result.requests.total)
    return { target, reqPerSec: result.requests.average, cpuMicrosPerRequest, rest, loaded, live }
  } finally {
    child.kill()
  }
}

const dir = mkdtempSync(join(tmpdir(), "waybill-memory-"))
try {
  const rows: Array<Row> = []
  for (const target of targets) rows.push(await measure(target, dir))
  const f = (n: number) => n.toFixed(1)
  console.log(
    `book-single, 32 connections, ${seconds} s; ${pinned ? "pinned (load on CPU 0, server on CPU 1)" : "not pinned"}; MiB`
  )
  console.log(
    [
      "target",
      "req/s",
      "CPU us/req",
      "before target",
      "at rest",
      "peak RSS",
      "heap used at peak",
      "live heap after gc",
      "old space after gc",
      "external"
    ].join(" | ")
  )
  for (const r of rows)
    console.log(
      [
        r.target,
        Math.round(r.reqPerSec),
        Math.round(r.cpuMicrosPerRequest),
        f(r.rest.beforeTargetMiB),
        f(r.rest.rssMiB),
        f(r.live.maxRssMiB),
        f(r.loaded.heapUsedMiB),
        f(r.live.heapUsedMiB),
        f(r.live.oldSpaceMiB),
        f(r.live.externalMiB)
      ].join(" | ")
    )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
