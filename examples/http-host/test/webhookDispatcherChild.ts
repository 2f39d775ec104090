/**
 * A dispatcher in its own process, for the crash test: `node --import tsx
 * test/webhookDispatcherChild.ts DB_FILE CA_FILE LEASE_MS`. Prints `ready` once running; the
 * test kills it with SIGKILL mid-delivery.
 */
import { readFileSync } from "node:fs"
import { openDatabase } from "../src/host.js"
import { startDispatcher } from "../src/webhooks.js"

const [dbFile, caFile, leaseMs] = process.argv.slice(2)
const database = await openDatabase(dbFile!)
startDispatcher(database.engine, `${dbFile}.secret`, {
  allowPrivate: ["127.0.0.1"],
  ca: [readFileSync(caFile!, "utf8")],
  idleMs: 20,
  leaseMs: Number(leaseMs)
})
process.stdout.write("ready\n")
