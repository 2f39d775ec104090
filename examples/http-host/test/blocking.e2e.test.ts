import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IpBlocks } from "@waybill/core"
import { bookOne, postJson, shipment, startHost, type TestAccount, type TestHost } from "./harness.js"

const blocked = JSON.stringify({ data: null, error: { message: "IP address is blocked", exception: null } })

describe("blocked client addresses", () => {
  let t: TestHost
  let a: TestAccount
  beforeAll(async () => {
    t = await startHost()
    a = await t.newAccount()
  })
  afterAll(() => t.close())

  const cancel = (id: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/api/v1/order/cancel/json/?id=${id}&key=${a.liveKey}`, { headers }).then(async (r) => ({
      status: r.status,
      text: await r.text()
    }))

  it("a blocked IP gets 'IP address is blocked' (403) on cancel and booking, even with a spoofed X-Forwarded-For", async () => {
    const id = await bookOne(t.url, a.liveKey)
    await t.run(IpBlocks.block("127.0.0.1", 3_600_000, "test"))
    expect(await cancel(id)).toEqual({ status: 403, text: blocked })
    expect(await cancel(id, { "x-forwarded-for": "203.0.113.77" })).toEqual({ status: 403, text: blocked })
    // No key at all: the block still answers first, so a blocked caller learns nothing else.
    const anonymous = await fetch(`${t.url}/api/v1/order/cancel/json/?id=${id}`)
    expect(anonymous.status).toBe(403)
    const booking = await postJson(
      `${t.url}/api/v1/order/json/`,
      { data: { shipments: [shipment()] } },
      { authorization: `Bearer ${a.liveKey}` }
    )
    expect(booking.status).toBe(403)
    expect(booking.body.error?.message).toBe("IP address is blocked")

    const provisioning = await fetch(`${t.url}/api/v1/accountsetup/?action=pre-register`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email_address=ops%40acme-freight.example&password=correct+horse+battery+staple"
    })
    expect([provisioning.status, await provisioning.text()]).toEqual([403, blocked])

    expect(await t.run(IpBlocks.unblock("127.0.0.1"))).toBe(true)
    expect((await cancel(id)).status).toBe(200)
  })

  it("an expired block no longer applies", async () => {
    const id = await bookOne(t.url, a.liveKey)
    await t.run(IpBlocks.block("127.0.0.1", 1, "blink"))
    await new Promise((r) => setTimeout(r, 5))
    expect((await cancel(id)).status).toBe(200)
  })
})

describe("behind a trusted proxy", () => {
  let t: TestHost
  let a: TestAccount
  beforeAll(async () => {
    t = await startHost({ trustedProxies: ["127.0.0.0/8"] })
    a = await t.newAccount()
  })
  afterAll(() => t.close())

  it("the proxy's X-Forwarded-For names the client; IPv6 clients are blocked by /64", async () => {
    const id = await bookOne(t.url, a.liveKey)
    await t.run(IpBlocks.block("2001:db8:5:6::1", 3_600_000, "test"))
    const from = (xff: string) =>
      fetch(`${t.url}/api/v1/order/cancel/json/?id=${id}&key=${a.liveKey}`, {
        headers: { "x-forwarded-for": xff }
      }).then((r) => r.status)
    expect(await from("2001:db8:5:6:ffff::9")).toBe(403)
    expect(await from("198.51.100.4, 2001:db8:5:6::abcd")).toBe(403)
    // The left-most entry is the client's own claim and is not believed.
    expect(await from("2001:db8:5:6::1, 198.51.100.4")).toBe(200)
  })
})
