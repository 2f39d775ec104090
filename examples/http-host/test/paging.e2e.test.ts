/**
 * The operator lists page with a cursor: `?limit=1..100&starting_after=CURSOR` answers
 * `{ data, has_more, next_starting_after }` newest first, bad values get the 400 envelope, and
 * a cursor taken from another account's list is only a position in the caller's own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { IpBlocks, type Webhook, WebhookStore } from "@waybill/core"
import { bookOne, ops, startHost, type TestHost } from "./harness.js"

const T = Date.UTC(2026, 0, 5, 12)

const endpointOf = (customerNo: string, i: number): Webhook.EndpointRecord => ({
  id: `we_paging${customerNo}${String(i).padStart(3, "0")}`,
  customerNo,
  url: `https://hooks.example.com/${i}`,
  eventTypes: ["shipment.booked"],
  secret: "sealed:v1:webhook-1:aaaa:bbbb",
  previousSecret: null,
  previousSecretUntil: null,
  enabled: true,
  disabledReason: null,
  failingSince: null,
  // Two endpoints per millisecond: the id breaks the tie.
  createdAt: T + Math.floor(i / 2),
  updatedAt: T
})

/** Follows `next_starting_after` from `first` to the end; every page's body. */
const pages = async (t: TestHost, first: string) => {
  const bodies: Array<{ data: Array<Record<string, unknown>>; has_more: boolean; next_starting_after: string | null }> =
    []
  let path: string | undefined = first
  while (path !== undefined) {
    const r = await ops(t.url, path)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const body = r.body.data
    bodies.push(body)
    const cursor: string | null = body.next_starting_after
    expect(cursor === null).toBe(!body.has_more)
    path = cursor === null ? undefined : `${first}${first.includes("?") ? "&" : "?"}starting_after=${cursor}`
  }
  return bodies
}

describe("paged operator lists", () => {
  let t: TestHost
  beforeAll(async () => {
    t = await startHost({ webhooks: { dispatch: false } })
  })
  afterAll(async () => {
    await t.close()
  })

  it("webhook endpoints: newest first, limit at a time, every one once; a foreign cursor shows only the caller's", async () => {
    const [a, b] = [await t.newAccount("A"), await t.newAccount("B")]
    const mine = Array.from({ length: 7 }, (_, i) => endpointOf(a.customerNo, i))
    const theirs = Array.from({ length: 3 }, (_, i) => endpointOf(b.customerNo, i))
    await t.run(Effect.flatMap(WebhookStore, (s) => Effect.forEach([...mine, ...theirs], s.insertEndpoint)))

    const bodies = await pages(t, `webhooks/?customer_no=${a.customerNo}&limit=3`)
    expect(bodies.map((p) => p.data.length)).toEqual([3, 3, 1])
    expect(bodies.flatMap((p) => p.data.map((e) => e.id))).toEqual(mine.map((e) => e.id).reverse())
    expect(JSON.stringify(bodies)).not.toContain("sealed:")

    // B's cursor after its newest endpoint (T + 1) used on A's list: A's endpoints below it.
    const foreign = (await ops(t.url, `webhooks/?customer_no=${b.customerNo}&limit=1`)).body.data
    expect(foreign.data.map((e: { id: string }) => e.id)).toEqual([theirs[2]!.id])
    const crossed = await ops(
      t.url,
      `webhooks/?customer_no=${a.customerNo}&limit=100&starting_after=${foreign.next_starting_after}`
    )
    const ids = crossed.body.data.data.map((e: { id: string; customer_no: string }) => e.id)
    expect(crossed.body.data.data.every((e: { customer_no: string }) => e.customer_no === a.customerNo)).toBe(true)
    expect(ids).toEqual(
      mine
        .filter(
          (e) => e.createdAt < theirs[2]!.createdAt || (e.createdAt === theirs[2]!.createdAt && e.id < theirs[2]!.id)
        )
        .map((e) => e.id)
        .reverse()
    )
  })

  it("refuses a bad limit or cursor with the 400 envelope", async () => {
    for (const query of ["limit=0", "limit=101", "limit=ten", "limit=-1", "limit=2.5"]) {
      const r = await ops(t.url, `webhooks/?${query}`)
      expect([r.status, r.body]).toEqual([
        400,
        { data: null, error: { message: "limit must be an integer from 1 to 100.", exception: null } }
      ])
    }
    for (const path of ["webhooks/", "blocks/"]) {
      const r = await ops(t.url, `${path}?starting_after=not-a-cursor`)
      expect([r.status, r.body.error?.message]).toEqual([
        400,
        "starting_after is not a cursor of this list (use next_starting_after of the previous page)."
      ])
    }
    const r = await ops(t.url, "webhooks/we_nope/deliveries/")
    expect([r.status, r.body.error?.message]).toEqual([404, "No webhook endpoint has this id."])
  })

  it("IP blocks: GET /ops/v1/blocks/ pages the blocks in force, newest first", async () => {
    for (let i = 0; i < 5; i++) await t.run(IpBlocks.block(`198.51.100.${10 + i}`, 3_600_000, `paging ${i}`))
    const bodies = await pages(t, "blocks/?limit=2")
    const listed = bodies.flatMap((p) => p.data)
    expect(bodies.map((p) => p.data.length)).toEqual([2, 2, 1])
    expect(new Set(listed.map((b) => b.ip))).toEqual(new Set([10, 11, 12, 13, 14].map((n) => `198.51.100.${n}`)))
    const keys = listed.map((b) => `${b.created_at as string} ${b.ip as string}`)
    expect(keys).toEqual([...keys].sort().reverse())
  })

  it("deliveries and the delivery log page newest first", async () => {
    const a = await t.newAccount("C")
    const e = endpointOf(a.customerNo, 0)
    await t.run(Effect.flatMap(WebhookStore, (s) => s.insertEndpoint(e)))
    const booked: Array<string> = []
    for (let i = 0; i < 3; i++) booked.push(await bookOne(t.url, a.liveKey))
    const deliveries = await pages(t, `webhooks/${e.id}/deliveries/?limit=2`)
    expect(deliveries.map((p) => p.data.length)).toEqual([2, 1])
    expect(deliveries.flatMap((p) => p.data.map((d) => d.track_no))).toEqual([...booked].reverse())

    const lines = deliveries
      .flatMap((p) => p.data)
      .map(
        (d, i): Webhook.AttemptRecord => ({
          endpointId: e.id,
          eventId: d.event_id as string,
          attempt: 1,
          at: T + i,
          status: 500,
          ok: false,
          durationMs: 3,
          response: "nope"
        })
      )
    await t.run(
      Effect.flatMap(WebhookStore, (s) =>
        Effect.forEach(lines, (attempt) => s.complete({ owner: "nobody", attempt, outcome: { _tag: "Exhausted" } }))
      )
    )
    const log = await pages(t, `webhooks/${e.id}/log/?limit=1`)
    expect(log.flatMap((p) => p.data.map((x) => x.event_id))).toEqual(lines.map((l) => l.eventId).reverse())
    const first = await ops(t.url, `webhooks/${e.id}/log/?limit=1`)
    expect(first.body.data.endpoint.id).toBe(e.id)
  })
})
