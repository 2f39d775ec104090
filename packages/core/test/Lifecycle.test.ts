import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import type { EventType } from "../src/shipments/Event.js"
import * as L from "../src/shipments/Lifecycle.js"
import type { ShipmentState, StopStatus } from "../src/shipments/Shipment.js"

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const letters: Record<string, StopStatus> = {
  p: "pending",
  a: "arrived",
  c: "completed",
  f: "attempt_failed",
  s: "skipped"
}

const stopsOf = (statuses: ReadonlyArray<StopStatus>): ReadonlyArray<L.SnapshotStop> =>
  statuses.map((status, seq) => ({
    seq,
    role: seq === 0 ? "pickup" : seq === statuses.length - 1 ? "delivery" : "intermediate",
    status
  }))

/** `snap("in_transit", "cap")`: stop statuses by letter (p a c f s), a default driver when one is due. */
const snap = (state: ShipmentState, route: string, driverId?: string | null): L.Snapshot => ({
  state,
  driverId: driverId !== undefined ? driverId : state === "booked" || state === "canceled" ? null : "drv_1",
  stops: stopsOf([...route].map((c) => letters[c]!))
})

const accept = (snapshot: L.Snapshot, command: L.Command): L.Transition => {
  const result = L.decide(snapshot, command)
  if (Either.isLeft(result)) throw new Error(`expected acceptance, got ${result.left.code}: ${result.left.reason}`)
  return result.right
}

const reject = (snapshot: L.Snapshot, command: L.Command): L.Rejection => {
  const result = L.decide(snapshot, command)
  if (Either.isRight(result)) throw new Error(`expected rejection, got ${result.right.state}`)
  return result.left
}

const run = (snapshot: L.Snapshot, command: L.Command): L.Snapshot => L.apply(snapshot, accept(snapshot, command))

const types = (t: L.Transition): ReadonlyArray<EventType> => t.events.map((e) => e.type)

const statuses = (s: L.Snapshot): string =>
  s.stops.map((x) => Object.keys(letters).find((k) => letters[k] === x.status)).join("")

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    Object.values(value).forEach(deepFreeze)
    Object.freeze(value)
  }
  return value
}

const nonTerminal: ReadonlyArray<ShipmentState> = [
  "booked",
  "assigned",
  "picked_up",
  "in_transit",
  "attempt_failed",
  "returning"
]
const terminal: ReadonlyArray<ShipmentState> = ["delivered", "returned", "canceled", "failed"]

/** A consistent example snapshot of every state (4 stops). */
const sample: Record<ShipmentState, L.Snapshot> = {
  booked: snap("booked", "pppp"),
  assigned: snap("assigned", "pppp"),
  picked_up: snap("picked_up", "cppp"),
  in_transit: snap("in_transit", "capp"),
  attempt_failed: snap("attempt_failed", "cfpp"),
  returning: snap("returning", "cfpp"),
  delivered: snap("delivered", "ccsc"),
  returned: snap("returned", "cfpp"),
  canceled: snap("canceled", "pppp"),
  failed: snap("failed", "capp")
}

/** Every concrete command worth trying on a snapshot: each tag, each stop, bogus stops too. */
const everyCommand = (s: L.Snapshot): ReadonlyArray<L.Command> => [
  L.Assign("drv_1"),
  L.Assign("drv_2"),
  L.Assign("   "),
  L.Unassign(),
  L.PickUp(),
  L.Return(),
  L.Deliver(),
  L.Fail("truck broke down"),
  L.Fail(""),
  L.Cancel(),
  ...[-1, 0.5, ...s.stops.map((x) => x.seq), s.stops.length].flatMap((k) => [
    L.ArriveAtStop(k),
    L.CompleteStop(k),
    L.FailAttempt(k, "nobody home"),
    L.FailAttempt(k, " ")
  ])
]

// ---------------------------------------------------------------------------------------------
// An invariant checker independent of `invariantViolations`
// ---------------------------------------------------------------------------------------------

const active: ReadonlyArray<ShipmentState> = ["assigned", "picked_up", "in_transit", "attempt_failed", "returning"]
const pastPickup: ReadonlyArray<ShipmentState> = [
  "picked_up",
  "in_transit",
  "attempt_failed",
  "returning",
  "returned",
  "delivered"
]
const done = (s: StopStatus): boolean => s === "completed" || s === "skipped"

