import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Accounts, Admission, Cancel, Credentials, Operations, ShipmentStore } from "@waybill/core"
import type { HostServices } from "../src/host.js"
import { bookOne, ops, startHost, type TestAccount, type TestHost } from "./harness.js"

let t: TestHost
let a: TestAccount
let b: TestAccount

const providerCalls: Array<string> = []
const provider = Layer.succeed(Cancel.CancelProvider, {
  cancel: (s) =>
    s.billingReference === "REFUSE"
      ? Effect.fail(new Cancel.CancelProviderFailed({ message: "provider refused" }))
      : Effect.sync(() => {
          providerCalls.push(s.trackNo)
          return { result: "success", provider: "acme-dispatch", confirmation: `CX-${s.trackNo}` }
        })
})

beforeAll(async () => {
  t = await startHost({ extraLayer: provider })
  a = await t.newAccount("A")
  b = await t.newAccount("B")
})
afterAll(() => t.close())

const cancel = async (query: Record<string, string | Array<string>>) => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) for (const x of [v].flat()) params.append(k, x)
  const response = await fetch(`${t.url}/api/v1/order/cancel/json/?${params}`)
  return { status: response.status, text: await response.text(), headers: response.headers }
}
const envelope = (message: string) => JSON.stringify({ data: null, error: { message, exception: null } })

