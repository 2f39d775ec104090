/**
 * The host on PostgreSQL, end to end: `pnpm waybill serve --database-url` on a fresh database
 * (created under a random name on the test server, `WAYBILL_PG_URL`, and dropped at the end)
 * books, cancels, and serves a document that `document add --database-url` stored in the
 * database; a host with another master secret refuses to start, on PostgreSQL and on SQLite.
 * Without a server the suite fails on CI (`CI=true`) and is skipped, with a notice in its title,
 * elsewhere.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pdf } from "./documentFiles.js"
import { databaseUrl, postgresSuite, withClient } from "./postgresServer.js"
import { bookOne, ops, OPERATOR_TOKEN, waitFor } from "./harness.js"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "..")
const cli = resolve(root, "src/cli.ts")
const database = `waybill_e2e_${process.pid}_${Date.now().toString(36)}`
const url = databaseUrl(database)

let dir: string
let secret: string
let server: ChildProcess | undefined
let started: { readonly url: string; readonly db: string; readonly demo_account: { readonly test_key: string } }

/** Runs the CLI; answers its exit code and its last line of JSON (`--json`). */
const waybill = async (...args: Array<string>) => {
  try {
    const { stdout } = await run(process.execPath, ["--import", "tsx", cli, ...args, "--json"], { cwd: root })
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) }
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string }
    return { code: err.code, out: JSON.parse(err.stdout.trim().split("\n").at(-1) || "{}") }
  }
}

const { suite, title } = await postgresSuite("pnpm waybill on PostgreSQL")

