/**
 * A fleet of three real hosts (`pnpm waybill serve --database-url`, each its own process) on one
 * fresh PostgreSQL database (created under a random name on `WAYBILL_PG_URL`, dropped at the
 * end), with one master secret file:
 *
 * - bookings through all three at once get unique tracking numbers; a booking made on one host
 *   is cancelled on another, a download link issued by one host downloads from another, and an
 *   API key rotated through one host is refused by the others on the very next request;
 * - one key's request limit holds across the fleet within the bound docs/abuse-and-rate-limits.md
 *   states (hosts buffer counts and flush them every second): at least the limit and at most
 *   hosts x limit admitted in a burst, and every host refuses once the counts are flushed;
 * - webhooks drain through the dispatchers of all three while one host is killed with SIGKILL
 *   holding deliveries: every event reaches the loopback HTTPS receiver, each shipment's events
 *   in `sequence` order, and a `webhook-id` arrives twice only when the killed host held it (the
 *   attempt may have reached the receiver before the host died; it is sent again after its lease
 *   runs out). The receiver answers slower than the lease, so a host that did not renew its
 *   leases while sending would have its attempts sent a second time by a live host.
 *
 * Without a server the suite fails on CI (`CI=true`) and is skipped, with a notice in its title,
 * elsewhere.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Accounts, Documents, Webhooks } from "@waybill/core"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"
import { type HostOptions, openDatabase, type OpenDatabase, waybillLayer } from "../src/host.js"
import { allowList } from "../src/webhooks.js"
import { pdf } from "./documentFiles.js"
import { databaseUrl, postgresSuite, withClient } from "./postgresServer.js"
import { type Envelope, ops, OPERATOR_TOKEN, postJson, shipment, waitFor } from "./harness.js"

const root = resolve(import.meta.dirname, "..")
const cli = resolve(root, "src/cli.ts")
const database = `waybill_fleet_${process.pid}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
const url = databaseUrl(database)

/** Requests per key per window for the whole fleet; low, so one test can cross it. */
const LIMIT = 30
/** Windows of an hour: a test crosses a window's end only if it starts within seconds of it. */
const WINDOW_SECONDS = 3600
/** The flush interval of `@waybill/rate-limit-buffered` the host uses (its default). */
const FLUSH_MS = 1000
/** Short leases, so a killed host's deliveries are taken over within seconds. */
const LEASE_SECONDS = 3
/** The receiver answers after this long: slower than a lease, so only renewal keeps it. */
const RECEIVER_DELAY_MS = 4_000

interface Host {
  readonly name: string
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<unknown>
}

let dir: string
let secretFile: string
let hosts: ReadonlyArray<Host> = []
let admin: OpenDatabase | undefined
let adminOptions: HostOptions
const scope = Effect.runSync(Scope.make())
let hooks: { readonly url: string; readonly received: Array<{ headers: Record<string, string>; body: string }> }

/** Starts `pnpm waybill serve` on the fleet's database; resolves once it listens. */
const startHost = (name: string, caFile: string) =>
  new Promise<Host>((ready, fail) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        cli,
        "serve",
        "--database-url",
        url,
        "--secret-file",
        secretFile,
        "--pool-size",
        "4",
        "--port",
        "0",
        "--db",
        join(dir, `${name}.db`),
        "--allow-insecure-http",
        "--operator-token",
        OPERATOR_TOKEN,
        "--webhook-allow-private",
        "127.0.0.1",
        "--webhook-ca",
        caFile,
        "--webhook-lease-seconds",
        String(LEASE_SECONDS),
        "--limits",
        JSON.stringify({
          perKey: { requests: LIMIT, windowSeconds: WINDOW_SECONDS },
          perClient: { requests: 1_000_000, windowSeconds: 60 },
          // Every request of this suite comes from 127.0.0.1, for several accounts.
          abuse: { maxMisses: 1_000_000, maxUnrelatedAccounts: 1_000_000 }
        }),
        "--log-format",
        "json",
        "--json"
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] }
    )
    const exited = new Promise((r) => child.once("exit", r))
    let stdout = ""
    let stderr = ""
    let started = false
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
    // The first line is the start-up answer; request logs follow and are not kept.
    child.stdout!.on("data", (d: Buffer) => {
      if (started) return
      stdout += d.toString()
      const end = stdout.indexOf("\n")
      if (end < 0) return
      started = true
      ready({ name, child, url: (JSON.parse(stdout.slice(0, end)) as { url: string }).url, exited })
    })
    child.once("exit", (code) => fail(new Error(`host ${name} exited early (${code}): ${stderr}`)))
  })

