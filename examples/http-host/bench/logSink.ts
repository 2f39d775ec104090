/**
 * Where the bench's Waybill logs: the JSON lines `serve` prints (one per request), formatted as
 * always but written to the null device, so their cost is measured without a terminal's.
 * `--quiet-logs` drops them instead (warnings and errors only), to see what logging costs.
 */
import { createWriteStream } from "node:fs"
import { devNull } from "node:os"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type { LogOptions } from "../src/observability.js"

export const benchLog = (): LogOptions => {
  if (process.argv.includes("--quiet-logs")) return { level: LogLevel.Warning }
  const sink = createWriteStream(devNull)
  return {
    logger: Logger.map(Logger.jsonLogger, (line) => {
      sink.write(`${line}\n`)
    })
  }
}
