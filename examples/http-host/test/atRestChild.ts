/**
 * The example host in its own process, recording which modules it loads: `node --import tsx
 * test/atRestChild.ts DB_FILE`. A loader hook (registered before the host is imported) reports
 * every module URL the process loads; the parent asks for them over IPC (`loaded`) and gets them
 * as an array. Sends `{ ready: url }` once the host listens.
 */
import { register } from "node:module"
import { MessageChannel } from "node:worker_threads"

const HOOKS = `
let port
export function initialize(data) { port = data.port }
export async function load(url, context, next) {
  port.postMessage(url)
  return next(url, context)
}
`

const loaded = new Set<string>()
const { port1, port2 } = new MessageChannel()
port1.on("message", (url: string) => loaded.add(url))
port1.unref()
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { port: port2 }, transferList: [port2] })

const { serve } = await import("../src/host.js")
const { OPERATOR_TOKEN } = await import("./harness.js")
const Redacted = await import("effect/Redacted")
const LogLevel = await import("effect/LogLevel")

const send = (message: unknown) => process.send!(message)
const host = await serve({
  dbFile: process.argv[2]!,
  port: 0,
  host: "127.0.0.1",
  allowInsecureHttp: true,
  operatorToken: Redacted.make(OPERATOR_TOKEN),
  log: { level: LogLevel.Warning }
})
process.on("message", (message: string) => {
  if (message === "loaded") {
    // The hook posts a URL before the module loads; a moment lets the last ones arrive.
    setTimeout(() => send({ loaded: [...loaded] }), 100)
  } else if (message === "stop") {
    void host.close().then(() => process.exit(0))
  }
})
process.on("disconnect", () => process.exit(1))
send({ ready: host.url })
