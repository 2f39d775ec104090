import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import { afterEach, describe, expect, it } from "vitest"
import { SAFETY_NET_PAGES, startCheckpointer } from "../src/checkpointer.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A WAL database whose connection never checkpoints by itself during the test. */
const walDatabase = () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-ckpt-"))
  dirs.push(dir)
  const file = join(dir, "t.db")
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`)
  db.exec("create table t (v text not null)")
  return { db, file }
}

const waitFor = async (condition: () => boolean, ms = 5000) => {
  const until = Date.now() + ms
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Keeps the event loop busy for `ms`, in turns of a few milliseconds (timers still run between them). */
const busyFor = (ms: number) =>
  new Promise<void>((resolve) => {
    const until = Date.now() + ms
    const turn = () => {
      const end = Math.min(until, Date.now() + 5)
      while (Date.now() < end) {
        // a request's work
      }
      if (Date.now() >= until) resolve()
      else setImmediate(turn)
    }
    setImmediate(turn)
  })

/** A WAL of 2000 committed rows (about 2 MB) that nothing has checkpointed yet. */
const filledWal = () => {
  const { db, file } = walDatabase()
  const insert = db.prepare("insert into t (v) values (?)")
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run("x".repeat(1000))
  })()
  expect(statSync(file).size).toBeLessThan(64 * 1024) // everything is still in the WAL
  return { db, file }
}

describe("checkpointer", () => {
  it("copies committed pages into the database file when the event loop has time to spare, without the writer checkpointing", async () => {
    const { db, file } = filledWal()
    const checkpointer = startCheckpointer(file, { intervalMs: 10 })
    await waitFor(() => statSync(file).size > 1024 * 1024)
    await checkpointer.stop()
    // Nothing left for a checkpoint to copy: the checkpointer got it all.
    const [result] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number; checkpointed: number }>
    expect(result!.checkpointed).toBe(result!.log)
    expect(db.prepare("select count(*) as n from t").get()).toEqual({ n: 2000 })
    db.close()
  })

  it("waits while the event loop is busy, and checkpoints anyway once maxDelayMs have passed", async () => {
    const { db, file } = filledWal()
    const checkpointer = startCheckpointer(file, { intervalMs: 10, maxDelayMs: 400 })
    await busyFor(150)
    expect(statSync(file).size).toBeLessThan(64 * 1024)
    await busyFor(600)
    expect(statSync(file).size).toBeGreaterThan(1024 * 1024)
    await checkpointer.stop()
    db.close()
  })

  it("stops once, and reports a database it cannot open", async () => {
    const errors: Array<string> = []
    const dir = mkdtempSync(join(tmpdir(), "waybill-ckpt-"))
    dirs.push(dir)
    const checkpointer = startCheckpointer(join(dir, "missing.db"), { onError: (m) => errors.push(m) })
    await waitFor(() => errors.length > 0)
    expect(errors[0]).toMatch(/CANTOPEN|unable to open|does not exist/i)
    await Promise.all([checkpointer.stop(), checkpointer.stop()])
  })
})
