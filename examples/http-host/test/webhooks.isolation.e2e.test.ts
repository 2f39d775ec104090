/**
 * One slow endpoint must never hold up another (issue 16): a receiver that accepts the
 * connection and never answers sits next to a fast one, and the fast one's deliveries still
 * arrive at once. The margins make the test unable to flake and still fail on the old
 * behaviour: the hanging endpoint's attempts last 45 s (the transport's total budget), the fast
 * endpoint's deliveries must arrive within 20 s, and a dispatcher that waited for the hanging
 * attempts (a round barrier, or all slots taken by one endpoint) would need the full 45 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Operations, Webhooks } from "@waybill/core"
import { allowList } from "../src/webhooks.js"
import { bookOne, startHost, type TestHost, waitFor } from "./harness.js"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"

const HANG_MS = 45_000
const PROMPT_MS = 20_000
const LANE = 4

describe("a hanging webhook endpoint next to a fast one", () => {
  let t: TestHost
  let scope: Scope.CloseableScope
  let hanging: Effect.Effect.Success<ReturnType<typeof receiver>>
  let fast: Effect.Effect.Success<ReturnType<typeof receiver>>

  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const pems = await Effect.runPromise(certificate)
    hanging = await Effect.runPromise(Scope.extend(receiver(pems), scope))
    fast = await Effect.runPromise(Scope.extend(receiver(pems), scope))
    hanging.setHandler(() => {
      // accepts the request and never answers
    })
    t = await startHost({
      webhooks: {
        allowPrivate: ["127.0.0.1"],
        ca: [pems.cert],
        idleMs: 20,
        totalTimeoutMs: HANG_MS,
        // The hanging endpoint's lane is as wide as all the slots: the fast endpoint gets
        // through only because a send left waiting gives its slot back.
        concurrency: LANE,
        perEndpoint: LANE
      }
    })
  })

  afterAll(async () => {
    await t.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("delivers the fast endpoint's events while the hanging one holds only its own lane", async () => {
    const account = await t.newAccount()
    const policy = { allowPrivate: allowList(["127.0.0.1"]) }
    for (const url of [hanging.url, fast.url])
      await t.run(Webhooks.addEndpoint({ customerNo: account.customerNo, url, eventTypes: ["*"] }, policy))

    // More shipments than the hanging endpoint's lane can hold.
    const trackNos: Array<string> = []
    for (let i = 0; i < 3 * LANE; i++) trackNos.push(await bookOne(t.url, account.liveKey))
    const fastOf = (type: string) => () => {
      const got = fast.received.filter((x) => x.body.includes(`"type":"${type}"`))
      return got.length >= trackNos.length ? got : undefined
    }
    await waitFor("the fast endpoint's bookings", fastOf("shipment.booked"), PROMPT_MS)
    // The hanging endpoint now holds requests it will not answer for 45 s.
    await waitFor("the hanging endpoint's first request", () => hanging.received[0], PROMPT_MS)

    // New events while those hang: they go out at once, not after the hanging attempts end.
    const started = Date.now()
    for (const trackNo of trackNos) await t.run(Operations.perform(trackNo, { action: "assign", driverId: "d-1" }))
    const assigned = await waitFor("the fast endpoint's assignments", fastOf("shipment.assigned"), PROMPT_MS)
    expect(Date.now() - started).toBeLessThan(PROMPT_MS)
    expect(new Set(assigned.map((x) => JSON.parse(x.body).data.track_no))).toEqual(new Set(trackNos))

    // The hanging endpoint got at most its lane, and each of its shipments at most one request
    // (the next event of a shipment waits for the earlier one).
    expect(hanging.received.length).toBeGreaterThanOrEqual(1)
    expect(hanging.received.length).toBeLessThanOrEqual(LANE)
    const hangingShipments = hanging.received.map((x) => JSON.parse(x.body).data.track_no)
    expect(new Set(hangingShipments).size).toBe(hangingShipments.length)
    expect(hanging.received.every((x) => x.body.includes('"type":"shipment.booked"'))).toBe(true)
  })
})
