/**
 * @module checkpointer
 *
 * SQLite in WAL mode appends every commit to the `-wal` file and, by default, the connection that
 * commits copies the WAL back into the database file once it holds 1000 pages (a checkpoint,
 * with an fsync). On a server that checkpoint runs inside some request's COMMIT: in the booking
 * benchmark it was half of what a commit cost.
 *
 * The checkpointer takes it out of the commits. It keeps a connection of its own and runs a
 * `PASSIVE` checkpoint, which never blocks the writer and copies what no reader still needs, at a
 * moment it chooses: every `intervalMs` it looks at how busy the event loop was since its last
 * look, and checkpoints when the loop had time to spare. Under a load that leaves none, it
 * checkpoints anyway when the WAL is likely to hold half the safety net's pages (estimated from
 * how fast the last checkpoint's WAL grew), and at the latest `maxDelayMs` after the last one: a
 * checkpoint then copies many commits at once, and a page they wrote many times only once. The
 * serving connection keeps a far larger automatic threshold as that safety net, so the WAL stays
 * bounded whatever happens here. Durability is unchanged: that is `synchronous`, not who
 * checkpoints.
 *
 * It runs on the event loop rather than in a worker thread: a worker's isolate held about 8 MiB
 * for the life of the server, and on the one core the benchmark gives a server it took the same
 * CPU (docs/benchmarks.md, "Memory at rest (2026-11-28, session 11)").
 */
import { performance } from "node:perf_hooks"
import Database from "better-sqlite3"

/** Pages in the WAL at which the serving connection checkpoints itself (about 40 MiB). */
export const SAFETY_NET_PAGES = 10_000

/** The event loop counts as having time to spare when it was busy less than this share of the last interval. */
const SPARE_UTILIZATION = 0.5

/** WAL pages a checkpoint under load aims to copy at most: half the safety net, for headroom. */
const BATCH_PAGES = SAFETY_NET_PAGES / 2

export interface CheckpointerOptions {
  /** Milliseconds between two looks at the event loop (default 100). */
  readonly intervalMs?: number
  /** The longest a checkpoint waits for the event loop to have time to spare (default 1000). */
  readonly maxDelayMs?: number
  /** Called with the message of a failed checkpoint (default: one line on stderr). */
  readonly onError?: (message: string) => void
}

export interface Checkpointer {
  /** Runs a last checkpoint and closes the checkpointer's connection. */
  readonly stop: () => Promise<void>
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Starts checkpointing `file` (a WAL-mode SQLite database) from a connection of its own. */
export const startCheckpointer = (file: string, options: CheckpointerOptions = {}): Checkpointer => {
  const intervalMs = options.intervalMs ?? 100
  const maxDelayMs = options.maxDelayMs ?? 1000
  const onError = options.onError ?? ((message: string) => process.stderr.write(`waybill checkpointer: ${message}\n`))
  let db: Database.Database
  try {
    db = new Database(file, { fileMustExist: true })
  } catch (error) {
    onError(messageOf(error))
    return { stop: () => Promise.resolve() }
  }
  let last = performance.now()
  /** When, after the last checkpoint, the next one runs however busy the event loop is. */
  let due = maxDelayMs
  const checkpoint = () => {
    try {
      const [result] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ readonly log: number }>
      const now = performance.now()
      // The WAL's pages when it ran, over the time since the one before: how fast it grows.
      const pagesPerMs = (result?.log ?? 0) / Math.max(1, now - last)
      due = Math.min(maxDelayMs, Math.max(intervalMs, pagesPerMs > 0 ? BATCH_PAGES / pagesPerMs : maxDelayMs))
      last = now
    } catch (error) {
      onError(messageOf(error))
      last = performance.now()
    }
  }
  let looked = performance.eventLoopUtilization()
  const look = () => {
    const now = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(now, looked).utilization
    looked = now
    if (busy < SPARE_UTILIZATION || performance.now() - last >= due) checkpoint()
  }
  // Never keeps a process alive by itself (a CLI that forgot to stop it still exits).
  const timer = setInterval(look, intervalMs).unref()
  let stopping: Promise<void> | undefined
  return {
    stop: () => {
      stopping ??= (async () => {
        clearInterval(timer)
        checkpoint()
        db.close()
      })()
      return stopping
    }
  }
}