/** A query on the fleet's database. */
const query = <R>(sql: string, parameters: ReadonlyArray<unknown> = []) =>
  withClient(async (c) => (await c.query(sql, [...parameters])).rows as Array<R>, url)

/** Runs a core program against the fleet's database, in this process. */
const core = <A, E>(program: Effect.Effect<A, E, any>): Promise<A> =>
  Effect.runPromise(program.pipe(Effect.provide(waybillLayer(admin!.engine, adminOptions))) as Effect.Effect<A, E>)

const newAccount = async (name: string) => {
  const created = await core(Accounts.createAccount({ name }))
  return {
    customerNo: created.account.customerNo,
    liveKey: Redacted.value(created.liveKey),
    testKey: Redacted.value(created.testKey)
  }
}

/** Books `count` shipments in one request; their tracking numbers. */
const book = async (host: Host, key: string, count: number) => {
  const r = await postJson(
    `${host.url}/api/v1/order/json/`,
    { data: { shipments: Array.from({ length: count }, (_, i) => shipment({ BillingReference: `F-${i}` })) } },
    { authorization: `Bearer ${key}` }
  )
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return (r.body.data.shipments as Array<{ track_no: string }>).map((s) => s.track_no)
}

const cancel = async (host: Host, key: string, trackNo: string) => {
  const response = await fetch(`${host.url}/api/v1/order/cancel/json/?id=${trackNo}&key=${key}`)
  return { status: response.status, body: (await response.json()) as Envelope }
}

