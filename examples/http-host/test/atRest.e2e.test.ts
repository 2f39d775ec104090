/**
 * What a server holds at rest: `serve` on SQLite loads none of the parts a server may never use
 * (the PostgreSQL driver and blob store, the portal's pages and Preact, nodemailer, prom-client
 * and the Prometheus adapter, sharp) until a request needs them, and each then works
 * (docs/benchmarks.md, "Memory at rest (2026-11-28, session 11)"). The host runs in a child
 * process whose loader hook records every module it loads (`atRestChild.ts`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OPERATOR_TOKEN } from "./harness.js"

const hostDir = resolve(import.meta.dirname, "..")

/** The late parts, each by a pattern of the module URL that loads it. */
const LATE: Readonly<Record<string, RegExp>> = {
  pg: /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?pg\//,
  "blob-pg": /\/adapters\/blob-pg\/|@waybill\/blob-pg/,
  "portal pages": /\/packages\/portal\/(?:src\/internal\/pipeline|dist\/pipeline)/,
  preact: /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?preact\//,
  nodemailer: /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?nodemailer\//,
  "prom-client": /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?prom-client\//,
  "metrics-prometheus": /\/adapters\/metrics-prometheus\/|@waybill\/metrics-prometheus/,
  sharp: /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?sharp\//
}

const loadedParts = (urls: ReadonlyArray<string>): Array<string> =>
  Object.entries(LATE)
    .filter(([, pattern]) => urls.some((url) => pattern.test(url)))
    .map(([name]) => name)
    .sort()

let child: ChildProcess
let url: string
let dir: string
const replies: Array<(message: { readonly loaded?: ReadonlyArray<string> }) => void> = []

const loaded = () =>
  new Promise<ReadonlyArray<string>>((done) => {
    replies.push((message) => done(message.loaded ?? []))
    child.send("loaded")
  })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waybill-rest-"))
  child = spawn(process.execPath, ["--import", "tsx", "test/atRestChild.ts", join(dir, "waybill.db")], {
    cwd: hostDir,
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  url = await new Promise<string>((ready, fail) => {
    child.on("message", (message: { readonly ready?: string; readonly loaded?: ReadonlyArray<string> }) => {
      if (message.ready !== undefined) ready(message.ready)
      else replies.shift()?.(message)
    })
    child.once("exit", (code) => fail(new Error(`host exited early (${code})`)))
  })
}, 60_000)

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((done) => child.once("exit", done))
    child.send("stop")
    await exited
  }
  rmSync(dir, { recursive: true, force: true })
})

describe("serve at rest", () => {
  it("has loaded none of the late parts once it listens", async () => {
    const urls = await loaded()
    expect(urls.some((u) => u.includes("/src/host.ts"))).toBe(true)
    expect(loadedParts(urls)).toEqual([])
  })

  it("loads the portal's pages, the Prometheus page and the reference page's files when asked, and answers", async () => {
    const page = await fetch(`${url}/portal/signin`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("<form")
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
    expect(metrics.status).toBe(200)
    expect(await metrics.text()).toContain("waybill_webhook_queue_depth")
    const bundle = await fetch(`${url}/api/v1/docs/swagger-ui-bundle.js`)
    expect(bundle.status).toBe(200)
    expect(await bundle.text()).toContain("SwaggerUIBundle")
    expect(loadedParts(await loaded())).toEqual(["metrics-prometheus", "portal pages", "preact", "prom-client"])
  })
})
