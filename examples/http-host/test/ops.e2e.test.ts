import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Operations } from "@waybill/core"
import {
  bookOne,
  detailedPieces,
  detailedShipment,
  detailedStops,
  ops,
  OPERATOR_TOKEN,
  postJson,
  shipment,
  startHost,
  type TestAccount,
  type TestHost
} from "./harness.js"

let t: TestHost
let a: TestAccount

beforeAll(async () => {
  t = await startHost()
  a = await t.newAccount()
})
afterAll(() => t.close())

describe("/ops/v1 operator API", () => {
  it("rejects a missing token, a wrong token and customer API keys", async () => {
    const id = await bookOne(t.url, a.liveKey)
    const bare = await fetch(`${t.url}/ops/v1/shipments/${id}`)
    expect(bare.status).toBe(401)
    for (const token of ["wrong", OPERATOR_TOKEN + "x", OPERATOR_TOKEN.slice(0, -1), a.liveKey, a.testKey]) {
      const r = await ops(t.url, `shipments/${id}`, undefined, token)
      expect(r.status, token).toBe(401)
      expect(r.body.data).toBeNull()
      const w = await ops(t.url, `shipments/${id}/assign`, { driver_id: "d" }, token)
      expect(w.status).toBe(401)
    }
    expect((await ops(t.url, `shipments/${id}`)).body.data.state).toBe("booked")
  })

  it("shows every field the booking stored: stop contacts and notes, piece details, flags, instructions", async () => {
    const id = await bookOne(t.url, a.liveKey, detailedShipment())
    const v = (await ops(t.url, `shipments/${id}`)).body.data
    expect(v.stops.map((s: Record<string, unknown>) => [s["contact_name"], s["phone_no"], s["stop_note"]])).toEqual(
      detailedStops.map((s) => [s.contact_name, s.phone_no, s.stop_note])
    )
    expect(v.piece_details).toEqual(detailedPieces)
    expect(v).toMatchObject({
      contact: "Ada Lopez",
      phone: "3125550100",
      email: "ada@acme.example",
      billing_reference: "PO-88",
      signature_required: true,
      liftgate_required: true,
      pickup_instructions: "Dock 4, ring twice",
      deliver_instructions: "Front desk"
    })
    expect(v.requested_delivery.local).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
  })

  it("runs a multi-stop shipment through its day, with one event sequence", async () => {
    const route = [
      { stop_id: 1, name: "A", address: "233 S Wacker Dr", zip: "60606" },
      { stop_id: 2, name: "B", address: "1060 W Addison St", zip: "60613" },
      { stop_id: 3, name: "C", address: "1 Church St", zip: "60201" }
    ]
    const id = await bookOne(t.url, a.liveKey, {
      DeliverZip: "60201",
      DeliverAddress: "1 Church St",
      multistop_route: route
    })
    const steps: Array<[string, unknown]> = [
      ["assign", { driver_id: "drv-1" }],
      ["arrive", {}],
      ["pickup", {}],
      ["arrive", {}],
      ["fail-attempt", { reason: "closed" }],
      ["arrive", { stop: 1 }],
      ["complete-stop", {}],
      ["arrive", {}]
    ]
    for (const [action, body] of steps) {
      const r = await ops(t.url, `shipments/${id}/${action}`, body)
      expect(r.status, `${action}: ${JSON.stringify(r.body.error)}`).toBe(200)
    }
    const early = await ops(t.url, `shipments/${id}/unassign`, {})
    expect(early.status).toBe(409)
    expect(early.body.error?.message).toMatch(/unassign/i)
    const done = await ops(t.url, `shipments/${id}/deliver`, {})
    expect(done.status).toBe(200)
    expect(done.body.data.state).toBe("delivered")
    expect(done.body.data.stops.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "completed",
      "completed"
    ])
    const seqs = done.body.data.events.map((e: { sequence: number }) => e.sequence)
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1))
    expect(done.body.data.events.at(-1).type).toBe("shipment.delivered")
    const after = await ops(t.url, `shipments/${id}/fail`, { reason: "x" })
    expect(after.status).toBe(409)
  })

  it("answers unknown shipments, unknown actions and bad bodies clearly", async () => {
    expect((await ops(t.url, "shipments/99999999")).status).toBe(404)
    expect((await ops(t.url, "shipments/%E0%A4%A")).status).toBe(400)
    const id = await bookOne(t.url, a.liveKey)
    expect((await ops(t.url, `shipments/${id}/teleport`, {})).status).toBe(404)
    expect((await ops(t.url, `shipments/${id}/assign`, {})).status).toBe(400)
    expect((await ops(t.url, `shipments/${id}/assign`, { driver_id: 5 })).status).toBe(400)
    expect((await ops(t.url, `shipments/${id}/arrive`, { stop: 9 })).status).toBe(409)
  })

  it("the same operations are typed Effect programs in the library", async () => {
    const id = await bookOne(t.url, a.liveKey)
    await t.run(Operations.assign(id, "drv-lib"))
    await t.run(Operations.unassign(id))
    await t.run(Operations.assign(id, "drv-lib-2"))
    await t.run(Operations.arriveAtStop(id, 0))
    await t.run(Operations.pickUp(id))
    await t.run(Operations.arriveAtStop(id, 1))
    await t.run(Operations.failAttempt(id, 1, "no one home"))
    await t.run(Operations.returnShipment(id))
    const done = await t.run(Operations.returnShipment(id))
    expect(done.shipment.state).toBe("returned")
    const shown = await t.run(Operations.show(id))
    expect(shown.events.map((e) => e.type)).toEqual([
      "shipment.booked",
      "shipment.assigned",
      "shipment.unassigned",
      "shipment.assigned",
      "shipment.stop_arrived",
      "shipment.picked_up",
      "shipment.in_transit",
      "shipment.stop_arrived",
      "shipment.attempt_failed",
      "shipment.returning",
      "shipment.returned"
    ])
    await expect(t.run(Operations.deliver(id))).rejects.toThrow(/returned/)
    const other = await bookOne(t.url, a.liveKey)
    const failed = await t.run(Operations.fail(other, "vehicle breakdown"))
    expect(failed.shipment.state).toBe("failed")
    const third = await bookOne(t.url, a.liveKey)
    await t.run(Operations.assign(third, "d"))
    await t.run(Operations.pickUp(third))
    await t.run(Operations.completeStop(third, 1))
    expect((await t.run(Operations.show(third))).shipment.state).toBe("delivered")
  })

  it("rotates, disables and enables API keys (POST /ops/v1/accounts/{no}/keys/{mode}/{action}/)", async () => {
    const b = await t.newAccount()
    const book = (key: string) =>
      postJson(`${t.url}/api/v1/order/json/`, { data: { shipments: [shipment()] } }, { authorization: `Bearer ${key}` })
    const rotated = await ops(t.url, `accounts/${b.customerNo}/keys/live/rotate/`, {})
    expect([rotated.status, rotated.headers.get("cache-control")]).toEqual([200, "no-store"])
    expect(rotated.body.data).toMatchObject({ customer_no: b.customerNo, mode: "live", generation: 2 })
    const fresh = rotated.body.data.key as string
    expect(fresh).not.toBe(b.liveKey)
    expect((await book(b.liveKey)).status).toBe(401)
    expect((await book(fresh)).status).toBe(200)

    const disabled = await ops(t.url, `accounts/${b.customerNo}/keys/test/disable/`, {})
    expect([disabled.status, disabled.body.data.status]).toEqual([200, "disabled"])
    expect(disabled.headers.get("cache-control")).not.toBe("no-store")
    expect(JSON.stringify(disabled.body)).not.toContain(b.testKey)
    expect((await book(b.testKey)).status).toBe(401)
    const enabled = await ops(t.url, `accounts/${b.customerNo}/keys/test/enable/`, {})
    expect([enabled.status, enabled.body.data.status]).toEqual([200, "active"])
    expect((await book(b.testKey)).status).toBe(200)

    expect((await ops(t.url, `accounts/${b.customerNo}/keys/prod/rotate/`, {})).status).toBe(404)
    expect((await ops(t.url, `accounts/${b.customerNo}/keys/live/revoke/`, {})).status).toBe(404)
    expect((await ops(t.url, "accounts/9999999/keys/live/rotate/", {})).status).toBe(404)
    expect((await ops(t.url, `accounts/${b.customerNo}/keys/live/rotate/`)).status).toBe(405)
  })
})
