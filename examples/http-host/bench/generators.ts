/**
 * What a generator function made per call costs, against one made once: the reason request
 * programs are written as `Effect.fnUntraced(function* (args) { ... })` at module level rather
 * than as `(args) => Effect.gen(function* () { ... })` (docs/benchmarks.md, "Generator functions
 * made once").
 *
 *   cd examples/http-host && taskset -c 1 node --import tsx bench/generators.ts
 *
 * Each variant runs in a child process of its own with `--trace-gc-nvp`, as requests run in a
 * server: 32 loops of promise-chained calls, each call keeping a small object graph (the
 * "request") until its promise settles. Printed: CPU per call, and the average bytes each young
 * generation collection (scavenge) promoted to the old generation and the time it took, over the
 * last 40 scavenges (the steady state).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const VARIANTS = {
  /** A generator function defined once, called with the call's values (what `Effect.fnUntraced` does). */
  "generator made once": "once",
  /** A generator function expression evaluated per call, closing over the call's values (`Effect.gen` in a function). */
  "generator made per call": "per-call",
  /** The same closure per call, but a plain function: closures alone are not the cost. */
  "plain closure per call": "closure"
} as const

type Variant = (typeof VARIANTS)[keyof typeof VARIANTS]

const CALLS = 2_000_000
const LOOPS = 32

function* made(request: { readonly items: ReadonlyArray<number> }) {
  yield request.items.length
}

const call = (variant: Variant): Promise<number> => {
  const request = { items: new Array<number>(50).fill(1) }
  if (variant === "once") return Promise.resolve(made(request).next().value as number)
  if (variant === "per-call") {
    const generator = (function* () {
      yield request.items.length
    })()
    return Promise.resolve(generator.next().value as number)
  }
  const closure = () => request.items.length
  return Promise.resolve(closure())
}

const child = async (variant: Variant) => {
  let next = 0
  const start = process.cpuUsage()
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (next++ < CALLS) await call(variant)
    })
  )
  const used = process.cpuUsage(start)
  console.log(`cpu-us-per-call=${((used.user + used.system) / CALLS).toFixed(3)}`)
}

/** Averages of `promoted=` and `scavenge=` over the last 40 scavenges of a `--trace-gc-nvp` log. */
const scavenges = (log: string) => {
  const lines = log.split("\n").filter((line) => line.includes("gc=s "))
  const last = lines.slice(-40)
  const field = (line: string, name: string) => Number(new RegExp(`\\b${name}=([0-9.]+)`).exec(line)?.[1] ?? 0)
  const average = (name: string) => last.reduce((sum, line) => sum + field(line, name), 0) / Math.max(1, last.length)
  return { count: lines.length, promoted: average("promoted"), ms: average("scavenge") }
}

const variantArg = process.argv[process.argv.indexOf("--variant") + 1]
if (process.argv.includes("--variant")) {
  await child(variantArg as Variant)
} else {
  const self = fileURLToPath(import.meta.url)
  console.log(
    `${CALLS.toLocaleString("en-US")} calls in ${LOOPS} promise-chained loops, each variant in its own process`
  )
  console.log("variant                   CPU us/call  scavenges  promoted KB/scavenge  ms/scavenge")
  for (const [name, variant] of Object.entries(VARIANTS)) {
    const run = spawnSync(process.execPath, ["--trace-gc-nvp", "--import", "tsx", self, "--variant", variant], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024
    })
    if (run.status !== 0) throw new Error(`${name}: ${run.stderr}`)
    const cpu = /cpu-us-per-call=([0-9.]+)/.exec(run.stdout)?.[1] ?? "?"
    const gc = scavenges(run.stdout)
    console.log(
      `${name.padEnd(26)}${cpu.padStart(11)}${String(gc.count).padStart(11)}${(gc.promoted / 1024).toFixed(0).padStart(22)}${gc.ms.toFixed(2).padStart(13)}`
    )
  }
}
