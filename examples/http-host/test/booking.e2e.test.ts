import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import { Accounts, EventOutbox, ShipmentStore } from "@waybill/core"
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

describe("POST /api/v1/order/json/ (booking)", () => {
  it("books one shipment and answers in the interface's envelope", async () => {
    const r = await postJson(endpoint, { data: { jsonstrn: "corr-1", shipments: [shipment()] } }, bearer(acct.liveKey))
    expect(r.status).toBe(200)
    expect(r.body.error).toBeNull()
    expect(r.body.data.jsonstrn).toBe("corr-1")
    expect(r.body.data.shipments_with_errors).toBe(0)
    const s = r.body.data.shipments[0]
    expect(Object.keys(s).sort()).toEqual([
      "billing_reference",
      "destination_tz",
      "errors",
      "estimated_charge",
      "estimated_delivery",
      "guaranteed_delivery",
      "order",
      "result",
      "service_type",
      "track_no",
      "vehicle_type"
    ])
    expect(s.order).toBe(1)
    expect(s.result).toBe("success")
    expect(s.track_no).toMatch(/^[1-9]\d{7}$/)
    expect(s.service_type).toBe("2hour")
    expect(s.vehicle_type).toBe("car")
    expect(s.estimated_delivery).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
    expect(s.guaranteed_delivery >= s.estimated_delivery).toBe(true)
    expect(["CST", "CDT"]).toContain(s.destination_tz)
    expect(typeof s.estimated_charge).toBe("number")
    expect(s.errors).toEqual([])

    const stored = await t.run(Effect.flatMap(ShipmentStore, (st) => st.findByTrackNo(s.track_no)))
    expect(Option.isSome(stored)).toBe(true)
    const events = await t.run(Effect.flatMap(EventOutbox, (o) => o.listByShipment(s.track_no)))
    expect(events.map((e) => [e.type, e.sequence, e.livemode])).toEqual([["shipment.booked", 1, true]])
  })

  it("books several shipments; invalid ones carry their own errors and are counted", async () => {
    const r = await postJson(
      endpoint,
      {
        data: { shipments: [shipment(), shipment({ Phone: "12", Weight: "" }), shipment({ BillingReference: "PO-7" })] }
      },
      bearer(acct.liveKey)
    )
    expect(r.status).toBe(200)
    expect(r.body.data.shipments_with_errors).toBe(1)
    const [a, b, c] = r.body.data.shipments
    expect([a.order, b.order, c.order]).toEqual([1, 2, 3])
    expect(a.result).toBe("success")
    expect(b.result).toBe("error")
    expect(b.track_no).toBe("")
    expect(b.errors.join("\n")).toMatch(/Phone/)
    expect(b.errors.join("\n")).toMatch(/Weight/)
    expect(c.billing_reference).toBe("PO-7")
    expect(a.track_no).not.toBe(c.track_no)
  })

  it("one invalid shipment: HTTP 400 with a top-level error naming the fields", async () => {
    const r = await postJson(
      endpoint,
      { data: { shipments: [shipment({ ServiceType: "teleport", PickupZip: "99999" })] } },
      bearer(acct.liveKey)
    )
    expect(r.status).toBe(400)
    expect(r.body.data).toBeNull()
    expect(r.body.error?.exception).toBeNull()
    expect(r.body.error?.message).toMatch(/ServiceType/)
    expect(r.body.error?.message).toMatch(/PickupZip 99999 is not a known ZIP code/)
  })

  it("refuses a BillingReference with a comma: 400 alone, a per-shipment error among several", async () => {
    const message =
      "BillingReference must not contain a comma (document lookups read a comma as a separator between references)"
    const single = await postJson(
      endpoint,
      { data: { shipments: [shipment({ BillingReference: "PO-1,PO-2" })] } },
      bearer(acct.liveKey)
    )
    expect(single.status).toBe(400)
    expect(single.body).toEqual({ data: null, error: { message, exception: null } })

    const several = await postJson(
      endpoint,
      { data: { shipments: [shipment({ BillingReference: "PO-3" }), shipment({ BillingReference: "A,B" })] } },
      bearer(acct.liveKey)
    )
    expect(several.status).toBe(200)
    expect(several.body.data.shipments_with_errors).toBe(1)
    const [good, bad] = several.body.data.shipments
    expect([good.result, good.billing_reference]).toEqual(["success", "PO-3"])
    expect(bad).toMatchObject({ order: 2, result: "error", track_no: "", billing_reference: "A,B", errors: [message] })
  })

  it("reads written dates in the stop's zone: month names, YYYY/MM/DD, MM-DD-YYYY, Unix seconds as a string", async () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["November 27, 2027 10:00", "Nov 27 2027 5 pm", "2027-11-27T16:00:00.000Z"],
      ["2027/11/27", "11-27-2027 18:00", "2027-11-27T14:00:00.000Z"], // no time: 08:00 in Chicago
      ["1827309600", "1827338400000", "2027-11-27T10:00:00.000Z"]
    ]
    for (const [Pickupdate, Deliverdate, readyAt] of cases) {
      const r = await postJson(
        endpoint,
        { data: { shipments: [shipment({ Pickupdate, Deliverdate, ServiceType: "scheduled" })] } },
        bearer(acct.liveKey)
      )
      expect([Pickupdate, r.status, r.body.error]).toEqual([Pickupdate, 200, null])
      const trackNo = r.body.data.shipments[0].track_no
      const stored = Option.getOrThrow(await t.run(Effect.flatMap(ShipmentStore, (st) => st.findByTrackNo(trackNo))))
      expect(new Date(stored.readyAt).toISOString()).toBe(readyAt)
    }
    const bad = await postJson(
      endpoint,
      { data: { shipments: [shipment({ Pickupdate: "Feb 30 2027", Deliverdate: "27-11-2027" })] } },
      bearer(acct.liveKey)
    )
    expect(bad.status).toBe(400)
    expect(bad.body.error?.message).toBe(
      "Pickupdate is not a valid calendar date; Deliverdate is not a valid calendar date"
    )
  })

  it("books a multi-stop route with legs between consecutive stops", async () => {
    const route = [
      { stop_id: 30, name: "C", address: "1 Church St", zip: "60201" },
      { stop_id: 10, name: "A", address: "233 S Wacker Dr", zip: "60606" },
      { stop_id: 20, name: "B", address: "1060 W Addison St", zip: "60613" }
    ]
    const r = await postJson(
      endpoint,
      {
        data: {
          shipments: [
            shipment({
              DeliverZip: "60201",
              DeliverAddress: "1 Church St",
              DeliverCity: "Evanston",
              multistop_route: route
            })
          ]
        }
      },
      bearer(acct.liveKey)
    )
    expect(r.status).toBe(200)
    const trackNo = r.body.data.shipments[0].track_no
    const stored = Option.getOrThrow(await t.run(Effect.flatMap(ShipmentStore, (st) => st.findByTrackNo(trackNo))))
    expect(stored.stops.map((s) => s.externalId)).toEqual([10, 20, 30])
    expect(stored.legs.map((l) => [l.fromStop, l.toStop])).toEqual([
      [0, 1],
      [1, 2]
    ])
  })

  it("accepts a urlencoded form field named data", async () => {
    const form = new URLSearchParams({
      data: JSON.stringify({ data: { token: acct.liveKey, shipments: [shipment()] } })
    })
    const response = await fetch(endpoint, { method: "POST", body: form })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { data: { shipments: Array<{ result: string }> } }
    expect(body.data.shipments[0]!.result).toBe("success")
  })

  it("property: deep nesting anywhere in the body (to 100,000+ levels, JSON or form) is a fast 400, never a 500", async () => {
    // Refused by the bracket count before JSON.parse, so no deep value is ever built: memory has
    // nothing to give back, and the answer is a single scan of the text.
    const nest = (n: number, arrays: boolean) =>
      (arrays ? "[".repeat(n) : '{"a":'.repeat(n)) + '"x"' + (arrays ? "]" : "}").repeat(n)
    const one = JSON.stringify(shipment()).slice(0, -1)
    const bodyWith = (where: string, deep: string) =>
      where === "shipments"
        ? `{"data":{"shipments":${deep}}}`
        : where === "piece_details"
          ? `{"data":{"shipments":[${one},"piece_details":[${deep}]}]}}`
          : `{"data":{"shipments":[${one},"${where}":${deep}}]}}`
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 33, max: 1_000 }), fc.integer({ min: 100_000, max: 120_000 })),
        fc.boolean(),
        fc.constantFrom("shipments", "multistop_route", "piece_details", "Contact"),
        fc.boolean(),
        async (depth, arrays, where, asForm) => {
          const json = bodyWith(where, nest(depth, arrays))
          const form = new URLSearchParams({ data: json }).toString()
          const started = performance.now()
          const r = await fetch(endpoint, {
            method: "POST",
            headers: {
              "content-type": asForm ? "application/x-www-form-urlencoded" : "application/json",
              ...bearer(acct.liveKey)
            },
            body: asForm ? form : json
          })
          // 100,000 objects percent-encoded exceed the 1 MiB body limit, which is checked first.
          if ((asForm ? form : json).length > 1024 * 1024) {
            expect(r.status).toBe(413)
            return
          }
          expect(r.status).toBe(400)
          expect(await r.json()).toEqual({
            data: null,
            error: {
              message: `${asForm ? "The form field data" : "The body"} nests arrays and objects more than 32 levels deep.`,
              exception: null
            }
          })
          expect(performance.now() - started).toBeLessThan(1_000)
        }
      ),
      { numRuns: 24 }
    )
  })

  describe("credentials", () => {
    const book = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      postJson(endpoint, { data: { shipments: [shipment()], ...body } }, headers)

    it("data.token and data.key both work without a header", async () => {
      expect((await book({ token: acct.liveKey })).status).toBe(200)
      expect((await book({ key: acct.liveKey })).status).toBe(200)
    })

    it("no credential: 401 'You did not provide an access token.'", async () => {
      const r = await book({})
      expect(r.status).toBe(401)
      expect(r.body).toEqual({
        data: null,
        error: { message: "You did not provide an access token.", exception: null }
      })
    })

    it("the header wins over the body", async () => {
      expect((await book({ token: "wb_live_garbage" }, bearer(acct.liveKey))).status).toBe(200)
    })

    it("an invalid Bearer is 401 even with a valid body key, and never falls back", async () => {
      for (const header of [
        "Bearer wb_live_nope",
        "Basic Zm9vOmJhcg==",
        "Bearer",
        `Bearer  ${acct.liveKey}`,
        `Token ${acct.liveKey}`
      ]) {
        const r = await book({ token: acct.liveKey, key: acct.liveKey }, { authorization: header })
        expect(r.status, header).toBe(401)
        expect(r.body.error?.message).toBe("Access denied.")
      }
    })

    it("an invalid Bearer is 401 before the body is even read (bad JSON, wrong type, too large)", async () => {
      const headers = { authorization: "Bearer wb_live_nope" }
      expect((await postJson(endpoint, "{not json", headers)).status).toBe(401)
      const wrongType = await fetch(endpoint, {
        method: "POST",
        headers: { ...headers, "content-type": "text/plain" },
        body: "x"
      })
      expect(wrongType.status).toBe(401)
      const big = await postJson(endpoint, JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) }), headers)
      expect(big.status).toBe(401)
    })

    it("a well-formed key that was never issued is denied", async () => {
      const other = await t.newAccount("Other")
      const forged = other.liveKey.slice(0, 20) + (other.liveKey[20] === "A" ? "B" : "A") + other.liveKey.slice(21)
      expect((await book({ token: forged })).status).toBe(401)
    })

    it("disabled and rotated keys are denied; the new key and a re-enabled key work", async () => {
      const a = await t.newAccount("Rotating")
      await t.run(Accounts.setKeyStatus(a.customerNo, "live", "disabled"))
      expect((await book({}, bearer(a.liveKey))).status).toBe(401)
      await t.run(Accounts.setKeyStatus(a.customerNo, "live", "active"))
      expect((await book({}, bearer(a.liveKey))).status).toBe(200)
      const rotated = await t.run(Accounts.rotateKey(a.customerNo, "live"))
      expect((await book({}, bearer(a.liveKey))).status).toBe(401)
      const { value } = await import("effect/Redacted")
      expect((await book({}, bearer(value(rotated.key)))).status).toBe(200)
    })

    it("test-key bookings are flagged test (livemode false)", async () => {
      const r = await book({}, bearer(acct.testKey))
      expect(r.status).toBe(200)
      const trackNo = r.body.data.shipments[0].track_no
      const stored = Option.getOrThrow(await t.run(Effect.flatMap(ShipmentStore, (st) => st.findByTrackNo(trackNo))))
      expect(stored.livemode).toBe(false)
      const events = await t.run(Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo)))
      expect(events[0]!.livemode).toBe(false)
    })
  })

  describe("malformed requests answer in the envelope", () => {
    it("bad JSON: 400", async () => {
      const r = await postJson(endpoint, '{"data":', bearer(acct.liveKey))
      expect(r.status).toBe(400)
      expect(r.body.error?.message).toBe("The body is not valid JSON.")
    })

    it("wrong content type: 415", async () => {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "text/plain", ...bearer(acct.liveKey) },
        body: "hi"
      })
      expect(response.status).toBe(415)
      expect(((await response.json()) as { data: unknown }).data).toBeNull()
    })

    it("over 1 MiB: 413", async () => {
      const big = JSON.stringify({ data: { shipments: [shipment({ PickupSpecinst: "x".repeat(1024 * 1024) })] } })
      const r = await postJson(endpoint, big, bearer(acct.liveKey))
      expect(r.status).toBe(413)
      expect(r.body.error?.message).toMatch(/exceeds the limit/)
    })

    it("more than 100 shipments: 400", async () => {
      const r = await postJson(
        endpoint,
        { data: { shipments: Array.from({ length: 101 }, () => shipment()) } },
        bearer(acct.liveKey)
      )
      expect(r.status).toBe(400)
      expect(r.body.error?.message).toMatch(/at most 100/)
    })

    it("wrong method: 405 with Allow", async () => {
      const response = await fetch(endpoint)
      expect(response.status).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/GET/)
    })

    it("unknown path: 404", async () => {
      const response = await fetch(`${t.url}/api/v1/nothing/here`)
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
    })

    it("a body without data.shipments: 400", async () => {
      for (const body of [
        {},
        { data: {} },
        { data: { shipments: "x" } },
        { data: { shipments: [] } },
        [],
        "str",
        null,
        42
      ]) {
        const r = await postJson(endpoint, body === null ? "null" : body, bearer(acct.liveKey))
        expect(r.status, JSON.stringify(body)).toBe(400)
        expect(r.body.data).toBeNull()
      }
    })
  })

  it("property: arbitrary JSON and strings always get a well-formed envelope with a 2xx/4xx status", async () => {
    const shipmentish = fc.dictionary(
      fc.constantFrom(...Object.keys(shipment()), "multistop_route", "piece_details", "extra"),
      fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 })
      )
    )
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.array(shipmentish, { minLength: 1, maxLength: 3 }).map((shipments) => JSON.stringify({ data: { shipments } })),
      shipmentish.map((s) => JSON.stringify({ data: { shipments: [{ ...shipment(), ...s }] } }))
    )
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (raw, withKey) => {
        const r = await fetch(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", ...(withKey ? bearer(acct.testKey) : {}) },
          body: raw
        })
        expect(r.status === 200 || (r.status >= 400 && r.status < 500), `status ${r.status} for ${raw}`).toBe(true)
        const envelope = (await r.json()) as Record<string, unknown>
        expect(Object.keys(envelope).sort()).toEqual(["data", "error"])
        if (r.status === 200) expect(envelope["error"]).toBeNull()
        else {
          expect(envelope["data"]).toBeNull()
          expect(typeof (envelope["error"] as { message: unknown }).message).toBe("string")
        }
      }),
      { numRuns: 150 }
    )
  })
})
