/**
 * @module checkpointer
 *
 * SQLite in WAL mode appends every commit to the `-wal` file and, by default, the connection that
 * commits copies the WAL back into the database file once it holds 1000 pages (a checkpoint,
 * with an fsync). On a server that checkpoint runs inside some request's COMMIT, on the event
 * loop: in the booking benchmark it was half of what a commit cost.
 *
 * The checkpointer moves it to a worker thread with its own connection, which runs a `PASSIVE`
 * checkpoint every `intervalMs`: it never blocks the writer, and copies what no reader still
 * needs. The serving connection keeps a far larger automatic threshold as a safety net, so the
 * WAL is still bounded if the worker stops or falls behind. Durability is unchanged: that is
 * `synchronous`, not who checkpoints.
 */
import { createRequire } from "node:module"
import { inspect } from "node:util"
import { Worker } from "node:worker_threads"

/** Pages in the WAL at which the serving connection checkpoints itself (about 40 MiB). */
export const SAFETY_NET_PAGES = 10_000

// Plain CommonJS, evaluated in the worker: the driver's path is resolved here and passed in.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma("busy_timeout = 1000")
let timer
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
  } catch (error) {
    parentPort.postMessage({ type: "error", message: String((error && error.message) || error) })
  }
}
const step = () => {
  checkpoint()
  timer = setTimeout(step, workerData.intervalMs)
}
timer = setTimeout(step, workerData.intervalMs)
parentPort.on("message", (message) => {
  if (message !== "stop") return
  clearTimeout(timer)
  checkpoint()
  db.close()
  parentPort.close()
})
`

export interface CheckpointerOptions {
  /** Milliseconds between two checkpoints (default 100). */
  readonly intervalMs?: number
  /** Called with the message of a failed checkpoint (default: one line on stderr). */
  readonly onError?: (message: string) => void
}

export interface Checkpointer {
  /** Runs a last checkpoint, closes the worker's connection and waits for the worker to exit. */
  readonly stop: () => Promise<void>
}

/** Starts checkpointing `file` (a WAL-mode SQLite database) from a worker thread. */
export const startCheckpointer = (file: string, options: CheckpointerOptions = {}): Checkpointer => {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3")
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver, intervalMs: options.intervalMs ?? 100 }
  })
  const onError = options.onError ?? ((message: string) => process.stderr.write(`waybill checkpointer: ${message}\n`))
  worker.on("message", (m: { readonly type: string; readonly message: string }) => {
    if (m.type === "error") onError(m.message)
  })
  // The worker could not start (or threw outside a checkpoint): the error may arrive as a plain
  // clone rather than an Error.
  worker.on("error", (error: unknown) => {
    const message = (error as { readonly message?: unknown } | undefined)?.message
    onError(typeof message === "string" ? message : inspect(error))
  })
  // Never keeps a process alive by itself (a CLI that forgot to stop it still exits).
  worker.unref()
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()))
  let stopping: Promise<void> | undefined
  return {
    stop: () => {
      stopping ??= (async () => {
        worker.postMessage("stop")
        const timeout = setTimeout(() => void worker.terminate(), 5000)
        await exited
        clearTimeout(timeout)
      })()
      return stopping
    }
  }
}
