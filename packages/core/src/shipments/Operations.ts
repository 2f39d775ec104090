/**
 * @module Operations
 *
 * How a courier runs its day: the lifecycle commands (assign, pick up, deliver, ...) applied to
 * stored shipments. One program, {@link execute}, serves the library, the `/ops/v1` HTTP API and
 * the CLI alike.
 *
 * Concurrency is optimistic: the shipment is read, the pure `Lifecycle.decide` computes the
 * change, and the change is written only if the stored version is still the one that was read
 * (with its events, in one transaction). Two writers racing on one shipment cannot both win;
 * the loser gets `VersionConflict`. This holds across processes sharing a database, not just
 * within one.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Entropy } from "../shared/index.js"
import type { DomainEvent } from "./Event.js"
import { EventOutbox } from "./EventOutbox.js"
import * as Lifecycle from "./Lifecycle.js"
import type { ShipmentRecord } from "./Shipment.js"
import { ShipmentStore } from "./ShipmentStore.js"
import { Transactor, Ulid } from "../shared/index.js"

/** No shipment has this tracking number. */
export class ShipmentNotFound extends Schema.TaggedError<ShipmentNotFound>()("ShipmentNotFound", {
  trackNo: Schema.String
}) {}

/** Reads a shipment or fails with {@link ShipmentNotFound}. */
export const load = (trackNo: string) =>
  Effect.flatMap(ShipmentStore, (store) => store.findByTrackNo(trackNo)).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.fail(new ShipmentNotFound({ trackNo })), onSome: Effect.succeed })
    )
  )

/** The writes of {@link commit}, in its transaction: the shipment, then its events. */
const writeTransition = Effect.fnUntraced(function* (
  store: Context.Tag.Service<ShipmentStore>,
  outbox: Context.Tag.Service<EventOutbox>,
  shipment: ShipmentRecord,
  transition: Lifecycle.Transition,
  now: number,
  ids: ReadonlyArray<string>
) {
  const updated = yield* store.update({
    trackNo: shipment.trackNo,
    expectedVersion: shipment.version,
    state: transition.state,
    driverId: transition.driverId,
    stops: transition.stops,
    updatedAt: now
  })
  const events: Array<DomainEvent> = []
  for (const [i, e] of transition.events.entries()) {
    events.push(
      yield* outbox.append({
        id: ids[i]!,
        type: e.type,
        customerNo: shipment.customerNo,
        trackNo: shipment.trackNo,
        livemode: shipment.livemode,
        occurredAt: now,
        data: { track_no: shipment.trackNo, state: transition.state, ...e.data }
      })
    )
  }
  return { shipment: updated, events }
})

/**
 * Applies a decided transition to the version it was decided from: the new state and stop
 * statuses, and its events with ids and times, in one transaction.
 */
export const commit = Effect.fn("Operations.commit")(function* (
  shipment: ShipmentRecord,
  transition: Lifecycle.Transition
) {
  const store = yield* ShipmentStore
  const outbox = yield* EventOutbox
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  const ids: Array<string> = []
  for (let i = 0; i < transition.events.length; i++) ids.push(yield* Ulid.eventId)
  return yield* tx.withTransaction(writeTransition(store, outbox, shipment, transition, now, ids))
})

/**
 * Runs one lifecycle command against a stored shipment. Fails with `TransitionRejected` when the
 * lifecycle refuses it, `VersionConflict` when another writer changed the shipment first, and
 * `ShipmentNotFound` for an unknown tracking number.
 */
export const execute = Effect.fn("Operations.execute")(function* (trackNo: string, command: Lifecycle.Command) {
  const shipment = yield* load(trackNo)
  const transition = Lifecycle.decide(shipment, command)
  if (Either.isLeft(transition)) return yield* transition.left
  return yield* commit(shipment, transition.right)
})

/**
 * The stop a driver is heading to: the pickup before pickup, then the first stop that is not
 * completed or skipped. Lets the CLI and ops API default `--stop`.
 */
export const nextStop = (shipment: Pick<ShipmentRecord, "stops">): number => {
  const open = shipment.stops.find((s) => s.status !== "completed" && s.status !== "skipped")
  return open?.seq ?? shipment.stops.length - 1
}

/** A stored shipment and its events, newest last: what operators read and act on. */
export interface ShipmentWithEvents {
  readonly shipment: ShipmentRecord
  readonly events: ReadonlyArray<DomainEvent>
}

/** A shipment and its events, for `show`. */
export const show = Effect.fn("Operations.show")(function* (trackNo: string) {
  const shipment = yield* load(trackNo)
  const events = yield* Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo))
  return { shipment, events } satisfies ShipmentWithEvents
})

