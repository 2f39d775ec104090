/**
 * Rate limits, automatic IP blocking and account IP allowlists end to end through the real host.
 * Windows are made very long so no test can straddle a window boundary (windows are fixed and
 * epoch-aligned: a boundary inside a test would reset a count).
 */
import { execFile } from "node:child_process"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Config, IpBlocks, type WaybillConfigShape } from "@waybill/core"
import { bookOne, type Envelope, postJson, shipment, startHost, type TestAccount, type TestHost } from "./harness.js"

const LONG = 10 * 365 * 86_400 // seconds: no boundary during a test run
const limits = (overrides: Partial<WaybillConfigShape["limits"]>): WaybillConfigShape => ({
  ...Config.defaults,
  limits: {
    perKey: { requests: 1_000_000, windowSeconds: LONG },
    perClient: { requests: 1_000_000, windowSeconds: LONG },
    abuse: {
      ...Config.defaults.limits.abuse,
      windowSeconds: LONG,
      maxMisses: 1_000_000,
      maxUnrelatedAccounts: 1_000_000
    },
    ...overrides
  }
})

const envelope = (message: string) => JSON.stringify({ data: null, error: { message, exception: null } })

const call = async (
  t: TestHost,
  path: string,
  params: Record<string, string>,
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`${t.url}${path}?${new URLSearchParams(params)}`, { headers })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as Envelope }
}
const quote = (t: TestHost, params: Record<string, string>, headers: Record<string, string> = {}) =>
  call(t, "/api/v1/utilities/quote/", { origin: "60606", destination: "60613", weight: "5", ...params }, headers)
const track = (t: TestHost, params: Record<string, string>, headers: Record<string, string> = {}) =>
  call(t, "/api/v1/utilities/track/", params, headers)
const cancel = (t: TestHost, params: Record<string, string>, headers: Record<string, string> = {}) =>
  call(t, "/api/v1/order/cancel/json/", params, headers)
const book = (t: TestHost, key: string, headers: Record<string, string> = {}) =>
  postJson(
    `${t.url}/api/v1/order/json/`,
    { data: { shipments: [shipment()] } },
    { authorization: `Bearer ${key}`, ...headers }
  )

/** `pnpm waybill ... --json` against the host's database, in a child process. */
const waybill = async (t: TestHost, ...args: Array<string>) => {
  const cli = resolve(import.meta.dirname, "../src/cli.ts")
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", cli, ...args, "--db", join(t.dir, "waybill.db"), "--json"],
      { cwd: resolve(import.meta.dirname, "..") }
    )
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown> }
  } catch (e) {
    const err = e as { code: number; stdout: string }
    return { code: err.code, out: JSON.parse(err.stdout.trim().split("\n").at(-1)!) as Record<string, unknown> }
  }
}

