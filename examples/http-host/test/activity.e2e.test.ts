/**
 * The account activity log through the real host: a booking is recorded with the fields the
 * portal shows (time, method, path without query, key mode, status, client address, request
 * id); calls refused once the key is known (a disabled key, the allowlist, a limit) are recorded
 * too; calls with no account to attribute them to (no key, an unknown key) are not. Then the
 * key slots read their last use from it, lists filter and page, and the purge keeps 30 days.
 */
import { execFile } from "node:child_process"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { sql } from "kysely"
import { Accounts, Activity, type ActivityEntry, ActivityStore } from "@waybill/core"
import { bookOne, e2eConfig, postJson, shipment, startHost, type TestHost, waitFor } from "./harness.js"

let t: TestHost

beforeAll(async () => {
  // The host's own purge stays off: its first round (a second after start) would take the old
  // entry the CLI's purge below is to delete, whenever the tests before it run fast.
  t = await startHost({ activity: { enabled: false } })
})
afterAll(async () => {
  await t?.close()
})

/** The account's entries once `count` of them are written (the recorder flushes every 250 ms). */
const entriesOf = async (host: TestHost, customerNo: string, count: number): Promise<ReadonlyArray<ActivityEntry>> => {
  let found: ReadonlyArray<ActivityEntry> = []
  await waitFor(`${count} activity entries of ${customerNo}`, () => {
    void host.run(Activity.list(customerNo, {}, { limit: 100 })).then((page) => (found = page.items))
    return found.length >= count
  })
  return found
}

const activityRows = async (host: TestHost): Promise<number> => {
  const result = await sql<{ n: unknown }>`select count(*) as n from waybill_activity`.execute(host.host.database.db)
  return Number(result.rows[0]?.n)
}

const book = (key: string, headers: Record<string, string> = {}) =>
  postJson(
    `${t.url}/api/v1/order/json/?source=test`,
    { data: { shipments: [shipment()] } },
    { authorization: `Bearer ${key}`, ...headers }
  )