const invariant = (s: L.Snapshot): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const st = s.stops.map((x) => x.status)
  const last = st[st.length - 1]!
  if (active.includes(s.state) && s.driverId === null) problems.push("active state without a driver")
  if (s.state === "booked" && s.driverId !== null) problems.push("booked with a driver")
  if ((s.state === "booked" || s.state === "canceled") && st.some((x) => x !== "pending")) {
    problems.push(`${s.state} with a stop that is not pending`)
  }
  if (s.state === "delivered" && !(st.every(done) && last === "completed")) {
    problems.push("delivered before every stop is done")
  }
  if (last === "completed" && s.state !== "delivered") problems.push("last stop completed but not delivered")
  if (pastPickup.includes(s.state) && st[0] !== "completed") problems.push("past pickup without the pickup")
  if ((s.state === "booked" || s.state === "assigned") && st[0] === "completed") problems.push("picked up too early")
  st.forEach((x, j) => {
    if (x !== "pending" && x !== "skipped" && !st.slice(0, j).every(done)) {
      problems.push(`stop ${j} is ${x} before earlier stops are done`)
    }
  })
  if (st[0] === "skipped" || last === "skipped") problems.push("pickup or last stop skipped")
  if (st.filter((x) => x === "arrived" || x === "attempt_failed").length > 1) problems.push("two stops in progress")
  const failedStops = st.filter((x) => x === "attempt_failed").length
  if (["attempt_failed", "returning", "returned"].includes(s.state) && failedStops !== 1) {
    problems.push(`${s.state} needs exactly one failed stop`)
  }
  if (failedStops > 0 && !["attempt_failed", "returning", "returned", "failed"].includes(s.state)) {
    problems.push(`a failed stop in state ${s.state}`)
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const drivers = fc.constantFrom("drv_1", "drv_2", "drv_3")
const oneOf = (...s: ReadonlyArray<StopStatus>): fc.Arbitrary<StopStatus> => fc.constantFrom(...s)
const fill = (n: number, s: StopStatus): Array<StopStatus> => Array.from({ length: n }, () => s)
const arrayOf = (arb: fc.Arbitrary<StopStatus>, n: number) => fc.array(arb, { minLength: n, maxLength: n })

/** Pickup done, stops before the frontier done, the frontier `at`, later ones pending or skipped. */
const underway = (n: number, at: fc.Arbitrary<StopStatus>): fc.Arbitrary<ReadonlyArray<StopStatus>> =>
  fc
    .integer({ min: 1, max: n - 1 })
    .chain((f) =>
      fc
        .tuple(
          arrayOf(oneOf("completed", "skipped"), f - 1),
          at,
          arrayOf(oneOf("pending", "skipped"), Math.max(0, n - 2 - f))
        )
        .map(([before, frontier, after]) => [
          "completed",
          ...before,
          frontier,
          ...after,
          ...(f < n - 1 ? ["pending" as const] : [])
        ])
    )

const stopStatuses = (state: ShipmentState, n: number): fc.Arbitrary<ReadonlyArray<StopStatus>> => {
  switch (state) {
    case "booked":
    case "canceled":
      return fc.constant(fill(n, "pending"))
    case "assigned":
      return oneOf("pending", "arrived").map((p) => [p, ...fill(n - 1, "pending")])
    case "picked_up":
      return arrayOf(oneOf("pending", "skipped"), n - 2).map((mid) => ["completed", ...mid, "pending"])
    case "in_transit":
      return underway(n, oneOf("pending", "arrived"))
    case "attempt_failed":
    case "returning":
    case "returned":
      return underway(n, fc.constant("attempt_failed"))
    case "delivered":
      return arrayOf(oneOf("completed", "skipped"), n - 2).map((mid) => ["completed", ...mid, "completed"])
    case "failed":
      return fc.constantFrom(...nonTerminal).chain((s) => stopStatuses(s, n))
  }
}

const driverFor = (state: ShipmentState): fc.Arbitrary<string | null> =>
  state === "booked" || state === "canceled"
    ? fc.constant(null)
    : state === "failed"
      ? fc.option(drivers, { nil: null })
      : drivers

/** A consistent snapshot of any state with 2..6 stops. */
const snapshotArb = (states: ReadonlyArray<ShipmentState> = L.shipmentStates): fc.Arbitrary<L.Snapshot> =>
  fc
    .tuple(fc.integer({ min: 2, max: 6 }), fc.constantFrom(...states))
    .chain(([n, state]) =>
      fc
        .tuple(stopStatuses(state, n), driverFor(state))
        .map(([st, driverId]): L.Snapshot => ({ state, driverId, stops: stopsOf(st) }))
    )

const reasons = fc.constantFrom("nobody home", "gate locked", " ")
const commandArb = (n: number): fc.Arbitrary<L.Command> => {
  const stop = fc.integer({ min: -1, max: n })
  return fc.oneof(
    drivers.map(L.Assign),
    fc.constant(L.Unassign()),
    stop.map(L.ArriveAtStop),
    fc.constant(L.PickUp()),
    stop.map(L.CompleteStop),
    fc.tuple(stop, reasons).map(([k, r]) => L.FailAttempt(k, r)),
    fc.constant(L.Return()),
    fc.constant(L.Deliver()),
    reasons.map(L.Fail),
    fc.constant(L.Cancel())
  )
}

/**
 * A start snapshot and a walk of 0..40 moves. A steered move picks one of the commands `decide`
 * accepts (so walks get deep: pickups, re-attempts, deliveries); an unsteered one is any command,
 * mostly rejected.
 */
const walkArb = snapshotArb().chain((start) =>
  fc.tuple(
    fc.constant(start),
    fc.array(fc.record({ steer: fc.boolean(), pick: fc.nat(), command: commandArb(start.stops.length) }), {
      maxLength: 40
    })
  )
)

const stateEvent: Record<ShipmentState, EventType> = {
  booked: "shipment.unassigned",
  assigned: "shipment.assigned",
  picked_up: "shipment.picked_up",
  in_transit: "shipment.in_transit",
  attempt_failed: "shipment.attempt_failed",
  returning: "shipment.returning",
  returned: "shipment.returned",
  delivered: "shipment.delivered",
  canceled: "shipment.canceled",
  failed: "shipment.failed"
}

// ---------------------------------------------------------------------------------------------
// Rules, by command
// ---------------------------------------------------------------------------------------------

describe("Lifecycle", () => {
  describe("Assign", () => {
    it("gives a booked shipment its driver", () => {
      const t = accept(sample.booked, L.Assign("drv_9"))
      expect(t).toStrictEqual({
        state: "assigned",
        driverId: "drv_9",
        stops: [],
        events: [{ type: "shipment.assigned", data: { driver_id: "drv_9", previous_driver_id: null } }]
      })
    })

    it("changes the driver while assigned and emits shipment.assigned again", () => {
      const t = accept(snap("assigned", "ppp", "drv_1"), L.Assign("drv_2"))
      expect(t.state).toBe("assigned")
      expect(t.driverId).toBe("drv_2")
      expect(t.events).toStrictEqual([
        { type: "shipment.assigned", data: { driver_id: "drv_2", previous_driver_id: "drv_1" } }
      ])
    })

    it("resets the pickup arrival of the previous driver", () => {
      const t = accept(snap("assigned", "app", "drv_1"), L.Assign("drv_2"))
      expect(t.stops).toStrictEqual([{ seq: 0, status: "pending" }])
    })

    it("refuses the driver already assigned, and a blank driver id", () => {
      expect(reject(snap("assigned", "pp", "drv_1"), L.Assign("drv_1"))).toMatchObject({
        code: "illegal",
        reason: "driver drv_1 is already assigned"
      })
      expect(reject(sample.booked, L.Assign("  ")).code).toBe("illegal")
    })

    it("cannot change the driver after pickup", () => {
      for (const state of ["picked_up", "in_transit", "attempt_failed", "returning"] as const) {
        expect(reject(sample[state], L.Assign("drv_2"))).toMatchObject({
          code: "illegal",
          reason: "the driver can be changed only before pickup"
        })
      }
    })
  })

  describe("Unassign", () => {
    it("sends an assigned shipment back to booked without driver", () => {
      const t = accept(snap("assigned", "app", "drv_1"), L.Unassign())
      expect(t).toStrictEqual({
        state: "booked",
        driverId: null,
        stops: [{ seq: 0, status: "pending" }],
        events: [{ type: "shipment.unassigned", data: { driver_id: "drv_1" } }]
      })
    })

    it("is refused after pickup and when there is no driver", () => {
      expect(reject(sample.picked_up, L.Unassign())).toMatchObject({
        code: "illegal",
        reason: "a driver can be unassigned only before pickup"
      })
      expect(reject(sample.in_transit, L.Unassign()).reason).toBe("a driver can be unassigned only before pickup")
      expect(reject(sample.booked, L.Unassign()).reason).toBe("a booked shipment has no driver to unassign")
    })
  })

  describe("ArriveAtStop", () => {
    it("at the pickup before pickup: stop 0 arrived, state stays assigned", () => {
      const t = accept(sample.assigned, L.ArriveAtStop(0))
      expect(t).toStrictEqual({
        state: "assigned",
        driverId: "drv_1",
        stops: [{ seq: 0, status: "arrived" }],
        events: [{ type: "shipment.stop_arrived", data: { stop: 0, role: "pickup" } }]
      })
      expect(reject(snap("assigned", "ap"), L.ArriveAtStop(0)).reason).toBe("the driver has already arrived at stop 0")
    })

    it("at a later stop before pickup is out of order", () => {
      expect(reject(sample.assigned, L.ArriveAtStop(2)).code).toBe("out-of-order")
    })

    it("after pickup enters in_transit (in_transit first, then stop_arrived)", () => {
      const t = accept(sample.picked_up, L.ArriveAtStop(1))
      expect(t.state).toBe("in_transit")
      expect(t.stops).toStrictEqual([{ seq: 1, status: "arrived" }])
      expect(t.events).toStrictEqual([
        { type: "shipment.in_transit", data: { driver_id: "drv_1" } },
        { type: "shipment.stop_arrived", data: { stop: 1, role: "intermediate" } }
      ])
    })

    it("while in transit emits only stop_arrived", () => {
      const t = accept(snap("in_transit", "ccpp"), L.ArriveAtStop(2))
      expect(types(t)).toStrictEqual(["shipment.stop_arrived"])
      expect(t.state).toBe("in_transit")
    })

    it("follows route order; skipped stops are passed", () => {
      expect(reject(sample.picked_up, L.ArriveAtStop(2))).toMatchObject({
        code: "out-of-order",
        reason: "stop 1 must be completed or skipped before stop 2"
      })
      expect(accept(snap("picked_up", "cspp"), L.ArriveAtStop(2)).stops).toStrictEqual([{ seq: 2, status: "arrived" }])
      expect(reject(snap("in_transit", "ccap"), L.ArriveAtStop(1)).reason).toBe("stop 1 is already completed")
      expect(reject(snap("in_transit", "ccap"), L.ArriveAtStop(2)).reason).toBe(
        "the driver has already arrived at stop 2"
      )
    })

    it("names an unknown stop", () => {
      for (const k of [4, 99, -1, 1.5]) {
        expect(reject(sample.in_transit, L.ArriveAtStop(k))).toMatchObject({
          code: "unknown-stop",
          reason: `stop ${k} does not exist`
        })
      }
    })

    it("needs a driver first", () => {
      expect(reject(sample.booked, L.ArriveAtStop(0)).reason).toBe("a driver must be assigned first")
    })
  })

  describe("PickUp", () => {
    it("completes stop 0 with or without an arrival scan", () => {
      for (const route of ["ppp", "app"]) {
        expect(accept(snap("assigned", route), L.PickUp())).toStrictEqual({
          state: "picked_up",
          driverId: "drv_1",
          stops: [{ seq: 0, status: "completed" }],
          events: [{ type: "shipment.picked_up", data: { stop: 0, driver_id: "drv_1" } }]
        })
      }
    })

    it("CompleteStop(0) before pickup is PickUp", () => {
      expect(accept(sample.assigned, L.CompleteStop(0))).toStrictEqual(accept(sample.assigned, L.PickUp()))
    })

    it("needs a driver, and happens once", () => {
      expect(reject(sample.booked, L.PickUp()).reason).toBe("a driver must be assigned before pickup")
      expect(reject(sample.picked_up, L.PickUp()).reason).toBe("the goods are already picked up")
      expect(reject(sample.in_transit, L.CompleteStop(0)).reason).toBe("stop 0 is already completed")
    })
  })

  describe("CompleteStop", () => {
    it("completes an intermediate stop and stays in transit", () => {
      const t = accept(sample.in_transit, L.CompleteStop(1))
      expect(t).toStrictEqual({
        state: "in_transit",
        driverId: "drv_1",
        stops: [{ seq: 1, status: "completed" }],
        events: [{ type: "shipment.stop_completed", data: { stop: 1, role: "intermediate" } }]
      })
    })

    it("from picked_up enters in_transit", () => {
      const t = accept(sample.picked_up, L.CompleteStop(1))
      expect(t.state).toBe("in_transit")
      expect(types(t)).toStrictEqual(["shipment.in_transit", "shipment.stop_completed"])
    })

    it("must follow route order", () => {
      expect(reject(snap("in_transit", "capp"), L.CompleteStop(2))).toMatchObject({
        code: "out-of-order",
        reason: "stop 1 must be completed or skipped before stop 2"
      })
      expect(reject(sample.assigned, L.CompleteStop(2)).code).toBe("out-of-order")
    })

    it("on the last stop is Deliver", () => {
      const s = snap("in_transit", "ccsa")
      expect(accept(s, L.CompleteStop(3))).toStrictEqual(accept(s, L.Deliver()))
      expect(accept(s, L.CompleteStop(3)).state).toBe("delivered")
      expect(reject(snap("in_transit", "capp"), L.CompleteStop(3)).code).toBe("out-of-order")
    })

    it("needs a new arrival after a failed attempt", () => {
      expect(reject(sample.attempt_failed, L.CompleteStop(1)).code).toBe("illegal")
    })
  })

  describe("Deliver", () => {
    it("delivers a two-stop shipment straight from picked_up", () => {
      expect(accept(snap("picked_up", "cp"), L.Deliver())).toStrictEqual({
        state: "delivered",
        driverId: "drv_1",
        stops: [{ seq: 1, status: "completed" }],
        events: [{ type: "shipment.delivered", data: { stop: 1, driver_id: "drv_1" } }]
      })
    })

    it("completes a multi-stop shipment only when every earlier stop is completed or skipped", () => {
      expect(accept(snap("in_transit", "ccsa"), L.Deliver()).stops).toStrictEqual([{ seq: 3, status: "completed" }])
      expect(reject(snap("in_transit", "ccpp"), L.Deliver())).toMatchObject({
        code: "out-of-order",
        reason: "stop 2 must be completed or skipped before the last stop"
      })
      expect(reject(snap("picked_up", "cppp"), L.Deliver()).code).toBe("out-of-order")
    })

    it("needs the goods picked up", () => {
      expect(reject(sample.assigned, L.Deliver()).reason).toBe("the goods must be picked up before delivery")
    })
  })

  describe("FailAttempt", () => {
    it("marks the stop and the shipment attempt_failed, with the reason", () => {
      const t = accept(snap("in_transit", "cap"), L.FailAttempt(1, "nobody home"))
      expect(t).toStrictEqual({
        state: "attempt_failed",
        driverId: "drv_1",
        stops: [{ seq: 1, status: "attempt_failed" }],
        events: [{ type: "shipment.attempt_failed", data: { stop: 1, role: "intermediate", reason: "nobody home" } }]
      })
      expect(accept(snap("in_transit", "cca"), L.FailAttempt(2, "gate locked")).stops).toStrictEqual([
        { seq: 2, status: "attempt_failed" }
      ])
    })

    it("is refused at the pickup, out of order, and without a reason", () => {
      expect(reject(sample.assigned, L.FailAttempt(0, "not ready")).code).toBe("illegal")
      expect(reject(sample.in_transit, L.FailAttempt(0, "x")).reason).toBe("stop 0 is already completed")
      expect(reject(sample.in_transit, L.FailAttempt(2, "x")).code).toBe("out-of-order")
      expect(reject(sample.in_transit, L.FailAttempt(1, "  ")).code).toBe("illegal")
      expect(reject(sample.attempt_failed, L.FailAttempt(1, "again")).code).toBe("illegal")
    })
  })

  describe("after a failed attempt", () => {
    it("a re-attempt arrives at the failed stop and goes back in transit", () => {
      const t = accept(sample.attempt_failed, L.ArriveAtStop(1))
      expect(t.state).toBe("in_transit")
      expect(t.stops).toStrictEqual([{ seq: 1, status: "arrived" }])
      expect(types(t)).toStrictEqual(["shipment.in_transit", "shipment.stop_arrived"])
      expect(reject(sample.attempt_failed, L.ArriveAtStop(2)).code).toBe("out-of-order")
    })

    it("Return starts the return, Return again ends it (terminal)", () => {
      const t1 = accept(sample.attempt_failed, L.Return())
      expect(t1).toStrictEqual({
        state: "returning",
        driverId: "drv_1",
        stops: [],
        events: [{ type: "shipment.returning", data: { stop: 1 } }]
      })
      const returning = L.apply(sample.attempt_failed, t1)
      const t2 = accept(returning, L.Return())
      expect(t2.state).toBe("returned")
      expect(types(t2)).toStrictEqual(["shipment.returned"])
      expect(L.isTerminal(t2.state)).toBe(true)
    })

    it("Return is refused without a failed attempt, and a returning shipment only returns or fails", () => {
      expect(reject(sample.in_transit, L.Return()).reason).toBe(
        "a shipment can be returned only after a failed delivery attempt"
      )
      expect(reject(sample.returning, L.ArriveAtStop(1)).reason).toBe(
        "a returning shipment can only be returned or failed"
      )
      expect(L.allowedCommands(sample.returning)).toStrictEqual(["Return", "Fail"])
    })
  })

  describe("Fail", () => {
    it("ends any non-terminal shipment, keeping the reason and the previous state", () => {
      for (const state of nonTerminal) {
        const t = accept(sample[state], L.Fail("truck broke down"))
        expect(t.state).toBe("failed")
        expect(t.stops).toStrictEqual([])
        expect(t.driverId).toBe(sample[state].driverId)
        expect(t.events).toStrictEqual([
          { type: "shipment.failed", data: { reason: "truck broke down", previous_state: state } }
        ])
      }
    })

    it("needs a reason", () => {
      expect(reject(sample.in_transit, L.Fail(" ")).code).toBe("illegal")
    })
  })

  describe("Cancel", () => {
    it("cancels a booked shipment", () => {
      expect(accept(sample.booked, L.Cancel())).toStrictEqual({
        state: "canceled",
        driverId: null,
        stops: [],
        events: [{ type: "shipment.canceled", data: {} }]
      })
    })

    it("tells already-canceled apart from not-cancelable", () => {
      expect(reject(sample.canceled, L.Cancel()).code).toBe("already-canceled")
      for (const state of L.shipmentStates.filter((s) => s !== "booked" && s !== "canceled")) {
        expect(reject(sample[state], L.Cancel()).code).toBe("not-cancelable")
      }
      expect(L.shipmentStates.filter(L.canCancel)).toStrictEqual(["booked"])
    })
  })

  describe("terminal states", () => {
    it("never change", () => {
      expect(L.shipmentStates.filter(L.isTerminal)).toStrictEqual(["delivered", "returned", "canceled", "failed"])
      for (const state of terminal) {
        for (const command of everyCommand(sample[state])) {
          const r = reject(sample[state], command)
          expect(r.code).toBe(
            command._tag !== "Cancel" ? "terminal" : state === "canceled" ? "already-canceled" : "not-cancelable"
          )
        }
        expect(L.allowedCommands(sample[state])).toStrictEqual([])
      }
      expect(reject(sample.delivered, L.Fail("late")).reason).toBe("a delivered shipment cannot change")
    })
  })

  describe("a whole journey", () => {
    it("four stops with a failed attempt and a re-attempt; delivered only at the last stop", () => {
      const commands = [
        L.Assign("drv_1"),
        L.Assign("drv_2"),
        L.ArriveAtStop(0),
        L.PickUp(),
        L.ArriveAtStop(1),
        L.CompleteStop(1),
        L.ArriveAtStop(2),
        L.FailAttempt(2, "nobody home"),
        L.ArriveAtStop(2),
        L.CompleteStop(2),
        L.ArriveAtStop(3),
        L.Deliver()
      ]
      let s = sample.booked
      const seen: Array<string> = []
      for (const c of commands) {
        const t = accept(s, c)
        seen.push(...types(t))
        s = L.apply(s, t)
        expect(invariant(s)).toStrictEqual([])
        if (c._tag !== "Deliver") expect(s.state).not.toBe("delivered")
      }
      expect(s).toStrictEqual({ ...snap("delivered", "cccc"), driverId: "drv_2" })
      expect(seen).toStrictEqual([
        "shipment.assigned",
        "shipment.assigned",
        "shipment.stop_arrived",
        "shipment.picked_up",
        "shipment.in_transit",
        "shipment.stop_arrived",
        "shipment.stop_completed",
        "shipment.stop_arrived",
        "shipment.attempt_failed",
        "shipment.in_transit",
        "shipment.stop_arrived",
        "shipment.stop_completed",
        "shipment.stop_arrived",
        "shipment.delivered"
      ])
    })

    it("unassign, reassign, return", () => {
      let s = run(sample.booked, L.Assign("drv_1"))
      s = run(s, L.ArriveAtStop(0))
      s = run(s, L.Unassign())
      expect(s).toStrictEqual(sample.booked)
      s = run(run(run(s, L.Assign("drv_3")), L.PickUp()), L.FailAttempt(1, "closed"))
      s = run(run(s, L.Return()), L.Return())
      expect(s.state).toBe("returned")
      expect(statuses(s)).toBe("cfpp")
    })
  })

  describe("the transition table", () => {
    /** One accepted example per row, so every rule of the table is exercised. */
    const examples: ReadonlyArray<readonly [L.Snapshot, L.Command]> = [
      [sample.booked, L.Assign("drv_1")],
      [sample.booked, L.Cancel()],
      [sample.booked, L.Fail("x")],
      [sample.assigned, L.Assign("drv_2")],
      [sample.assigned, L.Unassign()],
      [sample.assigned, L.ArriveAtStop(0)],
      [sample.assigned, L.PickUp()],
      [sample.assigned, L.CompleteStop(0)],
      [sample.assigned, L.Fail("x")],
      [sample.picked_up, L.ArriveAtStop(1)],
      [sample.picked_up, L.CompleteStop(1)],
      [snap("picked_up", "cssp"), L.CompleteStop(3)],
      [snap("picked_up", "cp"), L.Deliver()],
      [sample.picked_up, L.FailAttempt(1, "x")],
      [sample.picked_up, L.Fail("x")],
      [snap("in_transit", "ccpp"), L.ArriveAtStop(2)],
      [sample.in_transit, L.CompleteStop(1)],
      [snap("in_transit", "ccca"), L.CompleteStop(3)],
      [snap("in_transit", "ccca"), L.Deliver()],
      [sample.in_transit, L.FailAttempt(1, "x")],
      [sample.in_transit, L.Fail("x")],
      [sample.attempt_failed, L.ArriveAtStop(1)],
      [sample.attempt_failed, L.Return()],
      [sample.attempt_failed, L.Fail("x")],
      [sample.returning, L.Return()],
      [sample.returning, L.Fail("x")]
    ]

    it("every row is reachable and nothing else is", () => {
      const covered = examples.map(([s, c]) => ({ from: s.state, command: c._tag, to: accept(s, c).state }))
      expect(covered).toStrictEqual(L.transitions.map(({ command, from, to }) => ({ from, command, to })))
    })

    it("isTerminal means no row leaves the state", () => {
      for (const state of L.shipmentStates) {
        expect(L.isTerminal(state)).toBe(!L.transitions.some((r) => r.from === state))
      }
    })

    it("renders the Mermaid state diagram from the rows", () => {
      const lines = L.stateDiagram.split("\n")
      expect(lines[0]).toBe("stateDiagram-v2")
      expect(lines[1]).toBe("    [*] --> booked")
      expect(lines).toContain("    booked --> assigned: Assign")
      expect(lines).toContain("    assigned --> assigned: Assign (another driver), ArriveAtStop (pickup)")
      expect(lines).toContain(
        "    in_transit --> delivered: CompleteStop (last stop, others done), Deliver (others done)"
      )
      for (const state of terminal) expect(lines).toContain(`    ${state} --> [*]`)
      for (const r of L.transitions) {
        const line = lines.find((l) => l.startsWith(`    ${r.from} --> ${r.to}: `))
        expect(line).toBeDefined()
        expect(line).toContain(r.command)
      }
      const arrows = new Set(L.transitions.map((r) => `${r.from} ${r.to}`))
      expect(lines.length).toBe(2 + arrows.size + terminal.length)
    })
  })

  describe("allowedCommands", () => {
    it("lists what decide accepts", () => {
      expect(L.allowedCommands(sample.booked)).toStrictEqual(["Assign", "Fail", "Cancel"])
      expect(L.allowedCommands(sample.assigned)).toStrictEqual([
        "Assign",
        "Unassign",
        "ArriveAtStop",
        "PickUp",
        "CompleteStop",
        "Fail"
      ])
      expect(L.allowedCommands(snap("picked_up", "cp"))).toStrictEqual([
        "ArriveAtStop",
        "CompleteStop",
        "FailAttempt",
        "Deliver",
        "Fail"
      ])
      expect(L.allowedCommands(sample.in_transit)).toStrictEqual(["CompleteStop", "FailAttempt", "Fail"])
      expect(L.allowedCommands(sample.attempt_failed)).toStrictEqual(["ArriveAtStop", "Return", "Fail"])
    })
  })

  describe("invariantViolations", () => {
    it("accepts the samples and names what is wrong otherwise", () => {
      for (const s of Object.values(sample)) expect(L.invariantViolations(s)).toStrictEqual([])
      expect(L.invariantViolations(snap("booked", "pp", "drv_1"))).toStrictEqual(["a booked shipment has no driver"])
      expect(L.invariantViolations(snap("in_transit", "cap", null))).toStrictEqual([
        "a shipment in state in_transit needs a driver"
      ])
      expect(L.invariantViolations(snap("delivered", "cpc")).length).toBe(1)
      expect(L.invariantViolations(snap("in_transit", "cpa")).length).toBe(1)
      expect(L.invariantViolations(snap("picked_up", "cps")).length).toBe(1)
      expect(L.invariantViolations(snap("booked", "p"))).toStrictEqual(["a route needs a pickup and a delivery stop"])
      expect(
        L.invariantViolations({ ...sample.booked, stops: sample.booked.stops.map((s) => ({ ...s, role: "delivery" })) })
      ).toStrictEqual(["stop 0 should be the pickup stop, not delivery"])
      expect(L.invariantViolations({ ...sample.booked, stops: sample.booked.stops.slice(1) })).toStrictEqual([
        "the stop at position 0 has seq 1"
      ])
    })

    it("makes decide refuse an inconsistent record", () => {
      expect(reject(snap("in_transit", "cpa"), L.Fail("x"))).toMatchObject({ code: "illegal" })
      expect(reject(snap("in_transit", "cpa"), L.Fail("x")).reason).toMatch(/^the shipment record is inconsistent: /)
    })
  })

  describe("apply", () => {
    it("changes the named stops only and never mutates", () => {
      const before = deepFreeze(snap("in_transit", "capp"))
      const after = L.apply(before, accept(before, L.CompleteStop(1)))
      expect(statuses(after)).toBe("ccpp")
      expect(after.stops[0]).toBe(before.stops[0])
      expect(after.stops[2]).toBe(before.stops[2])
      expect(statuses(before)).toBe("capp")
    })
  })

  describe("Command schema", () => {
    const decode = Schema.decodeUnknownEither(L.Command)

    it("decodes JSON bodies of the ops API", () => {
      expect(decode({ _tag: "Assign", driverId: "  drv_9 " })).toStrictEqual(Either.right(L.Assign("drv_9")))
      expect(decode({ _tag: "FailAttempt", stop: 2, reason: "nobody home" })).toStrictEqual(
        Either.right(L.FailAttempt(2, "nobody home"))
      )
      expect(decode(JSON.parse(`{"_tag":"Cancel"}`))).toStrictEqual(Either.right(L.Cancel()))
      for (const command of everyCommand(sample.in_transit).filter((c) => Either.isRight(decode(c)))) {
        expect(Schema.encodeSync(L.Command)(command)).toStrictEqual(command)
      }
    })

    it("refuses malformed commands", () => {
      for (const input of [
        { _tag: "Teleport" },
        { driver_id: "drv_1" },
        { _tag: "Assign", driverId: "   " },
        { _tag: "ArriveAtStop", stop: -1 },
        { _tag: "ArriveAtStop", stop: 1.5 },
        { _tag: "ArriveAtStop", stop: "2" },
        { _tag: "FailAttempt", stop: 2 },
        { _tag: "Fail", reason: "x".repeat(501) }
      ]) {
        expect(Either.isLeft(decode(input))).toBe(true)
      }
    })
  })

  describe("TransitionRejected", () => {
    it("is a tagged error whose message is the reason, and survives the wire", () => {
      const r = reject(sample.delivered, L.Assign("drv_2"))
      expect(r).toBeInstanceOf(L.TransitionRejected)
      expect(r._tag).toBe("TransitionRejected")
      expect(r.message).toBe("a delivered shipment cannot change")
      expect(r.command).toStrictEqual(L.Assign("drv_2"))
      const wire = Schema.encodeSync(L.TransitionRejected)(r)
      expect(wire).toStrictEqual({
        _tag: "TransitionRejected",
        state: "delivered",
        command: { _tag: "Assign", driverId: "drv_2" },
        code: "terminal",
        reason: "a delivered shipment cannot change"
      })
      expect(Schema.decodeUnknownSync(L.TransitionRejected)(wire)).toStrictEqual(r)
    })

    it("carries commands the schema would refuse", () => {
      expect(reject(sample.booked, L.Assign("")).command).toStrictEqual(L.Assign(""))
    })
  })

  // -------------------------------------------------------------------------------------------
  // Properties
  // -------------------------------------------------------------------------------------------

  describe("properties", () => {
    it("generated snapshots are consistent by both checkers", () => {
      fc.assert(
        fc.property(snapshotArb(), (s) => {
          expect(L.invariantViolations(s)).toStrictEqual([])
          expect(invariant(s)).toStrictEqual([])
        }),
        { numRuns: 500 }
      )
    })

    it("random walks keep every invariant and every promise of decide", () => {
      fc.assert(
        fc.property(walkArb, ([start, moves]) => {
          let s = deepFreeze(start)
          for (const move of moves) {
            const acceptable = everyCommand(s).filter((c) => Either.isRight(L.decide(s, c)))
            const command =
              move.steer && acceptable.length > 0 ? acceptable[move.pick % acceptable.length]! : move.command
            const before = structuredClone(s)
            const result = L.decide(s, command)
            // Rejected or not, decide never touches its input (it is frozen, too).
            expect(s).toStrictEqual(before)
            if (Either.isLeft(result)) {
              const r = result.left
              expect(r).toBeInstanceOf(L.TransitionRejected)
              expect(r.state).toBe(s.state)
              expect(r.command).toBe(command)
              expect(r.reason.length).toBeGreaterThan(0)
              expect(r.message).toBe(r.reason)
              if (!L.allowedCommands(s).includes(command._tag)) {
                expect(acceptable.some((c) => c._tag === command._tag)).toBe(false)
              }
              if (command._tag === "Unassign") expect(s.state).not.toBe("assigned")
              if (command._tag === "Cancel") {
                expect(r.code).toBe(s.state === "canceled" ? "already-canceled" : "not-cancelable")
              } else if (L.isTerminal(s.state)) {
                expect(r.code).toBe("terminal")
              }
              continue
            }
            const t = result.right
            expect(L.isTerminal(s.state)).toBe(false)
            expect(t.events.length).toBeGreaterThanOrEqual(1)
            expect(
              L.transitions.some((r) => r.from === s.state && r.command === command._tag && r.to === t.state)
            ).toBe(true)
            expect(L.allowedCommands(s)).toContain(command._tag)
            if (t.state !== s.state) expect(types(t)).toContain(stateEvent[t.state])
            // Only stops that really change are reported, each once.
            expect(new Set(t.stops.map((x) => x.seq)).size).toBe(t.stops.length)
            for (const change of t.stops) expect(s.stops[change.seq]?.status).not.toBe(change.status)
            if (command._tag === "Unassign") {
              expect(s.state).toBe("assigned")
              expect(s.stops[0]!.status).not.toBe("completed")
            }
            if (command._tag === "Cancel") expect(s.state).toBe("booked")
            const after = deepFreeze(L.apply(s, t))
            expect(invariant(after)).toStrictEqual([])
            expect(L.invariantViolations(after)).toStrictEqual([])
            if (command._tag === "Assign") expect(after.driverId).toBe(command.driverId)
            if (after.state === "delivered") {
              const last = s.stops.length - 1
              expect(s.stops[last]!.status).not.toBe("completed")
              expect(t.stops).toContainEqual({ seq: last, status: "completed" })
              expect(after.stops.every((x) => done(x.status))).toBe(true)
            } else {
              expect(after.stops[after.stops.length - 1]!.status).not.toBe("completed")
            }
            s = after
          }
        }),
        { numRuns: 400 }
      )
    })

    it("terminal shipments reject every command", () => {
      fc.assert(
        fc.property(
          snapshotArb(terminal).chain((s) => fc.tuple(fc.constant(s), commandArb(s.stops.length))),
          ([s, command]) => {
            expect(Either.isLeft(L.decide(s, command))).toBe(true)
            expect(L.allowedCommands(s)).toStrictEqual([])
          }
        ),
        { numRuns: 300 }
      )
    })

    it("Unassign succeeds exactly in assigned", () => {
      fc.assert(
        fc.property(snapshotArb(), (s) => {
          expect(Either.isRight(L.decide(s, L.Unassign()))).toBe(
            s.state === "assigned" && s.stops[0]!.status !== "completed"
          )
        }),
        { numRuns: 300 }
      )
    })

    it("allowedCommands is non-empty exactly for non-terminal shipments", () => {
      fc.assert(
        fc.property(snapshotArb(), (s) => {
          expect(L.allowedCommands(s).length > 0).toBe(!L.isTerminal(s.state))
          expect(L.allowedCommands(s).includes("Fail")).toBe(!L.isTerminal(s.state))
        }),
        { numRuns: 300 }
      )
    })
  })
})