describe("rate limits", () => {
  let t: TestHost
  let a: TestAccount
  let b: TestAccount
  beforeAll(async () => {
    t = await startHost({
      config: limits({ perKey: { requests: 3, windowSeconds: LONG }, perClient: { requests: 2, windowSeconds: LONG } })
    })
    a = await t.newAccount("A")
    b = await t.newAccount("B")
  })
  afterAll(() => t.close())

  it("every keyed answer carries RateLimit headers; past the per-key limit: 429 with Retry-After on every keyed endpoint", async () => {
    const seen: Array<string | null> = []
    const first = await quote(t, { key: a.liveKey })
    seen.push(first.headers.get("ratelimit"))
    expect(first.headers.get("ratelimit-policy")).toBe(`"key";q=3;w=${LONG}`)
    seen.push((await track(t, { idx: "99999999", key: a.liveKey })).headers.get("ratelimit"))
    const booked = await book(t, a.liveKey)
    expect(booked.status).toBe(200)
    seen.push(booked.headers.get("ratelimit"))
    expect(seen.map((h) => /^"key";r=(\d+);t=\d+$/.exec(h ?? "")?.[1])).toEqual(["2", "1", "0"])

    const reset = /t=(\d+)$/.exec(seen[2]!)![1]!
    const over = [
      await quote(t, { key: a.liveKey }),
      await track(t, { idx: "99999999", key: a.liveKey }),
      await cancel(t, { id: "99999999", key: a.liveKey }),
      await (async () => {
        const r = await book(t, a.liveKey)
        return { status: r.status, headers: r.headers, text: JSON.stringify(r.body) }
      })()
    ]
    for (const r of over) {
      expect([r.status, r.text]).toEqual([
        429,
        envelope("Too many requests. Retry after the number of seconds in Retry-After.")
      ])
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(Math.abs(Number(r.headers.get("retry-after")) - Number(reset))).toBeLessThanOrEqual(30)
      expect(r.headers.get("ratelimit")).toMatch(/^"key";r=0;t=\d+$/)
      expect(r.headers.get("ratelimit-policy")).toBe(`"key";q=3;w=${LONG}`)
    }
    // Another key, and the same account's test key, have budgets of their own.
    expect((await quote(t, { key: b.liveKey })).status).toBe(200)
    expect((await book(t, a.testKey)).status).toBe(200)
    // A key in the body counts against the same budget as a Bearer header.
    const inBody = await postJson(`${t.url}/api/v1/order/json/`, {
      data: { token: a.liveKey, shipments: [shipment()] }
    })
    expect(inBody.status).toBe(429)
  })

  it("without a key: limited per client address, with the ip policy", async () => {
    const r1 = await track(t, { idx: "99999999" })
    expect(r1.headers.get("ratelimit-policy")).toBe(`"ip";q=2;w=${LONG}`)
    await quote(t, {})
    const r3 = await quote(t, {})
    expect(r3.status).toBe(429)
    expect(r3.headers.get("ratelimit")).toMatch(/^"ip";r=0;t=\d+$/)
    expect(r3.headers.get("retry-after")).toMatch(/^\d+$/)
    // A key does not spend the address's budget (it has its own).
    expect((await quote(t, { key: b.liveKey })).status).toBe(200)
  })
})

describe("automatic IP blocking", () => {
  let t: TestHost
  let a: TestAccount
  beforeAll(async () => {
    t = await startHost({ config: limits({ abuse: { ...limits({}).limits.abuse, maxMisses: 5 } }) })
    a = await t.newAccount("A")
  })
  afterAll(() => t.close())

  it("an address that misses too often is blocked on every endpoint, whatever X-Forwarded-For it claims", async () => {
    const id = await bookOne(t.url, a.liveKey)
    // Five misses are tolerated; the sixth crosses the line. A spoofed X-Forwarded-For from an
    // untrusted peer is ignored, so every miss counts against 127.0.0.1.
    for (let i = 0; i < 6; i++) {
      const miss =
        i % 2 === 0
          ? track(t, { idx: String(90_000_000 + i) })
          : cancel(t, { id: String(90_000_000 + i), key: a.liveKey })
      const r = await miss
      expect(r.status, r.text).not.toBe(403)
    }
    const spoof = { "x-forwarded-for": "203.0.113.50" }
    const blocked = envelope("IP address is blocked")
    const answers = [
      await quote(t, {}, spoof),
      await quote(t, { key: a.liveKey }),
      await track(t, { idx: id }, spoof),
      await track(t, { idx: id, key: a.liveKey }),
      await cancel(t, { id, key: a.liveKey }, spoof),
      await call(t, "/api/v1/order/docs/", { control_no: id, key: a.liveKey })
    ]
    for (const r of answers) expect([r.status, r.text]).toEqual([403, blocked])
    const booking = await book(t, a.liveKey, spoof)
    expect([booking.status, booking.body.error?.message]).toEqual([403, "IP address is blocked"])

    const [block] = (await t.run(IpBlocks.active({ limit: 100 }))).items
    expect(block).toMatchObject({ ipKey: "127.0.0.1", strikes: 1 })
    expect(block!.reason).toMatch(/^abuse: more than 5 misses/)
    expect(block!.until - Date.now()).toBeGreaterThan(3_000_000) // the first block lasts an hour, not 6 h
    expect(block!.until - Date.now()).toBeLessThanOrEqual(3_600_000)

    // The operator lifts it (and the counts): the next miss does not block again.
    expect((await waybill(t, "ip", "unblock", "127.0.0.1")).out).toEqual({ unblocked: true })
    expect((await track(t, { idx: "90000099" })).status).toBe(200)
    expect((await track(t, { idx: id })).body.data.detail).toBe("coarse")
    expect((await t.run(IpBlocks.active({ limit: 100 }))).items).toEqual([])
  })
})