/** Seconds left in the current limit window (windows are aligned to the epoch). */
const windowLeft = () => WINDOW_SECONDS - ((Date.now() / 1000) % WINDOW_SECONDS)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls an asynchronous `probe` until it holds, or throws after `deadlineMs` naming `what`. */
const eventually = async (what: string, probe: () => Promise<boolean>, deadlineMs = 60_000) => {
  const until = Date.now() + deadlineMs
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

const { suite, title } = await postgresSuite("a fleet of three hosts on one PostgreSQL database")

suite(title, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "waybill-fleet-"))
    // One secret for the fleet, written before any host starts (all three start at once).
    secretFile = join(dir, "fleet.secret")
    writeFileSync(secretFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 })
    const pems = await Effect.runPromise(certificate)
    const caFile = join(dir, "ca.pem")
    writeFileSync(caFile, pems.cert)
    const r = await Effect.runPromise(Scope.extend(receiver(pems), scope))
    r.setHandler((_req, res) => void setTimeout(() => res.end("ok"), RECEIVER_DELAY_MS))
    hooks = r
    await withClient((c) => c.query(`create database ${database}`))
    // Three hosts starting together on a fresh database: the migration runs once (advisory lock).
    hosts = await Promise.all(["a", "b", "c"].map((name) => startHost(name, caFile)))
    adminOptions = {
      dbFile: join(dir, "admin.db"),
      databaseUrl: Redacted.make(url),
      secretFile,
      poolSize: 3
    }
    admin = await openDatabase({ url: Redacted.make(url), poolSize: 3 })
  })

  afterAll(async () => {
    for (const h of hosts) {
      if (h.child.exitCode === null && h.child.signalCode === null) {
        h.child.kill("SIGTERM")
        await h.exited
      }
    }
    await admin?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await withClient((c) => c.query(`drop database if exists ${database} with (force)`))
    rmSync(dir, { recursive: true, force: true })
  })

  it("books through all three at once; cancels, downloads and key rotation work across hosts", async () => {
    const [a, b, c] = hosts as [Host, Host, Host]
    const acct = await newAccount("Fleet bookings")
    // Three requests of two shipments on each host, all at once.
    const booked = (await Promise.all(hosts.flatMap((h) => [1, 2, 3].map(() => book(h, acct.liveKey, 2))))).flat()
    expect(booked).toHaveLength(18)
    expect(new Set(booked).size).toBe(18)
    const stored = await query<{ track_no: string }>(`select track_no from waybill_shipments where customer_no = $1`, [
      acct.customerNo
    ])
    expect(stored.map((s) => s.track_no).sort()).toEqual([...booked].sort())

    // Booked on A (the first six came from A), cancelled on B, seen cancelled on C.
    const fromA = booked[0]!
    const canceled = await cancel(b, acct.liveKey, fromA)
    expect([canceled.status, canceled.body.error]).toEqual([200, null])
    const onC = await ops(c.url, `shipments/${fromA}/`)
    expect([onC.status, onC.body.data.state]).toEqual([200, "canceled"])

    // A download link issued by A downloads from B.
    const withDoc = booked[1]!
    const bytes = pdf("fleet")
    await core(Documents.addDocument({ trackNo: withDoc, type: "bol", bytes }))
    const lookup = await fetch(`${a.url}/api/v1/order/docs/?control_no=${withDoc}&key=${acct.liveKey}`)
    expect(lookup.status).toBe(200)
    const docs = (await lookup.json()) as { data: { orders: Array<{ documents: Array<{ uri: string }> }> } }
    const issued = new URL(docs.data.orders[0]!.documents[0]!.uri)
    expect(issued.origin).toBe(new URL(a.url).origin)
    const onB = await fetch(`${b.url}${issued.pathname}${issued.search}`)
    expect(onB.status).toBe(200)
    expect(Buffer.from(await onB.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)

    // A key rotated through B is refused by A and C on the next request; the new one works there.
    const rotated = await ops(b.url, `accounts/${acct.customerNo}/keys/live/rotate/`, {})
    expect(rotated.status).toBe(200)
    const fresh = rotated.body.data.key as string
    for (const h of [a, c]) {
      const old = await postJson(
        `${h.url}/api/v1/order/json/`,
        { data: { shipments: [shipment()] } },
        { authorization: `Bearer ${acct.liveKey}` }
      )
      expect([h.name, old.status]).toEqual([h.name, 401])
    }
    expect(await book(a, fresh, 1)).toHaveLength(1)
  })

  it("one key's request limit holds across the fleet, within the documented over-admission", async () => {
    const [hard, shared] = [await newAccount("Fleet limits 1"), await newAccount("Fleet limits 2")]
    // A burst must not straddle the end of a window (counts restart there).
    if (windowLeft() < 20) await sleep(windowLeft() * 1000 + 500)
    const track = (h: Host, key: string) =>
      fetch(`${h.url}/api/v1/utilities/track/?idx=00000000&key=${key}`).then(async (r) => {
        await r.arrayBuffer()
        return r.status
      })
    const burst = async (key: string, perHost: number) => {
      const statuses = await Promise.all(hosts.flatMap((h) => Array.from({ length: perHost }, () => track(h, key))))
      expect(statuses.filter((s) => s >= 500)).toEqual([])
      return statuses.filter((s) => s !== 429).length
    }
    // 40 requests to each host at once, 120 in all: more than hosts x limit (90). Counts never
    // run ahead of the true number of hits, so the first LIMIT get through; each host counts
    // every hit of its own, so none admits more than LIMIT, and the fleet at most hosts x LIMIT.
    const admitted = await burst(hard.testKey, 40)
    expect(admitted).toBeGreaterThanOrEqual(LIMIT)
    expect(admitted).toBeLessThanOrEqual(hosts.length * LIMIT)
    // 20 to each host (60 in all): no host alone reaches the limit, so a host that refuses the
    // next request does so on the counts of the others, which it has within two flush intervals.
    expect(await burst(shared.testKey, 20)).toBeGreaterThanOrEqual(LIMIT)
    await sleep(2 * FLUSH_MS + 1000)
    for (const h of hosts) expect([h.name, await track(h, shared.testKey)]).toEqual([h.name, 429])
  })

  it("webhooks drain through every host; a host killed mid-delivery loses nothing and sends nothing twice", async () => {
    const [a, b, c] = hosts as [Host, Host, Host]
    const acct = await newAccount("Fleet webhooks")
    const { endpoint } = await core(
      Webhooks.addEndpoint(
        { customerNo: acct.customerNo, url: hooks.url, eventTypes: ["*"] },
        { allowPrivate: allowList(["127.0.0.1"]) }
      )
    )
    // 24 shipments booked through the three hosts at once (two requests of four on each), half
    // of them cancelled on another host than the one that booked them: a booked and a
    // canceled event each, which must arrive in that order.
    const perHost = await Promise.all(
      hosts.map(async (h) => [...(await book(h, acct.liveKey, 4)), ...(await book(h, acct.liveKey, 4))])
    )
    const all = perHost.flat()
    expect(new Set(all).size).toBe(24)
    const order: Array<[Host, Host]> = [
      [a, b],
      [b, c],
      [c, a]
    ]
    await Promise.all(
      order.flatMap(([, other], i) =>
        perHost[i]!.slice(0, 4).map(async (trackNo) => {
          const r = await cancel(other, acct.liveKey, trackNo)
          expect([trackNo, r.status]).toEqual([trackNo, 200])
        })
      )
    )
    const events = await query<{ id: string; track_no: string; sequence: number }>(
      `select id, track_no, sequence from waybill_events where customer_no = $1`,
      [acct.customerNo]
    )
    expect(events.length).toBeGreaterThanOrEqual(36)

    // Kill the host holding the most deliveries (at least one), mid-send: a lease owner
    // carries its host's pid.
    const ownerOf = (h: Host) => `dispatcher_${h.child.pid}_%`
    const leasedBy = (h: Host) =>
      query<{ event_id: string }>(
        `select event_id from waybill_webhook_deliveries where lease_owner like $1 and status = 'pending'`,
        [ownerOf(h)]
      ).then((rows) => rows.map((r) => r.event_id))
    let victim: Host | undefined
    await eventually("a host holding a delivery", async () => {
      const held = await Promise.all(hosts.map(async (h) => [h, (await leasedBy(h)).length] as const))
      const [most, n] = held.reduce((x, y) => (y[1] > x[1] ? y : x))
      victim = n > 0 ? most : undefined
      return victim !== undefined
    })
    victim!.child.kill("SIGKILL")
    await victim!.exited
    // What it held when it died: the only attempts that may reach the receiver twice.
    const heldByVictim = new Set(await leasedBy(victim!))
    expect(heldByVictim.size).toBeGreaterThan(0)

    const ids = new Set(events.map((e) => e.id))
    const hitsById = () => {
      const hits = new Map<string, number>()
      for (const x of hooks.received) {
        const id = x.headers["webhook-id"]!
        if (ids.has(id)) hits.set(id, (hits.get(id) ?? 0) + 1)
      }
      return hits
    }
    /** Attempts received twice that the killed host did not hold: sent twice by live hosts. */
    const sentTwiceByLiveHosts = (hits: ReadonlyMap<string, number>) =>
      [...hits].filter(([id, n]) => n > 1 && !heldByVictim.has(id)).map(([id]) => id)
    // Waits for every event, or stops early at the first attempt a live host sent twice.
    await waitFor(
      "every event at the receiver",
      () => {
        const hits = hitsById()
        return hits.size === ids.size || sentTwiceByLiveHosts(hits).length > 0
      },
      90_000
    )
    expect(sentTwiceByLiveHosts(hitsById())).toEqual([])
    await eventually("every delivery recorded as delivered", async () => {
      const rows = await query<{ status: string; n: number }>(
        `select status, count(*)::int as n from waybill_webhook_deliveries where endpoint_id = $1 group by status`,
        [endpoint.id]
      )
      return rows.length === 1 && rows[0]!.status === "delivered" && rows[0]!.n === ids.size
    })

    const hits = hitsById()
    expect(sentTwiceByLiveHosts(hits)).toEqual([])
    // What the killed host held went out at most once more, by the host that took it over.
    expect([...hits].filter(([, n]) => n > 2)).toEqual([])
    // Each shipment's events first arrived in sequence order.
    const firstSeen = new Map<string, Array<number>>()
    const seen = new Set<string>()
    for (const x of hooks.received) {
      const id = x.headers["webhook-id"]!
      if (!ids.has(id) || seen.has(id)) continue
      seen.add(id)
      const p = JSON.parse(x.body) as { sequence: number; data: { track_no: string } }
      firstSeen.set(p.data.track_no, [...(firstSeen.get(p.data.track_no) ?? []), p.sequence])
    }
    for (const trackNo of all) {
      const expected = events
        .filter((e) => e.track_no === trackNo)
        .map((e) => Number(e.sequence))
        .sort((x, y) => x - y)
      expect([trackNo, firstSeen.get(trackNo)]).toEqual([trackNo, expected])
    }
  })
})
