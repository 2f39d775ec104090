/**
 * The activity log as the hand-written targets keep it: what Waybill's recorder does
 * (`packages/http`, `ActivityRecording`), written by hand. A call whose key matched is pushed on
 * an in-memory buffer when its answer is finished; the buffer is written as one multi-row insert
 * in one transaction every 250 ms, or at once when 500 calls wait. So the ceiling and the
 * PostgreSQL floor do the same writes as Waybill, and bench.test.ts can compare their rows.
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"

export interface ActivityRow {
  readonly id: string
  readonly at: number
  readonly customerNo: string
  readonly method: string
  readonly path: string
  readonly keyMode: string
  readonly status: number
  readonly clientIp: string
  readonly requestId: string
}

export const ACTIVITY_COLUMNS = `("id", "at", "customer_no", "method", "path", "key_mode", "status", "client_ip", "request_id")`

/** A row's values in the order of {@link ACTIVITY_COLUMNS}. */
export const activityValues = (r: ActivityRow): Array<string | number> => [
  r.id,
  r.at,
  r.customerNo,
  r.method,
  r.path,
  r.keyMode,
  r.status,
  r.clientIp,
  r.requestId
]

export interface ActivityBatcher {
  /** Records the call of `req` for `customerNo` with the status its answer finishes with. */
  readonly track: (req: IncomingMessage, res: ServerResponse, customerNo: string, keyMode: string) => void
  /** Writes what waits and stops the timer. */
  readonly close: () => Promise<void>
}

/** A batcher over `write`, which stores one batch in one transaction. */
export const activityBatcher = (
  write: (rows: ReadonlyArray<ActivityRow>) => void | Promise<void>,
  options: { readonly everyMs?: number; readonly maxBatch?: number } = {}
): ActivityBatcher => {
  const everyMs = options.everyMs ?? 250
  const maxBatch = options.maxBatch ?? 500
  let waiting: Array<ActivityRow> = []
  let writing: Promise<void> = Promise.resolve()
  const flush = () => {
    if (waiting.length === 0) return writing
    const batch = waiting
    waiting = []
    writing = writing.then(() => write(batch)).catch(() => undefined)
    return writing
  }
  const timer = setInterval(() => void flush(), everyMs)
  timer.unref()
  return {
    track: (req, res, customerNo, keyMode) => {
      const at = Date.now()
      res.once("finish", () => {
        waiting.push({
          id: randomBytes(13).toString("hex"),
          at,
          customerNo,
          method: req.method ?? "",
          path: (req.url ?? "").split("?", 1)[0]!,
          keyMode,
          status: res.statusCode,
          clientIp: req.socket.remoteAddress ?? "",
          requestId: randomBytes(13).toString("hex")
        })
        if (waiting.length >= maxBatch) void flush()
      })
    },
    close: async () => {
      clearInterval(timer)
      await flush()
    }
  }
}