suite(title, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "waybill-pg-"))
    secret = join(dir, "fleet.secret")
    await withClient((c) => c.query(`create database ${database}`))
    server = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        cli,
        "serve",
        "--database-url",
        url,
        "--secret-file",
        secret,
        "--pool-size",
        "4",
        "--port",
        "0",
        "--db",
        join(dir, "local.db"),
        "--allow-insecure-http",
        "--operator-token",
        OPERATOR_TOKEN,
        "--no-webhooks",
        "--json"
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    server.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
    server.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
    const line = await waitFor(
      `the server to start (stderr: ${stderr})`,
      () => stdout.includes("\n") && stdout.split("\n")[0],
      120_000
    )
    started = JSON.parse(line)
  })

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server!.once("exit", r))
      server.kill("SIGTERM")
      await exited
    }
    await withClient((c) => c.query(`drop database if exists ${database} with (force)`))
    rmSync(dir, { recursive: true, force: true })
  })

  it("serves from the URL (its password never printed) with a demo account, migrated once", async () => {
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(started.db).toContain(`/${database}`)
    expect(started.demo_account.test_key).toMatch(/^wb_test_/)
    const applied = await withClient(async (c) => {
      await c.query(`select 1`)
      const inDb = new pg.Client({ connectionString: url })
      await inDb.connect()
      try {
        return (await inDb.query("select count(*)::int as n from waybill_migration")).rows[0].n as number
      } finally {
        await inDb.end()
      }
    })
    expect(applied).toBeGreaterThan(0)
  })

  it("books, adds a document with the CLI, downloads it, cancels, and shows it under /ops/v1", async () => {
    const key = started.demo_account.test_key
    const trackNo = await bookOne(started.url, key)

    const file = join(dir, "bol.pdf")
    const bytes = pdf("on postgres")
    writeFileSync(file, bytes)
    const added = await waybill(
      "document",
      "add",
      trackNo,
      "--type",
      "bol",
      "--file",
      file,
      "--database-url",
      url,
      "--secret-file",
      secret
    )
    expect(added.code, JSON.stringify(added.out)).toBe(0)
    expect(added.out.id).toBeTruthy()

    const lookup = await fetch(`${started.url}/api/v1/order/docs/?control_no=${trackNo}&key=${key}`)
    const body = (await lookup.json()) as { data: { orders: Array<{ documents: Array<{ uri: string }> }> } }
    const uri = body.data.orders[0]!.documents[0]!.uri
    const download = await fetch(uri)
    expect(download.status).toBe(200)
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
    // The file is in the database (blob-pg), not in a directory of this host.
    const chunks = await withClient(async () => {
      const inDb = new pg.Client({ connectionString: url })
      await inDb.connect()
      try {
        return (await inDb.query("select count(*)::int as n from waybill_blob_chunks")).rows[0].n as number
      } finally {
        await inDb.end()
      }
    })
    expect(chunks).toBeGreaterThan(0)

    const cancel = await fetch(`${started.url}/api/v1/order/cancel/json/?id=${trackNo}&key=${key}`)
    const canceled = (await cancel.json()) as { error: unknown }
    expect(cancel.status).toBe(200)
    expect(canceled.error).toBeNull()
    const shown = await waybill("shipment", "show", trackNo, "--database-url", url, "--secret-file", secret)
    expect(shown.out.state).toBe("canceled")
    // The operator API runs on the same database.
    const viaOps = await ops(started.url, `shipments/${trackNo}/`)
    expect(viaOps.status).toBe(200)
    expect(viaOps.body.data.state).toBe("canceled")
    // Ready on PostgreSQL: the documents live in the database, so no local folder is checked.
    const ready = await fetch(`${started.url}/readyz`)
    expect([ready.status, ((await ready.json()) as { status: string }).status]).toEqual([200, "ready"])
    // The pool's use is a metric on PostgreSQL.
    const metrics = await fetch(`${started.url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
    expect(metrics.status).toBe(200)
    expect(await metrics.text()).toMatch(/^waybill_db_pool_connections\{state="total"\} [1-9]/m)
  })

  it("a database migrated by a newer build is refused with the migration it lacks", async () => {
    await withClient(async (client) => {
      await client.query(`create database "${database}_newer"`)
    })
    const newerUrl = databaseUrl(`${database}_newer`)
    try {
      expect((await waybill("ip", "list", "--database-url", newerUrl, "--secret-file", secret)).code).toBe(0)
      const db = new pg.Client({ connectionString: newerUrl })
      await db.connect()
      await db.query(`insert into waybill_migration (name, timestamp) values ('9999_from_a_newer_build', now()::text)`)
      await db.end()
      const refused = await waybill("ip", "list", "--database-url", newerUrl, "--secret-file", secret)
      expect(refused.code).toBe(1)
      expect(refused.out.error).toMatch(/could not be migrated: .*9999_from_a_newer_build/)
    } finally {
      await withClient((client) => client.query(`drop database if exists "${database}_newer" with (force)`))
    }
  })

  it("a host with another master secret refuses to start, and says why", async () => {
    const other = join(dir, "other.secret")
    const refused = await waybill("account", "create", "--name", "X", "--database-url", url, "--secret-file", other)
    expect(refused.code).toBe(1)
    expect(refused.out.error).toMatch(/master secret does not match/)
  })

  it("without a secret file the PostgreSQL host refuses to start, and says what to give", async () => {
    const refused = await waybill("ip", "list", "--database-url", url)
    expect(refused.code).toBe(1)
    expect(refused.out.error).toMatch(/--secret-file/)
  })
})

describe("the master secret check on SQLite", () => {
  it("a host with another secret refuses the database another secret set up", async () => {
    const local = mkdtempSync(join(tmpdir(), "waybill-keycheck-"))
    try {
      const db = join(local, "w.db")
      const first = await waybill("ip", "list", "--db", db, "--secret-file", join(local, "a.secret"))
      expect(first.code).toBe(0)
      const again = await waybill("ip", "list", "--db", db, "--secret-file", join(local, "a.secret"))
      expect(again.code).toBe(0)
      const other = await waybill("ip", "list", "--db", db, "--secret-file", join(local, "b.secret"))
      expect(other.code).toBe(1)
      expect(other.out.error).toMatch(/master secret does not match/)
    } finally {
      rmSync(local, { recursive: true, force: true })
    }
  })
})
