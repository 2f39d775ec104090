/**
 * @module Lifecycle
 *
 * The shipment state machine as pure functions: `decide` turns a snapshot and a command into a
 * `Transition` (new state, driver, changed stop statuses, domain events) or a
 * `TransitionRejected`; `apply` folds a transition back into the snapshot. Nothing here reads a
 * clock, a store or an id generator, so the use case that calls it owns versioning, event ids,
 * sequences and timestamps, and the rules can be tested exhaustively.
 *
 * The `transitions` table is the single source of truth: `decide` refuses any state change that
 * is not a row of it, `isTerminal` / `canCancel` are derived from it, and `stateDiagram` (the
 * Mermaid text the docs embed) is generated from it, so documentation cannot drift from code.
 *
 * Stop rules work on route positions: stop 0 is the pickup, the last stop is the final
 * delivery, the ones between are intermediate. Work at stops happens strictly in route order:
 * every stop operation targets the *frontier*, the first stop after the pickup that is neither
 * completed nor skipped.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { EventType } from "./Event.js"
import type { ShipmentState, StopRole, StopStatus } from "./Shipment.js"

// ---------------------------------------------------------------------------------------------
// States
// ---------------------------------------------------------------------------------------------

/** Every state once; a mapped type so adding a state to `ShipmentState` fails to compile here. */
const stateSet: { readonly [S in ShipmentState]: null } = {
  booked: null,
  assigned: null,
  picked_up: null,
  in_transit: null,
  attempt_failed: null,
  returning: null,
  delivered: null,
  returned: null,
  canceled: null,
  failed: null
}

/**
 * All shipment states in lifecycle order; what tests, the diagram and CLI help enumerate, so
 * none of them keeps its own list.
 */
export const shipmentStates: ReadonlyArray<ShipmentState> = Object.keys(stateSet) as Array<ShipmentState>

/**
 * `ShipmentState` as a schema, so a `TransitionRejected` (which carries the state) can cross the
 * wire and be decoded back by clients of the ops API.
 */
export const ShipmentStateSchema: Schema.Schema<ShipmentState> = Schema.Literal(...shipmentStates)

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * A driver id as the ops API accepts it: surrounding blanks trimmed, then 1 to 128 characters.
 * The format of driver ids belongs to dispatch, so nothing more is assumed.
 */
const DriverId = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(128)).annotations({
  identifier: "DriverId",
  description: "Id of the driver taking the shipment"
})

/** A stop position in the route (0 = pickup). Existence is checked by `decide`, not here. */
const StopIndex = Schema.Int.pipe(Schema.nonNegative()).annotations({
  identifier: "StopIndex",
  description: "0-based position of the stop in the route; 0 is the pickup"
})

/**
 * Why an attempt or a shipment failed. Kept because it is copied into the event (and so into
 * customer webhooks); bounded so a client cannot push an unbounded payload through it.
 */
const Reason = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(500)).annotations({
  identifier: "FailureReason",
  description: "Human-readable reason, 1 to 500 characters"
})

/**
 * Everything that can be asked of a shipment, as a `_tag`-discriminated union of plain objects.
 * The value is the Schema the ops HTTP API decodes JSON bodies with (e.g.
 * `{"_tag":"FailAttempt","stop":2,"reason":"nobody home"}`); the type of the same name is the
 * decoded command.
 */
export const Command = Schema.Union(
  Schema.TaggedStruct("Assign", { driverId: DriverId }),
  Schema.TaggedStruct("Unassign", {}),
  Schema.TaggedStruct("ArriveAtStop", { stop: StopIndex }),
  Schema.TaggedStruct("PickUp", {}),
  Schema.TaggedStruct("CompleteStop", { stop: StopIndex }),
  Schema.TaggedStruct("FailAttempt", { stop: StopIndex, reason: Reason }),
  Schema.TaggedStruct("Return", {}),
  Schema.TaggedStruct("Deliver", {}),
  Schema.TaggedStruct("Fail", { reason: Reason }),
  Schema.TaggedStruct("Cancel", {})
).annotations({ identifier: "LifecycleCommand" })

