/**
 * `Idempotency-Key` on the real host (docs/api/idempotency.md): replays, a reused key, a key in
 * progress, invalid keys, scopes, what is and is not stored, cancel, and the property that any
 * interleaving of duplicate requests books exactly once.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { IdempotencyStore } from "@waybill/core"
import { postJson, shipment, startHost, type TestAccount, type TestHost } from "./harness.js"

let t: TestHost
let acct: TestAccount
let endpoint: string

beforeAll(async () => {
  t = await startHost()
  acct = await t.newAccount()
  endpoint = `${t.url}/api/v1/order/json/`
})
afterAll(() => t.close())

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
let keys = 0
const freshKey = () => `idem-${Date.now().toString(36)}-${(keys++).toString(36)}`

const post = async (body: string, headers: Record<string, string>) => {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const bookingBody = (reference = "REF-1") =>
  JSON.stringify({ data: { shipments: [shipment({ BillingReference: reference })] } })

const bookedFor = async (customerNo: string, reference: string) =>
  (
    await t.host.database.db
      .selectFrom("waybill_shipments")
      .select("track_no")
      .where("customer_no", "=", customerNo)
      .where("billing_reference", "=", reference)
      .execute()
  ).map((r) => r.track_no)

const idempotencyRows = async () =>
  Number(
    (
      await t.host.database.db
        .selectFrom("waybill_idempotency_keys")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n
  )

const envelope = (message: string) => JSON.stringify({ data: null, error: { message, exception: null } })

describe("Idempotency-Key on POST /api/v1/order/json/", () => {
  it("replays the first answer byte for byte, with Idempotent-Replayed, and books once", async () => {
    const key = freshKey()
    const first = await post(bookingBody("REPLAY"), { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(first.status).toBe(200)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await post(bookingBody("REPLAY"), { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(await bookedFor(acct.customerNo, "REPLAY")).toHaveLength(1)
    // The key may come from the body's data.token instead of the header: same account, same scope.
    const viaBody = await post(
      JSON.stringify({ data: { token: acct.liveKey, shipments: [shipment({ BillingReference: "REPLAY" })] } }),
      { "idempotency-key": key }
    )
    expect(viaBody.status).toBe(422) // another body: another request
  })

  it("the same key with another body is 422 and books nothing", async () => {
    const key = freshKey()
    expect((await post(bookingBody("MISMATCH-1"), { ...bearer(acct.liveKey), "idempotency-key": key })).status).toBe(
      200
    )
    const other = await post(bookingBody("MISMATCH-2"), { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(other.status).toBe(422)
    expect(other.text).toBe(envelope("This Idempotency-Key was used with a different request."))
    expect(await bookedFor(acct.customerNo, "MISMATCH-2")).toEqual([])
  })

  it("while the first request is in progress: 409, and nothing runs", async () => {
    const key = freshKey()
    const body = bookingBody("IN-PROGRESS")
    // The first request's claim, as a host that is still running it left it.
    const bodyHash = createHash("sha256").update(body).digest("hex")
    const print = createHash("sha256").update(`POST /api/v1/order/json/\n${bodyHash}`).digest("hex")
    const now = Date.now()
    await t.run(
      Effect.flatMap(IdempotencyStore, (store) =>
        store.claim({
          scope: { customerNo: acct.customerNo, mode: "live" },
          key,
          fingerprint: print,
          token: "held-by-another-host",
          createdAt: now,
          lockedUntil: now + 60_000,
          expiresAt: now + 86_400_000
        })
      )
    )
    const r = await post(body, { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(r.status).toBe(409)
    expect(r.text).toBe(envelope("A request with this Idempotency-Key is in progress."))
    expect(await bookedFor(acct.customerNo, "IN-PROGRESS")).toEqual([])
  })

  it("an unusable key is 400 in the envelope, and nothing is booked", async () => {
    for (const key of ["", "x".repeat(256), "caf\u00e9", "tab\there"]) {
      const r = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(acct.liveKey), "idempotency-key": key },
        body: bookingBody("BAD-KEY")
      }).catch(() => undefined)
      // Fetch itself refuses some header values (non-Latin-1); those never reach the server.
      if (r === undefined) continue
      expect(r.status).toBe(400)
      expect(await r.text()).toBe(envelope("The Idempotency-Key header must be 1 to 255 printable ASCII characters."))
    }
    const longest = await post(bookingBody("KEY-255"), { ...bearer(acct.liveKey), "idempotency-key": "k".repeat(255) })
    expect(longest.status).toBe(200)
    expect(await bookedFor(acct.customerNo, "BAD-KEY")).toEqual([])
  })

  it("keys are scoped by account and key mode", async () => {
    const other = await t.newAccount("Other")
    const key = freshKey()
    const headers = { "idempotency-key": key }
    const live = await post(bookingBody("SCOPE"), { ...headers, ...bearer(acct.liveKey) })
    const test = await post(bookingBody("SCOPE"), { ...headers, ...bearer(acct.testKey) })
    const otherLive = await post(bookingBody("SCOPE"), { ...headers, ...bearer(other.liveKey) })
    for (const r of [live, test, otherLive]) {
      expect(r.status).toBe(200)
      expect(r.headers.get("idempotent-replayed")).toBeNull()
    }
    expect(await bookedFor(acct.customerNo, "SCOPE")).toHaveLength(2)
    expect(await bookedFor(other.customerNo, "SCOPE")).toHaveLength(1)
  })

  it("a request refused at the door stores nothing; 4xx answers are stored and replayed", async () => {
    const key = freshKey()
    const before = await idempotencyRows()
    const refused = await post(bookingBody("DOOR"), { ...bearer("wb_live_not_a_real_key"), "idempotency-key": key })
    expect(refused.status).toBe(401)
    expect(await idempotencyRows()).toBe(before)
    // An invalid booking with the key: its 400 is the answer to that request, and stays so.
    const invalid = JSON.stringify({ data: { shipments: [shipment({ PickupZip: "00000" })] } })
    const first = await post(invalid, { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(first.status).toBe(400)
    const again = await post(invalid, { ...bearer(acct.liveKey), "idempotency-key": key })
    expect(again.status).toBe(400)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
  })

  it("a booking without the header touches no idempotency record", async () => {
    const before = await idempotencyRows()
    const r = await postJson(endpoint, { data: { shipments: [shipment()] } }, bearer(acct.liveKey))
    expect(r.status).toBe(200)
    expect(await idempotencyRows()).toBe(before)
  })

  it("property: any interleaving of duplicate requests books exactly once", async () => {
    let round = 0
    await fc.assert(
      fc.asyncProperty(
        // Per duplicate: how many event-loop turns it waits before it is sent.
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 2, maxLength: 8 }),
        async (delays) => {
          const key = freshKey()
          const reference = `PROP-${round++}`
          const body = bookingBody(reference)
          // In process (the host's own handler, no sockets), so requests overlap as far as one
          // SQLite process lets them; the race across hosts on PostgreSQL, where claims really
          // collide, is the property in storage-kysely's Idempotency.test.ts.
          const send = async (turns: number) => {
            for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
            const reply = await t.host.handler.handleRaw(
              new Request(endpoint, {
                method: "POST",
                headers: { "content-type": "application/json", ...bearer(acct.liveKey), "idempotency-key": key },
                body
              })
            )
            const headers = new Headers(reply.headers as Record<string, string>)
            return { status: reply.status, headers, text: new TextDecoder().decode(reply.body as Uint8Array) }
          }
          const answers = await Promise.all(delays.map(send))
          // Each answer is the booking (first or replayed) or "in progress"; never a second booking.
          for (const a of answers) expect([200, 409]).toContain(a.status)
          const booked = answers.filter((a) => a.status === 200)
          expect(booked.length).toBeGreaterThanOrEqual(1)
          expect(new Set(booked.map((a) => a.text)).size).toBe(1)
          expect(booked.filter((a) => a.headers.get("idempotent-replayed") === null)).toHaveLength(1)
          // Once all settled, a retry replays the same booking.
          const retry = await post(body, { ...bearer(acct.liveKey), "idempotency-key": key })
          expect(retry.status).toBe(200)
          expect(retry.text).toBe(booked[0]!.text)
          const stored = await bookedFor(acct.customerNo, reference)
          expect(stored).toHaveLength(1)
          expect(JSON.parse(retry.text).data.shipments[0].track_no).toBe(stored[0])
        }
      ),
      { numRuns: 25 }
    )
  }, 60_000)
})

describe("Idempotency-Key on GET /api/v1/order/cancel/json/", () => {
  it("a retried cancel replays its success instead of 'already canceled'", async () => {
    const booked = await postJson(endpoint, { data: { shipments: [shipment()] } }, bearer(acct.liveKey))
    const id = booked.body.data.shipments[0].track_no as string
    const key = freshKey()
    const url = `${t.url}/api/v1/order/cancel/json/?id=${id}`
    const first = await fetch(url, { headers: { ...bearer(acct.liveKey), "idempotency-key": key } })
    expect(first.status).toBe(200)
    const firstText = await first.text()
    const again = await fetch(url, { headers: { ...bearer(acct.liveKey), "idempotency-key": key } })
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(firstText)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.headers.get("cache-control")).toBe("no-store")
    // Another shipment with the same key is another request.
    const other = await fetch(`${url}0`, { headers: { ...bearer(acct.liveKey), "idempotency-key": key } })
    expect(other.status).toBe(422)
    // Without the key, the cancel's own answer.
    const plain = await fetch(url, { headers: bearer(acct.liveKey) })
    expect(plain.status).toBe(409)
  })
})

describe("pnpm waybill idempotency purge", () => {
  it("deletes expired records and keeps the others", async () => {
    const now = Date.now()
    const claim = (key: string, expiresAt: number) =>
      t.run(
        Effect.flatMap(IdempotencyStore, (store) =>
          store.claim({
            scope: { customerNo: acct.customerNo, mode: "test" },
            key,
            fingerprint: "0".repeat(64),
            token: `token-${key}`,
            createdAt: expiresAt - 86_400_000,
            lockedUntil: expiresAt - 86_400_000 + 60_000,
            expiresAt
          })
        )
      )
    const expired = freshKey()
    const live = freshKey()
    await claim(expired, now - 1_000)
    await claim(live, now + 3_600_000)
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "idempotency", "purge", "--db", join(t.dir, "waybill.db"), "--json"],
      { cwd: resolve(import.meta.dirname, "..") }
    )
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!).deleted).toBeGreaterThanOrEqual(1)
    const left = (
      await t.host.database.db
        .selectFrom("waybill_idempotency_keys")
        .select("idem_key")
        .where("idem_key", "in", [expired, live])
        .execute()
    ).map((r) => r.idem_key)
    expect(left).toEqual([live])
  }, 60_000)
})
