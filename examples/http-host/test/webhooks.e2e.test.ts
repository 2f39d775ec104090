/**
 * Webhooks end to end: the real host's dispatcher delivers to a real HTTPS receiver on
 * loopback (self-signed certificate, trusted through the host's `ca` option and reached through
 * the explicit allow-list), and the npm `standardwebhooks` package verifies every delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { Operations, Webhooks } from "@waybill/core"
import { allowList } from "../src/webhooks.js"
import {
  bookOne,
  type Envelope,
  OPERATOR_TOKEN,
  ops,
  startHostWithReceiver,
  type TestHost,
  waitFor
} from "./harness.js"
import type { Received } from "@waybill/testkit/webhook-receiver"

describe("webhooks through the example host", () => {
  let t: TestHost
  let r: Awaited<ReturnType<typeof startHostWithReceiver>>["receiver"]
  let close: () => Promise<void>

  beforeAll(async () => {
    ;({ host: t, receiver: r, close } = await startHostWithReceiver())
  })

  afterAll(() => close())

  it("delivers signed events that standardwebhooks verifies, in order, across a secret rotation", async () => {
    const account = await t.newAccount()
    const created = await t.run(
      Webhooks.addEndpoint(
        { customerNo: account.customerNo, url: r.url, eventTypes: ["*"] },
        { allowPrivate: allowList(["127.0.0.1"]) }
      )
    )
    const secret = Redacted.value(created.secret)
    const trackNo = await bookOne(t.url, account.liveKey)
    await t.run(Operations.perform(trackNo, { action: "assign", driverId: "Dråiver-😀" }))

    const mineFor = (n: number) => () => {
      const got = r.received.filter((x) => x.body.includes(trackNo))
      return got.length >= n ? got : undefined
    }
    const first = await waitFor("two deliveries", mineFor(2))
    const payloads = first.map((x: Received) => new StandardWebhook(secret).verify(x.body, x.headers) as any)
    expect(payloads.map((p) => [p.type, p.sequence])).toEqual([
      ["shipment.booked", 1],
      ["shipment.assigned", 2]
    ])
    for (const [i, x] of first.entries()) {
      expect(x.headers["webhook-id"]).toBe(payloads[i].id)
      expect(payloads[i].id).toMatch(/^evt_/)
      expect(payloads[i].livemode).toBe(true)
      expect(payloads[i].data.track_no).toBe(trackNo)
    }
    expect(payloads[1].data.driver_id).toBe("Dråiver-😀")

    // Rotation: for 24 h both secrets sign, so receivers holding either one accept.
    const rotated = await t.run(Webhooks.rotateSecret(created.endpoint.id))
    const newSecret = Redacted.value(rotated.secret)
    await t.run(Operations.perform(trackNo, { action: "unassign" }))
    const [, , third] = await waitFor("the third delivery", mineFor(3))
    expect(third!.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
    expect((new StandardWebhook(newSecret).verify(third!.body, third!.headers) as any).sequence).toBe(3)
    expect((new StandardWebhook(secret).verify(third!.body, third!.headers) as any).type).toBe("shipment.unassigned")

    // The log shows every attempt; resend sends the same webhook-id again.
    // The receiver sees a delivery before the dispatcher records its outcome: wait for the record.
    const recorded = async () => {
      for (let i = 0; i < 300; i++) {
        const page = (await t.run(Webhooks.deliveries(created.endpoint.id, { limit: 100 }))).page.items
        if (page.every((d) => d.status === "delivered")) return page
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error("the deliveries were not recorded as delivered within 30 s")
    }
    expect((await recorded()).length).toBeGreaterThanOrEqual(3)
    const log = (await t.run(Webhooks.deliveryLog(created.endpoint.id, { limit: 100 }))).page.items
    expect(log.length).toBeGreaterThanOrEqual(3)
    expect(log.every((a) => a.ok && a.status === 200)).toBe(true)
    const firstId = payloads[0].id as string
    expect(await t.run(Webhooks.resend(firstId))).toBe(1)
    const again = await waitFor("the resend", () => {
      const got = r.received.filter((x) => x.headers["webhook-id"] === firstId)
      return got.length >= 2 ? got : undefined
    })
    expect(again[1]!.body).toBe(again[0]!.body)
  })

  it("sends webhook.test only to the endpoint asked for, and only selected types otherwise", async () => {
    const account = await t.newAccount()
    const policy = { allowPrivate: allowList(["127.0.0.1"]) }
    const only = await t.run(
      Webhooks.addEndpoint(
        { customerNo: account.customerNo, url: `${r.url}?only`, eventTypes: ["shipment.canceled"] },
        policy
      )
    )
    const other = await t.run(
      Webhooks.addEndpoint(
        { customerNo: account.customerNo, url: `${r.url}?other`, eventTypes: ["shipment.booked"] },
        policy
      )
    )
    const eventId = await t.run(Webhooks.sendTest(only.endpoint.id))
    const got = await waitFor("the test event", () => r.received.find((x) => x.headers["webhook-id"] === eventId))
    const payload = new StandardWebhook(Redacted.value(only.secret)).verify(got.body, got.headers) as any
    expect(payload.type).toBe("webhook.test")
    expect(payload.data.endpoint_id).toBe(only.endpoint.id)
    const trackNo = await bookOne(t.url, account.liveKey)
    await waitFor("the booking", () => r.received.find((x) => x.body.includes(trackNo)))
    const forBooking = r.received.filter((x) => x.body.includes(trackNo))
    expect(forBooking).toHaveLength(1)
    expect(() =>
      new StandardWebhook(Redacted.value(other.secret)).verify(forBooking[0]!.body, forBooking[0]!.headers)
    ).not.toThrow()
  })

  it("refuses endpoint URLs to private addresses unless allow-listed", async () => {
    const account = await t.newAccount()
    for (const url of [
      "https://127.0.0.1/",
      "https://169.254.169.254/",
      "http://example.com/",
      "https://2130706433/"
    ]) {
      const result = await t.run(
        Effect.either(Webhooks.addEndpoint({ customerNo: account.customerNo, url, eventTypes: ["*"] }))
      )
      expect([url, result._tag === "Left" ? result.left._tag : "accepted"]).toEqual([url, "InvalidWebhook"])
    }
  })

  it("manages endpoints through /ops/v1", async () => {
    const account = await t.newAccount()
    const added = await ops(t.url, "webhooks/", {
      customer_no: account.customerNo,
      url: r.url,
      events: ["shipment.booked"]
    })
    expect(added.status).toBe(201)
    const id = added.body.data.id as string
    expect(added.body.data.secret).toMatch(/^whsec_/)
    // An answer holding a secret must not be kept by any cache.
    expect(added.headers.get("cache-control")).toBe("no-store")
    const listed = await ops(t.url, `webhooks/?customer_no=${account.customerNo}`)
    expect(listed.body.data).toMatchObject({ has_more: false, next_starting_after: null })
    expect(listed.body.data.data).toHaveLength(1)
    expect(JSON.stringify(listed.body.data)).not.toContain("whsec_")
    const test = await ops(t.url, `webhooks/${id}/test/`, {})
    const eventId = test.body.data.event_id as string
    const got = await waitFor("the ops test event", () => r.received.find((x) => x.headers["webhook-id"] === eventId))
    expect((new StandardWebhook(added.body.data.secret).verify(got.body, got.headers) as any).type).toBe("webhook.test")
    const log = await ops(t.url, `webhooks/${id}/deliveries/`)
    expect([log.status, log.body.data.endpoint.id, log.body.data.data[0].event_id]).toEqual([200, id, eventId])
    const rotated = await ops(t.url, `webhooks/${id}/rotate-secret/`, {})
    expect([rotated.status, rotated.headers.get("cache-control")]).toEqual([200, "no-store"])
    expect(rotated.body.data.secret).toMatch(/^whsec_/)
    expect(rotated.body.data.secret).not.toBe(added.body.data.secret)
    expect((await ops(t.url, `webhooks/${id}/disable/`, {})).body.data.enabled).toBe(false)
    expect((await ops(t.url, `webhooks/${id}/enable/`, {})).body.data.enabled).toBe(true)
    expect((await ops(t.url, `webhooks/${id}/recover/`, { since: "2000-01-01T00:00:00Z" })).status).toBe(200)
    expect((await ops(t.url, `events/${eventId}/resend/`, {})).body.data.queued).toBe(1)
    expect((await ops(t.url, "webhooks/we_nope/disable/", {})).status).toBe(404)
    const bad = await ops(t.url, "webhooks/", {
      customer_no: account.customerNo,
      url: "https://10.1.1.1/",
      events: ["*"]
    })
    expect([bad.status, bad.body.error?.message]).toEqual([400, "the URL points to a private or reserved address"])
  })

  it("updates and deletes endpoints through /ops/v1 (PATCH and DELETE /ops/v1/webhooks/{id}/)", async () => {
    const account = await t.newAccount()
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${t.url}/ops/v1/${path}`, {
        method,
        headers: {
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as Envelope }
    }
    const added = await ops(t.url, "webhooks/", {
      customer_no: account.customerNo,
      url: r.url,
      events: ["shipment.booked"]
    })
    const id = added.body.data.id as string

    const moved = await call("PATCH", `webhooks/${id}/`, { url: `${r.url}/v2`, events: ["*"] })
    expect([moved.status, moved.body.data.url, moved.body.data.events.length]).toEqual([
      200,
      `${r.url}/v2`,
      Webhooks.selectableTypes.length
    ])
    expect(JSON.stringify(moved.body.data)).not.toContain("whsec_")
    // Deliveries go to the new URL, signed with the same secret.
    const paths = new Map<string, string>()
    r.setHandler((req, res) => {
      paths.set(String(req.headers["webhook-id"]), req.url ?? "")
      res.end("ok")
    })
    try {
      const eventId = (await ops(t.url, `webhooks/${id}/test/`, {})).body.data.event_id as string
      const got = await waitFor("the test event at the new URL", () =>
        r.received.find((x) => x.headers["webhook-id"] === eventId)
      )
      expect(paths.get(eventId)).toBe("/hooks/v2")
      expect(() => new StandardWebhook(added.body.data.secret).verify(got.body, got.headers)).not.toThrow()
    } finally {
      r.setHandler((_req, res) => res.end("ok"))
    }
    // Only events change: the URL stays.
    const narrowed = await call("PATCH", `webhooks/${id}/`, { events: ["shipment.canceled"] })
    expect([narrowed.body.data.url, narrowed.body.data.events]).toEqual([`${r.url}/v2`, ["shipment.canceled"]])
    expect((await call("GET", `webhooks/${id}/`)).body.data.events).toEqual(["shipment.canceled"])

    // The same rules as adding, and nothing changed by a refused update.
    for (const [change, message] of [
      [{ url: "https://10.1.1.1/" }, "the URL points to a private or reserved address"],
      [{ url: "http://example.com/" }, undefined],
      [{ events: ["shipment.nope"] }, undefined],
      [{ events: [] }, "select at least one event type"],
      [{}, "give a new url, new events, or both"],
      [{ url: 7 }, '{"url"?: string, "events"?: [string]}']
    ] as const) {
      const refused = await call("PATCH", `webhooks/${id}/`, change)
      expect(refused.status, JSON.stringify(change)).toBe(400)
      if (message !== undefined) expect(refused.body.error?.message).toContain(message)
    }
    expect((await call("GET", `webhooks/${id}/`)).body.data.url).toBe(`${r.url}/v2`)
    expect((await call("PATCH", "webhooks/we_nope/", { url: r.url })).status).toBe(404)

    const deleted = await call("DELETE", `webhooks/${id}/`)
    expect([deleted.status, deleted.body.data.id, deleted.body.data.deleted]).toEqual([200, id, true])
    expect((await call("GET", `webhooks/${id}/`)).status).toBe(404)
    expect((await ops(t.url, `webhooks/${id}/deliveries/`)).status).toBe(404)
    expect((await call("DELETE", `webhooks/${id}/`)).status).toBe(404)
    expect((await ops(t.url, `webhooks/?customer_no=${account.customerNo}`)).body.data.data).toEqual([])
  })
})
