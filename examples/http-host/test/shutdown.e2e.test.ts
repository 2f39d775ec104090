/**
 * Graceful shutdown of `waybill serve`, in its own process: bookings are in flight (their
 * bodies held back half sent) when SIGTERM arrives. The listening socket closes at once (a new
 * connection is refused), yet every booking in flight still gets its 200 and is in the database,
 * and the process exits 0. The settings come through the same paths an operator uses: a
 * `WAYBILL_*` variable and a `--config` file.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { connect } from "node:net"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import Database from "better-sqlite3"
import { afterAll, describe, expect, it } from "vitest"
import { BOOKING_BODY } from "../bench/scenarios.js"
import { startHost, waitFor } from "./harness.js"

const hostDir = resolve(import.meta.dirname, "..")
const dir = mkdtempSync(join(tmpdir(), "waybill-shutdown-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Started {
  readonly child: ChildProcess
  readonly url: URL
  readonly testKey: string
}

/** `waybill serve --json` on a fresh database; resolves with its URL and the demo test key. */
const startServe = () =>
  new Promise<Started>((ready, fail) => {
    const config = join(dir, "waybill.json")
    writeFileSync(config, JSON.stringify({ port: 0, "no-webhooks": true, "allow-insecure-http": true }))
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "serve", "--json", "--config", config, "--db", join(dir, "waybill.db")],
      {
        cwd: hostDir,
        env: { ...process.env, WAYBILL_SHUTDOWN_GRACE: "60", WAYBILL_OPERATOR_TOKEN: "op_shutdown_test_token" },
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let out = ""
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n")[0]
      if (out.includes("\n") && line !== undefined) {
        const started = JSON.parse(line) as { url: string; demo_account: { test_key: string } }
        ready({ child, url: new URL(started.url), testKey: started.demo_account.test_key })
      }
    })
    child.once("exit", (code, signal) => fail(new Error(`serve exited early (${code ?? signal})`)))
  })

/**
 * A booking whose headers are sent with `Expect: 100-continue`: `accepted` resolves once the
 * server has taken the request (it answers 100 Continue), `finish()` sends the rest of the body,
 * `answer` is the status and tracking number.
 */
const slowBooking = (url: URL, key: string) => {
  const body = Buffer.from(BOOKING_BODY)
  const half = Math.floor(body.length / 2)
  let accept!: () => void
  const accepted = new Promise<void>((r) => (accept = r))
  const req = request({
    host: url.hostname,
    port: url.port,
    path: "/api/v1/order/json/",
    method: "POST",
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "content-length": String(body.length),
      expect: "100-continue"
    }
  })
  const answer = new Promise<{ readonly status: number; readonly trackNo: string | undefined }>((done, fail) => {
    req.once("error", fail)
    req.once("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.once("error", fail)
      res.once("end", () => {
        const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          data?: { shipments?: Array<{ track_no?: string }> }
        }
        done({ status: res.statusCode ?? 0, trackNo: parsed.data?.shipments?.[0]?.track_no })
      })
    })
  })
  req.once("continue", () => {
    req.write(body.subarray(0, half))
    accept()
  })
  req.flushHeaders()
  return { accepted, answer, finish: () => req.end(body.subarray(half)) }
}

/** Whether a new TCP connection to `url` is refused now. */
const refused = (url: URL) =>
  new Promise<boolean>((done) => {
    const socket = connect(Number(url.port), url.hostname)
    socket.once("connect", () => {
      socket.destroy()
      done(false)
    })
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code === "ECONNREFUSED"))
  })

describe("waybill serve on SIGTERM", () => {
  it("refuses new connections, finishes the bookings in flight, and exits 0", async () => {
    const { child, testKey, url } = await startServe()
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once("exit", (code, signal) => done({ code, signal }))
    )
    expect(await refused(url)).toBe(false)
    const bookings = Array.from({ length: 4 }, () => slowBooking(url, testKey))
    await Promise.all(bookings.map((b) => b.accepted))

    child.kill("SIGTERM")
    // One probe at a time until one is refused.
    let closed = false
    let probing = false
    await waitFor("the listening socket to close", () => {
      if (!probing) {
        probing = true
        void refused(url).then((r) => {
          closed ||= r
          probing = false
        })
      }
      return closed
    })
    // The process is still there, draining: the bookings it holds are not cut.
    expect(child.exitCode).toBeNull()

    for (const b of bookings) b.finish()
    const answers = await Promise.all(bookings.map((b) => b.answer))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
    const trackNos = answers.map((a) => a.trackNo)
    expect(trackNos.every((t) => typeof t === "string")).toBe(true)

    expect(await exit).toEqual({ code: 0, signal: null })
    const sqlite = new Database(join(dir, "waybill.db"), { readonly: true })
    try {
      const stored = sqlite.prepare("select track_no from waybill_shipments").all() as Array<{ track_no: string }>
      expect(stored.map((r) => r.track_no).sort()).toEqual([...trackNos].sort())
    } finally {
      sqlite.close()
    }
  })

  it("RunningHost.shutdown: draining at once (the readiness hook), one shutdown however often it is asked", async () => {
    const t = await startHost()
    try {
      const account = await t.newAccount()
      const booking = slowBooking(new URL(t.url), account.testKey)
      await booking.accepted
      expect(t.host.isDraining()).toBe(false)
      const first = t.host.shutdown({ graceMs: 60_000 })
      expect(t.host.isDraining()).toBe(true)
      expect(t.host.shutdown({ graceMs: 0 })).toBe(first)
      booking.finish()
      expect((await booking.answer).status).toBe(200)
      await first
      expect(await refused(new URL(t.url))).toBe(true)
    } finally {
      rmSync(t.dir, { recursive: true, force: true })
    }
  })
})