export type OperationsRequirements = ShipmentStore | EventOutbox | Transactor | Entropy

/** Operator action names, as the CLI and `/ops/v1` spell them. */
export const ActionName = Schema.Literal(
  "assign",
  "unassign",
  "arrive",
  "pickup",
  "complete-stop",
  "fail-attempt",
  "return",
  "deliver",
  "fail",
  "cancel"
)
export type ActionName = typeof ActionName.Type

/** An operator's request: an action and the arguments some actions need. */
export interface ActionInput {
  readonly action: ActionName
  readonly driverId?: string | undefined
  /** 0 is the pickup; defaults to the next open stop ({@link nextStop}). */
  readonly stop?: number | undefined
  readonly reason?: string | undefined
}

/** The action's arguments are missing or malformed (e.g. `assign` without a driver). */
export class InvalidAction extends Schema.TaggedError<InvalidAction>()("InvalidAction", {
  message: Schema.String
}) {}

const decodeCommand = Schema.decodeUnknownEither(Lifecycle.Command)

/** Builds the lifecycle command for an action against the current shipment (pure). */
export const commandFor = (
  shipment: ShipmentRecord,
  input: ActionInput
): Either.Either<Lifecycle.Command, InvalidAction> => {
  const stop = input.stop ?? nextStop(shipment)
  const raw: Record<ActionName, unknown> = {
    assign: { _tag: "Assign", driverId: input.driverId },
    unassign: { _tag: "Unassign" },
    arrive: { _tag: "ArriveAtStop", stop },
    pickup: { _tag: "PickUp" },
    "complete-stop": { _tag: "CompleteStop", stop },
    "fail-attempt": { _tag: "FailAttempt", stop, reason: input.reason },
    return: { _tag: "Return" },
    deliver: { _tag: "Deliver" },
    fail: { _tag: "Fail", reason: input.reason },
    cancel: { _tag: "Cancel" }
  }
  const needs: Partial<Record<ActionName, string>> = {
    assign: "assign needs a driver id (1 to 128 characters)",
    "fail-attempt": "fail-attempt needs a reason (1 to 500 characters)",
    fail: "fail needs a reason (1 to 500 characters)"
  }
  return Either.mapLeft(
    decodeCommand(raw[input.action]),
    () => new InvalidAction({ message: needs[input.action] ?? `${input.action}: invalid arguments` })
  )
}

/**
 * Performs an operator action and returns the shipment as {@link show} would. The one program
 * behind the library, `/ops/v1` and the CLI.
 */
export const perform = Effect.fn("Operations.perform")(function* (trackNo: string, input: ActionInput) {
  const shipment = yield* load(trackNo)
  const command = commandFor(shipment, input)
  if (Either.isLeft(command)) return yield* command.left
  const transition = Lifecycle.decide(shipment, command.right)
  if (Either.isLeft(transition)) return yield* transition.left
  const committed = yield* commit(shipment, transition.right)
  const events = yield* Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo))
  return { shipment: committed.shipment, events } satisfies ShipmentWithEvents
})

/** Gives a booked (or assigned, before pickup) shipment to a driver. */
export const assign = (trackNo: string, driverId: string) => execute(trackNo, Lifecycle.Assign(driverId))
/** Takes the driver off a shipment that has not been picked up. */
export const unassign = (trackNo: string) => execute(trackNo, Lifecycle.Unassign())
/** The driver arrived at a stop (0 is the pickup). */
export const arriveAtStop = (trackNo: string, stop: number) => execute(trackNo, Lifecycle.ArriveAtStop(stop))
/** The goods were collected at the pickup. */
export const pickUp = (trackNo: string) => execute(trackNo, Lifecycle.PickUp())
/** A stop's work is done (completing the last stop delivers the shipment). */
export const completeStop = (trackNo: string, stop: number) => execute(trackNo, Lifecycle.CompleteStop(stop))
/** Delivery at a stop failed (closed, refused, ...). */
export const failAttempt = (trackNo: string, stop: number, reason: string) =>
  execute(trackNo, Lifecycle.FailAttempt(stop, reason))
/** After a failed attempt: start the return; once returning: the goods are back. */
export const returnShipment = (trackNo: string) => execute(trackNo, Lifecycle.Return())
/** The shipment reached its final stop. */
export const deliver = (trackNo: string) => execute(trackNo, Lifecycle.Deliver())
/** The shipment cannot be completed (lost, damaged, ...). Terminal. */
export const fail = (trackNo: string, reason: string) => execute(trackNo, Lifecycle.Fail(reason))