/** A decoded lifecycle command (see the `Command` schema). */
export type Command = typeof Command.Type

/** The name of a command; what `allowedCommands` lists and the transition table refers to. */
export type CommandTag = Command["_tag"]

/** The command variant with tag `T`, e.g. `CommandOf<"Assign">`. */
export type CommandOf<T extends CommandTag> = Extract<Command, { readonly _tag: T }>

const tagSet: { readonly [T in CommandTag]: null } = {
  Assign: null,
  Unassign: null,
  ArriveAtStop: null,
  PickUp: null,
  CompleteStop: null,
  FailAttempt: null,
  Return: null,
  Deliver: null,
  Fail: null,
  Cancel: null
}

/** Every command tag once, in a stable order (the order `allowedCommands` answers in). */
export const commandTags: ReadonlyArray<CommandTag> = Object.keys(tagSet) as Array<CommandTag>

/**
 * Give the shipment to a driver (from `booked`), or hand it to another driver before pickup
 * (from `assigned`). Constructors do not validate: `decide` rejects blank ids, the schema
 * rejects them at the edge.
 */
export const Assign = (driverId: string): CommandOf<"Assign"> => ({ _tag: "Assign", driverId })

/** Take the driver off a shipment that has not been picked up; it goes back to `booked`. */
export const Unassign = (): CommandOf<"Unassign"> => ({ _tag: "Unassign" })

/** The driver is at stop `stop` (the pickup before pickup, later stops after it). */
export const ArriveAtStop = (stop: number): CommandOf<"ArriveAtStop"> => ({ _tag: "ArriveAtStop", stop })

/** The goods are collected at the pickup (stop 0). */
export const PickUp = (): CommandOf<"PickUp"> => ({ _tag: "PickUp" })

/**
 * Stop `stop` is done. On stop 0 this is `PickUp`, on the last stop it is `Deliver`, so a driver
 * app can send the same command at every stop.
 */
export const CompleteStop = (stop: number): CommandOf<"CompleteStop"> => ({ _tag: "CompleteStop", stop })

/** The driver could not complete stop `stop` (after the pickup); `reason` reaches the customer. */
export const FailAttempt = (stop: number, reason: string): CommandOf<"FailAttempt"> => ({
  _tag: "FailAttempt",
  stop,
  reason
})

/** After a failed attempt: start returning the goods; when returning: the goods are back. */
export const Return = (): CommandOf<"Return"> => ({ _tag: "Return" })

/** The last stop is done and the shipment is delivered (intermediate stops must be done). */
export const Deliver = (): CommandOf<"Deliver"> => ({ _tag: "Deliver" })

/** Give up on the shipment from any non-terminal state (loss, damage, refusal, ...). */
export const Fail = (reason: string): CommandOf<"Fail"> => ({ _tag: "Fail", reason })

/** The customer cancels; only possible while `booked` (spec 3: before assignment to a driver). */
export const Cancel = (): CommandOf<"Cancel"> => ({ _tag: "Cancel" })

// ---------------------------------------------------------------------------------------------
// Snapshot, transition, rejection
// ---------------------------------------------------------------------------------------------

/** What the machine needs to know about one stop. A `StopRecord` fits. */
export interface SnapshotStop {
  /** 0-based position in the route; must equal the stop's index in `Snapshot.stops`. */
  readonly seq: number
  readonly role: StopRole
  readonly status: StopStatus
}

/**
 * The part of a shipment the lifecycle reads. A `ShipmentRecord` is structurally a `Snapshot`,
 * so a stored shipment can be passed to `decide` as it is. Stops must be in route order, pickup
 * first, final delivery last (see `invariantViolations`).
 */
