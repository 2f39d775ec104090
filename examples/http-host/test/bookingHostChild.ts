/**
 * The example host in its own process, for the booking crash tests: `node --import tsx
 * test/bookingHostChild.ts DB_FILE [crash-before-answer]`. Serves the database (WAL, background
 * checkpoints, group commit: what `waybill serve` runs) on a free loopback port with rate limits
 * out of the way, and prints `ready URL` once it listens. The tests kill it with SIGKILL under
 * load; with `crash-before-answer`, the host kills itself the moment it starts writing the answer
 * to a request with an `Idempotency-Key`: after the request's COMMIT (the handler answers only
 * once its commit returned), before the client hears anything.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Config } from "@waybill/core"
import { serve } from "../src/host.js"

const [dbFile, mode] = process.argv.slice(2)
const host = await serve({
  dbFile: dbFile!,
  port: 0,
  host: "127.0.0.1",
  allowInsecureHttp: true,
  webhooks: { dispatch: false },
  config: {
    ...Config.defaults,
    limits: {
      perKey: { requests: 1_000_000_000, windowSeconds: 60 },
      perClient: { requests: 1_000_000_000, windowSeconds: 60 },
      abuse: { ...Config.defaults.limits.abuse, maxMisses: 1_000_000, maxUnrelatedAccounts: 1_000_000 }
    }
  }
})
process.stdout.write(`ready ${host.url}\n`)

if (mode === "crash-before-answer") {
  const listeners = host.server.listeners("request") as Array<(req: IncomingMessage, res: ServerResponse) => void>
  host.server.removeAllListeners("request")
  host.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers["idempotency-key"] !== undefined) {
      const die = (): never => {
        process.kill(process.pid, "SIGKILL")
        throw new Error("unreachable")
      }
      res.writeHead = die
      res.write = die
      res.end = die
    }
    for (const listener of listeners) listener(req, res)
  })
}