describe("activity log", () => {
  it("records a booking with the fields the portal shows; calls without a known account are not recorded", async () => {
    const account = await t.newAccount()
    const rowsBefore = await activityRows(t)
    // No account to attribute these to: not recorded.
    const anonymous = await postJson(`${t.url}/api/v1/order/json/`, { data: { shipments: [shipment()] } })
    expect(anonymous.status).toBe(401)
    const unknown = await book(account.liveKey.slice(0, -6) + "AAAAAA")
    expect(unknown.status).toBe(401)

    const before = Date.now()
    const booked = await book(account.liveKey, { "x-request-id": "activity-e2e-1" })
    expect(booked.status).toBe(200)
    const [entry] = await entriesOf(t, account.customerNo, 1)
    expect(entry).toMatchObject({
      customerNo: account.customerNo,
      method: "POST",
      path: "/api/v1/order/json/",
      keyMode: "live",
      status: 200,
      clientIp: "127.0.0.1",
      requestId: "activity-e2e-1"
    })
    expect(entry!.at).toBeGreaterThanOrEqual(before - 5)
    expect(entry!.at).toBeLessThanOrEqual(Date.now())
    expect(entry!.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    // The two 401s were made before the booking and flushed no later than it: none was recorded.
    expect(await activityRows(t)).toBe(rowsBefore + 1)
  })

  it("records calls refused once the key is known: a disabled key (401), the allowlist (403)", async () => {
    const account = await t.newAccount()
    const quote = await fetch(`${t.url}/api/v1/utilities/quote/?ServiceType=Standard&VehicleType=Car`, {
      headers: { authorization: `Bearer ${account.testKey}` }
    })
    await quote.arrayBuffer()
    await t.run(Accounts.setKeyStatus(account.customerNo, "test", "disabled"))
    const disabled = await book(account.testKey)
    expect(disabled.status).toBe(401)
    await t.run(Accounts.updateAccount(account.customerNo, { ipAllowlist: ["10.0.0.0/8"] }))
    const outside = await book(account.liveKey)
    expect(outside.status).toBe(403)
    const entries = await entriesOf(t, account.customerNo, 3)
    expect(entries.map((e) => [e.method, e.path, e.keyMode, e.status])).toEqual([
      ["POST", "/api/v1/order/json/", "live", 403],
      ["POST", "/api/v1/order/json/", "test", 401],
      ["GET", "/api/v1/utilities/quote/", "test", quote.status]
    ])
    // Filters and pages, as the portal reads them.
    const refused = await t.run(Activity.list(account.customerNo, { status: "4xx" }, { limit: 1 }))
    expect(refused.items.map((e) => e.status)).toEqual([403])
    expect(refused.nextCursor).not.toBeNull()
    const next = await t.run(
      Activity.list(account.customerNo, { status: "4xx" }, { limit: 1, startingAfter: refused.nextCursor! })
    )
    expect(next.items.map((e) => e.status)).toEqual([401])
    const tests = await t.run(Activity.list(account.customerNo, { mode: "test" }, { limit: 10 }))
    expect(tests.items).toHaveLength(2)
  })

  it("key slots: last 4 characters, creation, and last use from the log (the current key's only)", async () => {
    const account = await t.newAccount()
    const created = await t.run(Accounts.keySlots(account.customerNo))
    await bookOne(t.url, account.liveKey)
    expect(created.map((s) => [s.mode, s.status, s.last4])).toEqual([
      ["live", "active", account.liveKey.slice(-4)],
      ["test", "active", account.testKey.slice(-4)]
    ])
    const [entry] = await entriesOf(t, account.customerNo, 1)
    const slots = await t.run(Accounts.keySlots(account.customerNo))
    expect(slots[0]).toMatchObject({ mode: "live", lastUsedAt: entry!.at })
    expect(slots[0]!.createdAt).toBeLessThanOrEqual(entry!.at)
    expect(slots[1]).toMatchObject({ mode: "test", lastUsedAt: null })
    // A new key has not been used, whatever the old one did.
    const rotated = await t.run(Accounts.rotateKey(account.customerNo, "live"))
    const after = await t.run(Accounts.keySlots(account.customerNo))
    expect(after[0]).toMatchObject({
      mode: "live",
      status: "active",
      lastUsedAt: null,
      createdAt: rotated.record.createdAt
    })
    expect(after[0]!.last4).not.toBe(account.liveKey.slice(-4))
  })

  it("`pnpm waybill activity purge` deletes entries older than 30 days only", async () => {
    const account = await t.newAccount()
    const now = Date.now()
    const entry = (at: number, id: string): ActivityEntry => ({
      id,
      at,
      customerNo: account.customerNo,
      method: "GET",
      path: "/api/v1/order/docs/",
      keyMode: "live",
      status: 200,
      clientIp: "127.0.0.1",
      requestId: id
    })
    await t.run(
      Effect.flatMap(ActivityStore, (store) =>
        store.append([
          entry(now - Activity.RETENTION_MS - 60_000, "01OLD0000000000000000000A1"),
          entry(now - Activity.RETENTION_MS + 60_000, "01NEW0000000000000000000A2")
        ])
      )
    )
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "activity", "purge", "--db", join(t.dir, "waybill.db"), "--json"],
      { cwd: resolve(import.meta.dirname, "..") }
    )
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!).deleted).toBeGreaterThanOrEqual(1)
    const left = await t.run(Activity.list(account.customerNo, {}, { limit: 10 }))
    expect(left.items.map((e) => e.id)).toEqual(["01NEW0000000000000000000A2"])
    // The program the CLI and the host's hourly round run: nothing left to delete.
    expect(await t.run(Activity.purgeExpired)).toBe(0)
  }, 60_000)
})

describe("activity log: a request limit's 429 is recorded", () => {
  let limited: TestHost
  beforeAll(async () => {
    limited = await startHost({
      config: { ...e2eConfig, limits: { ...e2eConfig.limits, perKey: { requests: 1, windowSeconds: 60 } } }
    })
  })
  afterAll(async () => {
    await limited?.close()
  })

  it("books once, is refused the second time, and both are in the log", async () => {
    const account = await limited.newAccount()
    const url = `${limited.url}/api/v1/order/json/`
    const headers = { authorization: `Bearer ${account.liveKey}` }
    expect((await postJson(url, { data: { shipments: [shipment()] } }, headers)).status).toBe(200)
    expect((await postJson(url, { data: { shipments: [shipment()] } }, headers)).status).toBe(429)
    const entries = await entriesOf(limited, account.customerNo, 2)
    expect(entries.map((e) => e.status)).toEqual([429, 200])
  })
})

describe("activity log: graceful shutdown writes what is buffered", () => {
  it("calls recorded just before shutdown are in the database after it", async () => {
    const host = await startHost()
    const account = await host.newAccount()
    const engine = host.host.database.engine
    let count = -1
    try {
      await bookOne(host.url, account.liveKey)
      await bookOne(host.url, account.liveKey)
      // Read through a connection the shutdown does not close first: the handler's dispose
      // writes the buffer, then the database closes; count right after dispose.
      await host.host.handler.dispose()
      const result = await sql<{ n: unknown }>`select count(*) as n from waybill_activity where customer_no = ${
        account.customerNo
      }`.execute(engine.kysely)
      count = Number(result.rows[0]?.n)
    } finally {
      await host.close()
    }
    expect(count).toBe(2)
  })
})