export interface Snapshot {
  readonly state: ShipmentState
  readonly driverId: string | null
  readonly stops: ReadonlyArray<SnapshotStop>
}

/** A stop whose status a transition changes. */
export interface StopChange {
  readonly seq: number
  readonly status: StopStatus
}

/**
 * A domain event a transition emits, without id, sequence or time: the caller stamps those when
 * it appends them to the outbox in the same transaction as the change.
 */
export interface LifecycleEvent {
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
}

/**
 * The outcome of an accepted command: the full new state and driver, only the stops whose status
 * changed (so it maps 1:1 onto `ShipmentChange`), and at least one event, in the order they
 * happened.
 */
export interface Transition {
  readonly state: ShipmentState
  readonly driverId: string | null
  readonly stops: ReadonlyArray<StopChange>
  readonly events: ReadonlyArray<LifecycleEvent>
}

/**
 * Why a command was refused, coarse enough to map onto an HTTP answer:
 * - `already-canceled`: Cancel on a canceled shipment (spec 7.4 "The order is already canceled.");
 * - `not-cancelable`: Cancel in any other state but `booked` ("This order cannot be canceled.");
 * - `terminal`: any other command on a delivered, returned, canceled or failed shipment;
 * - `illegal`: the command makes no sense in this state (or the snapshot itself is inconsistent);
 * - `unknown-stop`: the command names a stop the route does not have;
 * - `out-of-order`: the command skips ahead of the route order.
 */
export const RejectionCode = Schema.Literal(
  "already-canceled",
  "not-cancelable",
  "terminal",
  "illegal",
  "unknown-stop",
  "out-of-order"
)

/** See the `RejectionCode` schema. */
export type RejectionCode = typeof RejectionCode.Type

/**
 * A command the lifecycle refused. A domain error (a client may learn about it), so a
 * `Schema.TaggedError`: `code` is for programs, `reason` is a sentence for people ("a delivered
 * shipment cannot change") and is also the error's `message`.
 */
