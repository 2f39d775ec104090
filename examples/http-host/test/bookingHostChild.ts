/**
 * The example host in its own process, for the booking crash test: `node --import tsx
 * test/bookingHostChild.ts DB_FILE`. Serves the database (WAL, background checkpoints, group
 * commit: what `waybill serve` runs) on a free loopback port with rate limits out of the way,
 * and prints `ready URL` once it listens. The test kills it with SIGKILL under load.
 */
import { Config } from "@waybill/core"
import { serve } from "../src/host.js"

const [dbFile] = process.argv.slice(2)
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