describe("GET /api/v1/order/cancel/json/", () => {
  it("cancels once, then says the order is already canceled", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const first = await cancel({ id, key: a.liveKey })
    expect(first.status).toBe(200)
    expect(first.text).toBe('{"data":{"result":"success"},"error":null}')
    expect(first.headers.get("cache-control")).toBe("no-store")
    const again = await cancel({ id, key: a.liveKey })
    expect(again.status).toBe(409)
    expect(again.text).toBe(envelope("The order is already canceled."))
    const shown = await ops(t.url, `shipments/${id}`)
    expect(shown.body.data.state).toBe("canceled")
    expect(shown.body.data.events.map((e: { type: string }) => e.type)).toEqual([
      "shipment.booked",
      "shipment.canceled"
    ])
  })

  it("after a driver is assigned: This order cannot be canceled.", async () => {
    const id = await bookOne(t.url, a.liveKey)
    expect((await ops(t.url, `shipments/${id}/assign`, { driver_id: "drv-7" })).status).toBe(200)
    const r = await cancel({ id, key: a.liveKey })
    expect(r.status).toBe(409)
    expect(r.text).toBe(envelope("This order cannot be canceled."))
  })

  it("answers each credential error with the interface's message", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const none = await cancel({ id })
    expect([none.status, none.text]).toEqual([401, envelope("You did not provide an access token.")])
    const bad = await cancel({ id, key: "wb_live_not-a-key" })
    expect([bad.status, bad.text]).toEqual([401, envelope("Access denied.")])
    const c = await t.newAccount("C")
    const cid = await bookOne(t.url, c.liveKey)
    await t.run(Accounts.setKeyStatus(c.customerNo, "live", "disabled"))
    const disabled = await cancel({ id: cid, key: c.liveKey })
    expect([disabled.status, disabled.text]).toEqual([401, envelope("Access denied.")])
  })

  it("rejects ids that are not 6 to 8 digits before any lookup", async () => {
    for (const id of ["", "12345", "123456789", "abcdefg", "1234567a", " 1234567", "１２３４５６７"]) {
      const r = await cancel({ id, key: a.liveKey })
      expect([r.status, r.text], id).toEqual([400, envelope("A valid tracking number is required.")])
    }
    const missing = await cancel({ key: a.liveKey })
    expect([missing.status, missing.text]).toEqual([400, envelope("A valid tracking number is required.")])
  })

  it("unknown and another customer's tracking numbers get the same answer, byte for byte", async () => {
    const theirs = await bookOne(t.url, b.liveKey)
    const foreign = await cancel({ id: theirs, key: a.liveKey })
    const unknown = await cancel({ id: "00000001", key: a.liveKey })
    expect(foreign.status).toBe(unknown.status)
    expect(foreign.text).toBe(unknown.text)
    // `RateLimit` counts the key's requests down (r=), and the request id is new per answer: neither says anything about the shipment.
    const same = ([k]: [string, string]) => k !== "date" && k !== "ratelimit" && k !== "x-request-id"
    expect([...foreign.headers.entries()].filter(same)).toEqual([...unknown.headers.entries()].filter(same))
    expect(foreign.headers.get("ratelimit-policy")).toBe(unknown.headers.get("ratelimit-policy"))
    expect(foreign.text).toBe(envelope("A valid tracking number is required."))
    // and B's shipment is untouched
    expect((await ops(t.url, `shipments/${theirs}`)).body.data.state).toBe("booked")
  })

  it("a test key cannot cancel a live booking (and the answer reveals nothing)", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const r = await cancel({ id, key: a.testKey })
    expect([r.status, r.text]).toEqual([400, envelope("A valid tracking number is required.")])
    const testBooking = await bookOne(t.url, a.testKey)
    expect((await cancel({ id: testBooking, key: a.testKey })).status).toBe(200)
  })

  it("the Authorization header, when sent, decides alone", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const response = await fetch(`${t.url}/api/v1/order/cancel/json/?id=${id}&key=${a.liveKey}`, {
      headers: { authorization: "Bearer nope" }
    })
    expect(response.status).toBe(401)
  })

  it("a repeated key is refused in the interface's words", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const r = await cancel({ id, key: [a.liveKey, b.liveKey] })
    expect([r.status, r.text]).toEqual([401, envelope("Access denied.")])
  })

  it("only GET", async () => {
    const response = await fetch(`${t.url}/api/v1/order/cancel/json/`, { method: "POST" })
    expect(response.status).toBe(405)
    expect(response.headers.get("allow")).toBe("GET")
  })

  it("accounts in provider mode forward to the CancelProvider and return its payload", async () => {
    const p = await t.newAccount("Provider")
    await t.run(Accounts.updateAccount(p.customerNo, { cancelMode: "provider" }))
    const id = await bookOne(t.url, p.liveKey)
    const r = await cancel({ id, key: p.liveKey })
    expect(r.status).toBe(200)
    expect(JSON.parse(r.text)).toEqual({
      data: { result: "success", provider: "acme-dispatch", confirmation: `CX-${id}` },
      error: null
    })
    expect(providerCalls).toContain(id)
    expect((await ops(t.url, `shipments/${id}`)).body.data.state).toBe("canceled")
  })

  it("a provider refusal leaves the shipment booked (the local cancellation is rolled back)", async () => {
    const p = await t.newAccount("Refusing provider")
    await t.run(Accounts.updateAccount(p.customerNo, { cancelMode: "provider" }))
    const id = await bookOne(t.url, p.liveKey, { BillingReference: "REFUSE" })
    const r = await cancel({ id, key: p.liveKey })
    expect([r.status, r.text]).toEqual([502, envelope("This order cannot be canceled.")])
    const shown = (await ops(t.url, `shipments/${id}`)).body.data
    expect(shown.state).toBe("booked")
    expect(shown.events.map((e: { type: string }) => e.type)).toEqual(["shipment.booked"])
  })

  it("cancel racing a driver assignment: exactly one wins", async () => {
    for (let i = 0; i < 12; i++) {
      const id = await bookOne(t.url, a.liveKey)
      const [c, asg] = await Promise.all([
        cancel({ id, key: a.liveKey }),
        ops(t.url, `shipments/${id}/assign`, { driver_id: `drv-${i}` })
      ])
      const state = (await ops(t.url, `shipments/${id}`)).body.data.state
      if (c.status === 200) {
        expect(asg.status).toBe(409)
        expect(state).toBe("canceled")
      } else {
        expect(c.status).toBe(409)
        expect(c.text).toBe(envelope("This order cannot be canceled."))
        expect(asg.status).toBe(200)
        expect(state).toBe("assigned")
      }
    }
  })

  it("a cancel that loses the race to an assignment is decided again on the new state (not a conflict error)", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const outcome = await t.run(
      Effect.gen(function* () {
        const context = yield* Effect.context<HostServices>()
        const real = Context.get(context, ShipmentStore)
        let reads = 0
        // Right after cancel has read the booked shipment, a driver is assigned: its update then
        // meets a newer version, as when both requests arrive together.
        const racing: typeof real = {
          ...real,
          findByTrackNo: (trackNo) =>
            Effect.tap(real.findByTrackNo(trackNo), () =>
              reads++ === 0
                ? Operations.assign(trackNo, "drv-race").pipe(Effect.provide(context), Effect.orDie)
                : Effect.void
            )
        }
        const principal = yield* Admission.admit({
          client: Option.none(),
          resolution: Credentials.fromAuthorization(`Bearer ${a.liveKey}`)
        }).pipe(Effect.provide(context), Effect.orDie)
        return yield* Effect.either(
          Cancel.cancel({ client: Option.none(), principal, id: [id] }).pipe(
            Effect.provideService(ShipmentStore, racing)
          )
        )
      })
    )
    expect(outcome._tag === "Left" && outcome.left).toMatchObject({
      _tag: "TransitionRejected",
      code: "not-cancelable"
    })
    expect((await ops(t.url, `shipments/${id}`)).body.data.state).toBe("assigned")
  })

  it("property: arbitrary id and key values never yield a 500 and never touch another customer's order", async () => {
    const victims = await Promise.all([bookOne(t.url, b.liveKey), bookOne(t.url, b.liveKey)])
    const id = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...victims), fc.stringMatching(/^\d{6,8}$/))
    const key = fc.oneof(fc.string({ maxLength: 70 }), fc.constant(a.liveKey), fc.constant(a.testKey), fc.constant(""))
    await fc.assert(
      fc.asyncProperty(fc.option(id, { nil: undefined }), fc.option(key, { nil: undefined }), async (i, k) => {
        const r = await cancel({ ...(i === undefined ? {} : { id: i }), ...(k === undefined ? {} : { key: k }) })
        expect(r.status, r.text).toBeLessThan(500)
        expect(() => JSON.parse(r.text)).not.toThrow()
        if (i !== undefined && victims.includes(i)) expect(r.status).not.toBe(200)
        expect([200, 400, 401, 409]).toContain(r.status)
        if (r.status === 409) expect(i !== undefined && victims.includes(i)).toBe(false)
      }),
      { numRuns: 200 }
    )
    for (const v of victims) expect((await ops(t.url, `shipments/${v}`)).body.data.state).toBe("booked")
  })
})