describe("tracking many unrelated customers (behind a trusted proxy)", () => {
  let t: TestHost
  const accounts: Array<TestAccount> = []
  beforeAll(async () => {
    t = await startHost({
      trustedProxies: ["127.0.0.0/8"],
      config: limits({ abuse: { ...limits({}).limits.abuse, maxUnrelatedAccounts: 2 } })
    })
    for (const name of ["C1", "C2", "C3"]) accounts.push(await t.newAccount(name))
  })
  afterAll(() => t.close())

  it("an address that looks at more unrelated accounts' shipments than allowed is blocked; owners are not counted", async () => {
    const ids = await Promise.all(accounts.map((c) => bookOne(t.url, c.liveKey)))
    const from = (client: string) => ({ "x-forwarded-for": client })
    // The owners themselves, from one address, with their keys: not unrelated.
    for (const [i, c] of accounts.entries()) {
      expect((await track(t, { idx: ids[i]!, key: c.liveKey }, from("198.51.100.20"))).body.data.detail).toBe("precise")
    }
    const scraper = from("198.51.100.9")
    expect((await track(t, { idx: ids[0]! }, scraper)).status).toBe(200)
    expect((await track(t, { idx: ids[0]! }, scraper)).status).toBe(200) // the same account counts once
    // Another customer's key does not make the look related.
    expect((await track(t, { idx: ids[1]!, key: accounts[0]!.liveKey }, scraper)).status).toBe(200)
    expect((await track(t, { idx: ids[2]! }, scraper)).status).toBe(200) // the third account crosses the line
    expect((await track(t, { idx: ids[0]! }, scraper)).status).toBe(403)
    expect((await quote(t, {}, scraper)).text).toBe(envelope("IP address is blocked"))
    // Others are unaffected, including the owner address.
    expect((await track(t, { idx: ids[0]! }, from("198.51.100.10"))).status).toBe(200)
    expect((await track(t, { idx: ids[0]!, key: accounts[0]!.liveKey }, from("198.51.100.20"))).status).toBe(200)
    const blocks = (await t.run(IpBlocks.active({ limit: 100 }))).items
    expect(blocks.map((b) => [b.ipKey, b.strikes])).toEqual([["198.51.100.9", 1]])
    expect(blocks[0]!.reason).toMatch(/^abuse: shipments of more than 2 unrelated accounts/)
  })
})

describe("account IP allowlists", () => {
  let t: TestHost
  let a: TestAccount
  beforeAll(async () => {
    t = await startHost({ trustedProxies: ["127.0.0.0/8"] })
    a = await t.newAccount("A")
  })
  afterAll(() => t.close())

  it("a key used from outside its account's allowlist gets 403 Access denied. on every keyed endpoint", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const set = await waybill(t, "account", "set", a.customerNo, "--allow-ip", "203.0.113.0/24, 2001:db8:7::/48")
    expect(set.out).toMatchObject({ ip_allowlist: ["203.0.113.0/24", "2001:db8:7::/48"] })

    const outside = { "x-forwarded-for": "198.51.100.1" }
    const denied = envelope("Access denied.")
    for (const r of [
      await quote(t, { key: a.liveKey }, outside),
      await track(t, { idx: id, key: a.liveKey }, outside),
      await cancel(t, { id, key: a.liveKey }, outside)
    ]) {
      expect([r.status, r.text]).toEqual([403, denied])
    }
    const booking = await book(t, a.liveKey, outside)
    expect([booking.status, booking.body.error?.message]).toEqual([403, "Access denied."])
    // Without a key the allowlist does not apply (it guards the key, not the public utilities).
    expect((await quote(t, {}, outside)).status).toBe(200)

    for (const inside of ["203.0.113.200", "2001:db8:7:1::5"]) {
      expect((await track(t, { idx: id, key: a.liveKey }, { "x-forwarded-for": inside })).body.data.detail).toBe(
        "precise"
      )
    }
    expect((await book(t, a.liveKey, { "x-forwarded-for": "203.0.113.9" })).status).toBe(200)

    const bad = await waybill(t, "account", "set", a.customerNo, "--allow-ip", "10.0.0.0/33")
    expect(bad).toEqual({ code: 2, out: { error: '--allow-ip: "10.0.0.0/33" is not an IP address or CIDR' } })
    expect((await waybill(t, "account", "set", a.customerNo, "--allow-ip", "any")).out).toMatchObject({
      ip_allowlist: []
    })
    expect((await cancel(t, { id, key: a.liveKey }, outside)).status).toBe(200)
  }, 90_000)
})