export class TransitionRejected extends Schema.TaggedError<TransitionRejected>()("TransitionRejected", {
  state: ShipmentStateSchema,
  command: Command,
  code: RejectionCode,
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/** What `decide` fails with. */
export type Rejection = TransitionRejected

// ---------------------------------------------------------------------------------------------
// The transition table
// ---------------------------------------------------------------------------------------------

/** One legal state change: `command` moves a `from` shipment to `to`, when `when` holds. */
export interface TransitionRule {
  readonly from: ShipmentState
  readonly command: CommandTag
  readonly to: ShipmentState
  /** The guard in words, for docs; omitted when the command alone decides. */
  readonly when?: string
}

const rule = (from: ShipmentState, command: CommandTag, to: ShipmentState, when?: string): TransitionRule =>
  when === undefined ? { from, command, to } : { from, command, to, when }

/**
 * Every legal (state, command, next state) triple. `decide` rejects a command whose state has no
 * row for it and refuses to produce a change that is not a row, so this table is exactly what
 * the code allows.
 */
export const transitions: ReadonlyArray<TransitionRule> = [
  rule("booked", "Assign", "assigned"),
  rule("booked", "Cancel", "canceled"),
  rule("booked", "Fail", "failed"),
  rule("assigned", "Assign", "assigned", "another driver"),
  rule("assigned", "Unassign", "booked"),
  rule("assigned", "ArriveAtStop", "assigned", "pickup"),
  rule("assigned", "PickUp", "picked_up"),
  rule("assigned", "CompleteStop", "picked_up", "pickup"),
  rule("assigned", "Fail", "failed"),
  rule("picked_up", "ArriveAtStop", "in_transit", "next stop"),
  rule("picked_up", "CompleteStop", "in_transit", "next intermediate stop"),
  rule("picked_up", "CompleteStop", "delivered", "last stop, others done"),
  rule("picked_up", "Deliver", "delivered", "others done"),
  rule("picked_up", "FailAttempt", "attempt_failed", "next stop"),
  rule("picked_up", "Fail", "failed"),
  rule("in_transit", "ArriveAtStop", "in_transit", "next stop"),
  rule("in_transit", "CompleteStop", "in_transit", "next intermediate stop"),
  rule("in_transit", "CompleteStop", "delivered", "last stop, others done"),
  rule("in_transit", "Deliver", "delivered", "others done"),
  rule("in_transit", "FailAttempt", "attempt_failed", "next stop"),
  rule("in_transit", "Fail", "failed"),
  rule("attempt_failed", "ArriveAtStop", "in_transit", "re-attempt"),
  rule("attempt_failed", "Return", "returning"),
  rule("attempt_failed", "Fail", "failed"),
  rule("returning", "Return", "returned", "goods back"),
  rule("returning", "Fail", "failed")
]

const hasRule = (from: ShipmentState, command: CommandTag, to?: ShipmentState): boolean =>
  transitions.some((r) => r.from === from && r.command === command && (to === undefined || r.to === to))

const terminalStates: ReadonlySet<ShipmentState> = new Set(
  shipmentStates.filter((s) => !transitions.some((r) => r.from === s))
)

/**
 * Whether the state is final (delivered, returned, canceled, failed): derived from the table as
 * "no rule leaves it", so a new exit cannot be added without the predicate following.
 */
export const isTerminal = (state: ShipmentState): boolean => terminalStates.has(state)

/**
 * Whether a customer cancel can succeed in this state (only `booked`, spec 3). Derived from the
 * table so the cancel endpoint and the machine cannot disagree.
 */
export const canCancel = (state: ShipmentState): boolean => hasRule(state, "Cancel")

/**
 * The state diagram as Mermaid `stateDiagram-v2` text, generated from `transitions`: one arrow per
 * (from, to) pair labelled with its commands and guards, an entry arrow into `booked` and exit
 * arrows from the terminal states. Docs embed this string instead of drawing their own.
 */
export const stateDiagram: string = (() => {
  const arrows = new Map<string, { from: ShipmentState; to: ShipmentState; labels: Array<string> }>()
  for (const r of transitions) {
    const key = `${r.from} ${r.to}`
    const label = r.when === undefined ? r.command : `${r.command} (${r.when})`
    const arrow = arrows.get(key)
    if (arrow === undefined) arrows.set(key, { from: r.from, to: r.to, labels: [label] })
    else arrow.labels.push(label)
  }
  return [
    "stateDiagram-v2",
    "    [*] --> booked",
    ...Array.from(arrows.values(), (a) => `    ${a.from} --> ${a.to}: ${a.labels.join(", ")}`),
    ...shipmentStates.filter(isTerminal).map((s) => `    ${s} --> [*]`)
  ].join("\n")
})()

// ---------------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------------

const isDone = (status: StopStatus): boolean => status === "completed" || status === "skipped"

/** States in which a driver is on the job (and so must be set). */
const withDriver: ReadonlySet<ShipmentState> = new Set<ShipmentState>([
  "assigned",
  "picked_up",
  "in_transit",
  "attempt_failed",
  "returning",
  "delivered",
  "returned"
])

/** Index of the first stop after the pickup that is neither completed nor skipped, or -1. */
const frontierIndex = (stops: ReadonlyArray<SnapshotStop>): number => {
  for (let i = 1; i < stops.length; i++) {
    if (!isDone(stops[i]!.status)) return i
  }
  return -1
}

const routeProblem = (stops: ReadonlyArray<SnapshotStop>): string | null => {
  if (stops.length < 2) return "a route needs a pickup and a delivery stop"
  for (let i = 0; i < stops.length; i++) {
    const stop = stops[i]!
    const role: StopRole = i === 0 ? "pickup" : i === stops.length - 1 ? "delivery" : "intermediate"
    if (stop.seq !== i) return `the stop at position ${i} has seq ${stop.seq}`
    if (stop.role !== role) return `stop ${i} should be the ${role} stop, not ${stop.role}`
  }
  return null
}

/** The stop pattern of a non-terminal or terminal state; null when it fits. */
const shapeProblem = (state: ShipmentState, stops: ReadonlyArray<SnapshotStop>): string | null => {
  const pickup = stops[0]!.status
  const rest = stops.slice(1)
  const last = stops[stops.length - 1]!
  const f = frontierIndex(stops)
  const frontier = f === -1 ? undefined : stops[f]!.status
  const afterFrontierOk = f === -1 || stops.slice(f + 1).every((s) => s.status === "pending" || s.status === "skipped")
  if (last.status === "skipped") return "the last stop cannot be skipped"
  const progressed = (frontierStatuses: ReadonlyArray<StopStatus>): string | null => {
    if (pickup !== "completed") return `stop 0 must be completed in state ${state}`
    if (frontier === undefined || !frontierStatuses.includes(frontier)) {
      return `in state ${state} the next stop must be ${frontierStatuses.join(" or ")}`
    }
    if (!afterFrontierOk) return "stops after the next one must be pending or skipped"
    return null
  }
  switch (state) {
    case "booked":
    case "canceled":
      return stops.every((s) => s.status === "pending") ? null : `all stops must be pending in state ${state}`
    case "assigned":
      if (pickup !== "pending" && pickup !== "arrived") return "stop 0 must be pending or arrived in state assigned"
      return rest.every((s) => s.status === "pending")
        ? null
        : "stops after the pickup must be pending in state assigned"
    case "picked_up":
      if (pickup !== "completed") return "stop 0 must be completed in state picked_up"
      if (!rest.every((s) => s.status === "pending" || s.status === "skipped")) {
        return "stops after the pickup must be pending or skipped in state picked_up"
      }
      return null
    case "in_transit":
      return progressed(["pending", "arrived"])
    case "attempt_failed":
    case "returning":
    case "returned":
      return progressed(["attempt_failed"])
    case "delivered":
      if (pickup !== "completed" || f !== -1 || last.status !== "completed") {
        return "a delivered shipment has every stop completed or skipped, the last one completed"
      }
      return null
    case "failed": {
      // A shipment can fail from any non-terminal state, so any of their patterns will do.
      const any = (["booked", "assigned", "picked_up", "in_transit", "attempt_failed"] as const).some(
        (s) => shapeProblem(s, stops) === null
      )
      return any ? null : "the stops of a failed shipment match no state it could have failed from"
    }
  }
}

/**
 * Everything wrong with a snapshot, as sentences; empty when it is consistent. The rules:
 * the route has >= 2 stops with `seq` equal to position, pickup first, delivery last,
 * intermediate between; stops are worked in route order (done stops, then at most one stop in
 * progress, then pending or skipped ones); the last stop is never skipped; `booked` and
 * `canceled` have no driver and only pending stops; active states and `delivered` / `returned`
 * have a driver; `delivered` has every stop done and the last one completed; `failed` keeps the
 * stop pattern of the state it failed from. `decide` refuses to work from an inconsistent
 * snapshot, and store adapters can use this to check what they load.
 */
export const invariantViolations = (snapshot: Snapshot): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const route = routeProblem(snapshot.stops)
  if (route !== null) return [route]
  const shape = shapeProblem(snapshot.state, snapshot.stops)
  if (shape !== null) problems.push(shape)
  const { driverId, state } = snapshot
  if ((state === "booked" || state === "canceled") && driverId !== null) {
    problems.push(`a ${state} shipment has no driver`)
  }
  if (withDriver.has(state) && (driverId === null || driverId.trim() === "")) {
    problems.push(`a shipment in state ${state} needs a driver`)
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// decide / apply
// ---------------------------------------------------------------------------------------------

interface Refusal {
  readonly code: RejectionCode
  readonly reason: string
}

type Step = Either.Either<Transition, Refusal>

const refuse = (code: RejectionCode, reason: string): Step => Either.left({ code, reason })

const move = (
  snapshot: Snapshot,
  state: ShipmentState,
  events: ReadonlyArray<LifecycleEvent>,
  stops: ReadonlyArray<StopChange> = [],
  driverId: string | null = snapshot.driverId
): Step => Either.right({ state, driverId, stops, events })

const event = (type: EventType, data: Readonly<Record<string, unknown>> = {}): LifecycleEvent => ({ type, data })

const isBlank = (text: string): boolean => text.trim() === ""

/** The pickup goes back to pending when its driver leaves: the arrival was that driver's. */
const resetPickup = (snapshot: Snapshot): ReadonlyArray<StopChange> =>
  snapshot.stops[0]!.status === "arrived" ? [{ seq: 0, status: "pending" }] : []

const stopAt = (snapshot: Snapshot, seq: number): SnapshotStop | undefined =>
  Number.isInteger(seq) ? snapshot.stops[seq] : undefined

/**
 * Checks that `stop` (after the pickup) is the one to work on next: not already done, and not
 * ahead of the frontier.
 */
const atFrontier = (snapshot: Snapshot, stop: SnapshotStop): Refusal | null => {
  if (isDone(stop.status)) return { code: "illegal", reason: `stop ${stop.seq} is already ${stop.status}` }
  const f = frontierIndex(snapshot.stops)
  if (f !== -1 && stop.seq > f) {
    return { code: "out-of-order", reason: `stop ${f} must be completed or skipped before stop ${stop.seq}` }
  }
  return null
}

/** Events of leaving for the route: `in_transit` first, when the shipment was not moving yet. */
const entering = (snapshot: Snapshot, ...events: ReadonlyArray<LifecycleEvent>): ReadonlyArray<LifecycleEvent> =>
  snapshot.state === "in_transit" ? events : [event("shipment.in_transit", { driver_id: snapshot.driverId }), ...events]

const pickUp = (snapshot: Snapshot): Step =>
  move(
    snapshot,
    "picked_up",
    [event("shipment.picked_up", { stop: 0, driver_id: snapshot.driverId })],
    [{ seq: 0, status: "completed" }]
  )

const deliver = (snapshot: Snapshot): Step => {
  const last = snapshot.stops[snapshot.stops.length - 1]!
  const f = frontierIndex(snapshot.stops)
  if (f !== last.seq) {
    return refuse("out-of-order", `stop ${f} must be completed or skipped before the last stop`)
  }
  return move(
    snapshot,
    "delivered",
    [event("shipment.delivered", { stop: last.seq, driver_id: snapshot.driverId })],
    [{ seq: last.seq, status: "completed" }]
  )
}

const noSuchStop = (seq: number): Step => refuse("unknown-stop", `stop ${seq} does not exist`)

/** The guards and effects of each command, once the table allows it in the current state. */
const step = (snapshot: Snapshot, command: Command): Step => {
  const { state } = snapshot
  switch (command._tag) {
    case "Assign": {
      if (isBlank(command.driverId)) return refuse("illegal", "a driver id cannot be blank")
      if (command.driverId === snapshot.driverId) {
        return refuse("illegal", `driver ${command.driverId} is already assigned`)
      }
      return move(
        snapshot,
        "assigned",
        [event("shipment.assigned", { driver_id: command.driverId, previous_driver_id: snapshot.driverId })],
        resetPickup(snapshot),
        command.driverId
      )
    }
    case "Unassign":
      return move(
        snapshot,
        "booked",
        [event("shipment.unassigned", { driver_id: snapshot.driverId })],
        resetPickup(snapshot),
        null
      )
    case "ArriveAtStop": {
      const stop = stopAt(snapshot, command.stop)
      if (stop === undefined) return noSuchStop(command.stop)
      if (state === "assigned") {
        if (stop.seq !== 0) {
          return refuse("out-of-order", `the goods must be picked up before the driver goes to stop ${stop.seq}`)
        }
        if (stop.status === "arrived") return refuse("illegal", "the driver has already arrived at stop 0")
        return move(
          snapshot,
          "assigned",
          [event("shipment.stop_arrived", { stop: 0, role: stop.role })],
          [{ seq: 0, status: "arrived" }]
        )
      }
      const refusal = atFrontier(snapshot, stop)
      if (refusal !== null) return Either.left(refusal)
      if (stop.status === "arrived") return refuse("illegal", `the driver has already arrived at stop ${stop.seq}`)
      return move(
        snapshot,
        "in_transit",
        entering(snapshot, event("shipment.stop_arrived", { stop: stop.seq, role: stop.role })),
        [{ seq: stop.seq, status: "arrived" }]
      )
    }
    case "PickUp":
      return pickUp(snapshot)
    case "CompleteStop": {
      const stop = stopAt(snapshot, command.stop)
      if (stop === undefined) return noSuchStop(command.stop)
      if (state === "assigned") {
        return stop.seq === 0
          ? pickUp(snapshot)
          : refuse("out-of-order", `the goods must be picked up before stop ${stop.seq} can be completed`)
      }
      const refusal = atFrontier(snapshot, stop)
      if (refusal !== null) return Either.left(refusal)
      if (stop.seq === snapshot.stops.length - 1) return deliver(snapshot)
      return move(
        snapshot,
        "in_transit",
        entering(snapshot, event("shipment.stop_completed", { stop: stop.seq, role: stop.role })),
        [{ seq: stop.seq, status: "completed" }]
      )
    }
    case "FailAttempt": {
      if (isBlank(command.reason)) return refuse("illegal", "a failed attempt needs a reason")
      const stop = stopAt(snapshot, command.stop)
      if (stop === undefined) return noSuchStop(command.stop)
      const refusal = atFrontier(snapshot, stop)
      if (refusal !== null) return Either.left(refusal)
      return move(
        snapshot,
        "attempt_failed",
        [event("shipment.attempt_failed", { stop: stop.seq, role: stop.role, reason: command.reason })],
        [{ seq: stop.seq, status: "attempt_failed" }]
      )
    }
    case "Return": {
      const stop = frontierIndex(snapshot.stops)
      return state === "attempt_failed"
        ? move(snapshot, "returning", [event("shipment.returning", { stop })])
        : move(snapshot, "returned", [event("shipment.returned", { stop })])
    }
    case "Deliver":
      return deliver(snapshot)
    case "Fail":
      if (isBlank(command.reason)) return refuse("illegal", "a failure needs a reason")
      return move(snapshot, "failed", [event("shipment.failed", { reason: command.reason, previous_state: state })])
    case "Cancel":
      return move(snapshot, "canceled", [event("shipment.canceled")])
  }
}

/** A sentence for a command the table does not allow in a (non-terminal) state. */
const notAllowed = (state: ShipmentState, tag: CommandTag): string => {
  switch (tag) {
    case "Assign":
      return "the driver can be changed only before pickup"
    case "Unassign":
      return state === "booked"
        ? "a booked shipment has no driver to unassign"
        : "a driver can be unassigned only before pickup"
    case "PickUp":
      return state === "booked" ? "a driver must be assigned before pickup" : "the goods are already picked up"
    case "Return":
      return "a shipment can be returned only after a failed delivery attempt"
    case "ArriveAtStop":
    case "CompleteStop":
    case "Deliver":
    case "FailAttempt":
      if (state === "booked") return "a driver must be assigned first"
      if (state === "assigned" && tag === "Deliver") return "the goods must be picked up before delivery"
      if (state === "assigned") return "a failed pickup is not a delivery attempt; use Fail or Unassign"
      if (state === "returning") return "a returning shipment can only be returned or failed"
      if (tag === "FailAttempt") return "the driver must arrive at the stop again before another attempt can fail"
      return `the driver must arrive at the failed stop again before ${tag === "Deliver" ? "delivering" : "completing it"}`
    case "Fail":
    case "Cancel":
      return `${tag} is not allowed in state ${state}`
  }
}

/**
 * Decides what `command` does to a shipment in `snapshot`, without doing it: either the
 * `Transition` to store (with its events) or why it is refused. Pure and total: it never throws,
 * never mutates its input, and refuses (code `illegal`) to work from a snapshot that breaks
 * `invariantViolations`, so a corrupt record cannot be extended. Rejection precedence: cancel
 * codes, then `terminal`, then `illegal` for a command the state has no rule for, then the
 * command's own guards (`unknown-stop`, `illegal`, `out-of-order`).
 */
export const decide = (snapshot: Snapshot, command: Command): Either.Either<Transition, Rejection> => {
  const { state } = snapshot
  const reject = (code: RejectionCode, reason: string): Either.Either<Transition, Rejection> =>
    // Validation off: a refused command may be exactly the kind the schema would not accept.
    Either.left(new TransitionRejected({ state, command, code, reason }, true))
  if (command._tag === "Cancel" && state === "canceled")
    return reject("already-canceled", "the shipment is already canceled")
  if (command._tag === "Cancel" && !canCancel(state)) {
    return reject("not-cancelable", `only a booked shipment can be canceled, this one is ${state}`)
  }
  if (isTerminal(state)) return reject("terminal", `a ${state} shipment cannot change`)
  const broken = invariantViolations(snapshot)[0]
  if (broken !== undefined) return reject("illegal", `the shipment record is inconsistent: ${broken}`)
  if (!hasRule(state, command._tag)) return reject("illegal", notAllowed(state, command._tag))
  return Either.match(step(snapshot, command), {
    onLeft: (refusal) => reject(refusal.code, refusal.reason),
    onRight: (transition) =>
      hasRule(state, command._tag, transition.state)
        ? Either.right(transition)
        : reject("illegal", `${command._tag} cannot move a ${state} shipment to ${transition.state}`)
  })
}

/**
 * The snapshot after `transition`: new state and driver, changed stop statuses by `seq`. Returns
 * a new object; stops a transition does not name keep their status (and identity).
 */
export const apply = (snapshot: Snapshot, transition: Transition): Snapshot => {
  const changed = new Map(transition.stops.map((s) => [s.seq, s.status] as const))
  return {
    state: transition.state,
    driverId: transition.driverId,
    stops: snapshot.stops.map((stop) => {
      const status = changed.get(stop.seq)
      return status === undefined || status === stop.status ? stop : { ...stop, status }
    })
  }
}

/** One concrete command per tag and stop, to probe `decide` with. */
const probes = (snapshot: Snapshot): ReadonlyArray<Command> => [
  Assign(snapshot.driverId === "driver" ? "another driver" : "driver"),
  Unassign(),
  PickUp(),
  Return(),
  Deliver(),
  Fail("probe"),
  Cancel(),
  ...snapshot.stops.flatMap((s) => [ArriveAtStop(s.seq), CompleteStop(s.seq), FailAttempt(s.seq, "probe")])
]

/**
 * The commands `decide` would accept now (for some stop or driver), in `commandTags` order. For
 * CLI help and docs; computed by asking `decide`, so it cannot promise what `decide` refuses.
 * Assign counts when *another* driver could be assigned. Empty for terminal states.
 */
export const allowedCommands = (snapshot: Snapshot): ReadonlyArray<CommandTag> => {
  const accepted = new Set(
    probes(snapshot)
      .filter((c) => Either.isRight(decide(snapshot, c)))
      .map((c) => c._tag)
  )
  return commandTags.filter((t) => accepted.has(t))
}
