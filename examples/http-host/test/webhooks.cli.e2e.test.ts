/**
 * The `webhook` CLI commands in child processes, and `serve --webhook-allow-private
 * --webhook-ca` delivering to a real HTTPS receiver on loopback.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"

const run = promisify(execFile)
const hostDir = resolve(import.meta.dirname, "..")
const cli = resolve(hostDir, "src/cli.ts")
let dir: string
let db: string
let scope: Scope.CloseableScope
let r: Effect.Effect.Success<ReturnType<typeof receiver>>
let caFile: string
let server: ChildProcess | undefined

const waybill = async (...args: Array<string>) => {
  try {
    const { stdout } = await run(process.execPath, ["--import", "tsx", cli, ...args, "--db", db, "--json"], {
      cwd: hostDir
    })
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) }
  } catch (e) {
    const err = e as { code: number; stdout: string }
    return { code: err.code, out: JSON.parse(err.stdout.trim().split("\n").at(-1)!) }
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waybill-webhook-cli-"))
  db = join(dir, "cli.db")
  scope = Effect.runSync(Scope.make())
  const pems = await Effect.runPromise(certificate)
  caFile = join(dir, "ca.pem")
  writeFileSync(caFile, pems.cert)
  r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
})

afterAll(async () => {
  server?.kill("SIGTERM")
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

describe("pnpm waybill webhook", () => {
  it("manages endpoints, and serve delivers what `webhook test` queues", async () => {
    const account = await waybill("account", "create", "--name", "Webhook CLI")
    const customerNo = account.out.customer_no as string

    const refused = await waybill("webhook", "add", "--customer", customerNo, "--url", r.url, "--events", "*")
    expect(refused).toEqual({ code: 1, out: { error: "the URL points to a private or reserved address" } })
    const unknownType = await waybill(
      "webhook",
      "add",
      "--customer",
      customerNo,
      "--url",
      "https://example.com/",
      "--events",
      "shipment.nope"
    )
    expect(unknownType.code).toBe(1)

    const added = await waybill(
      "webhook",
      "add",
      "--customer",
      customerNo,
      "--url",
      r.url,
      "--events",
      "shipment.booked,shipment.delivered",
      "--webhook-allow-private",
      "127.0.0.1"
    )
    expect(added.code).toBe(0)
    const id = added.out.id as string
    const secret = added.out.secret as string
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(added.out.events).toEqual(["shipment.booked", "shipment.delivered"])

    const listed = await waybill("webhook", "list", "--customer", customerNo)
    expect(listed.out.data.map((e: { id: string }) => e.id)).toEqual([id])
    expect(JSON.stringify(listed.out)).not.toContain("whsec_")

    expect((await waybill("webhook", "disable", id)).out).toMatchObject({ enabled: false, disabled_reason: "operator" })
    expect((await waybill("webhook", "enable", id)).out).toMatchObject({ enabled: true, disabled_reason: null })
    expect((await waybill("webhook", "deliveries", "we_nope")).out).toEqual({ error: "no webhook endpoint we_nope" })

    const test = await waybill("webhook", "test", id)
    const eventId = test.out.event_id as string
    expect(eventId).toMatch(/^evt_/)

    server = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        cli,
        "serve",
        "--port",
        "0",
        "--db",
        db,
        "--json",
        "--webhook-allow-private",
        "127.0.0.1",
        "--webhook-ca",
        caFile
      ],
      { cwd: hostDir, stdio: ["ignore", "pipe", "inherit"] }
    )
    const until = Date.now() + 60_000
    while (!r.received.some((x) => x.headers["webhook-id"] === eventId)) {
      if (Date.now() > until) throw new Error("the served dispatcher did not deliver the test event")
      await new Promise((res) => setTimeout(res, 50))
    }
    const got = r.received.find((x) => x.headers["webhook-id"] === eventId)!
    expect((new StandardWebhook(secret).verify(got.body, got.headers) as { type: string }).type).toBe("webhook.test")

    const rotated = await waybill("webhook", "rotate-secret", id)
    expect(rotated.out.secret).not.toBe(secret)
    expect(rotated.out.previous_secret_until).not.toBeNull()
    expect((await waybill("webhook", "resend", eventId)).out).toEqual({ event_id: eventId, queued: 1 })
    expect((await waybill("webhook", "recover", id, "--since", "2000-01-01T00:00:00Z")).code).toBe(0)
    expect((await waybill("webhook", "recover", id, "--since", "yesterday")).code).toBe(2)
    const log = await waybill("webhook", "deliveries", id)
    expect(log.out.data.map((d: { event_id: string }) => d.event_id)).toContain(eventId)
  }, 180_000)

  it("updates and deletes endpoints (`webhook update` and `webhook delete`)", async () => {
    const customerNo = (await waybill("account", "create", "--name", "Webhook CLI update")).out.customer_no as string
    const added = await waybill(
      "webhook",
      "add",
      "--customer",
      customerNo,
      "--url",
      "https://hooks.example.com/a",
      "--events",
      "shipment.booked"
    )
    const id = added.out.id as string
    const moved = await waybill("webhook", "update", id, "--url", "https://hooks.example.com/b", "--events", "*")
    expect(moved.code).toBe(0)
    expect(moved.out).toMatchObject({ id, url: "https://hooks.example.com/b", enabled: true })
    expect(moved.out.events.length).toBeGreaterThan(1)
    expect(JSON.stringify(moved.out)).not.toContain("whsec_")
    // The same URL rules as add; the private address goes through with the allow-list.
    expect(await waybill("webhook", "update", id, "--url", r.url)).toEqual({
      code: 1,
      out: { error: "the URL points to a private or reserved address" }
    })
    const local = await waybill("webhook", "update", id, "--url", r.url, "--webhook-allow-private", "127.0.0.1")
    expect([local.code, local.out.url, local.out.events.length]).toEqual([0, r.url, moved.out.events.length])
    expect((await waybill("webhook", "update", id)).code).toBe(2)

    expect((await waybill("webhook", "delete", id)).out).toMatchObject({ id, deleted: true })
    expect((await waybill("webhook", "list", "--customer", customerNo)).out.data).toEqual([])
    expect(await waybill("webhook", "delete", id)).toEqual({ code: 1, out: { error: `no webhook endpoint ${id}` } })
  }, 180_000)
})
