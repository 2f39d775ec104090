/**
 * @module Cancel
 *
 * `GET /api/v1/order/cancel/json/` (interface 2.5, 4.4, 7.4). A shipment can be canceled only
 * while `booked`. Every refusal is one of the interface's six messages; an unknown tracking
 * number and another customer's get the same answer, so tracking numbers cannot be probed.
 *
 * A key cancels only shipments of its own account and mode: a test key cancels test bookings, a
 * live key live ones (like the two worlds of test and live keys elsewhere). Linked (parent)
 * accounts may read their children's orders but not cancel them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AccountRecord, Principal, ClientIp } from "../access/index.js"
import { Abuse, AccountStore } from "../access/index.js"
import { VersionConflict, Transactor } from "../shared/index.js"
import * as Lifecycle from "./Lifecycle.js"
import { commit, ShipmentNotFound } from "./Operations.js"
import type { ShipmentRecord } from "./Shipment.js"
import { ShipmentStore } from "./ShipmentStore.js"

/** `id` is not 6 to 8 digits, or names no shipment this key may cancel. */
export class InvalidTrackingNumber extends Schema.TaggedError<InvalidTrackingNumber>()("InvalidTrackingNumber", {}) {}

/** The account's external cancel provider refused or failed. */
export class CancelProviderFailed extends Schema.TaggedError<CancelProviderFailed>()("CancelProviderFailed", {
  message: Schema.String
}) {}

/**
 * For accounts in `provider` cancel mode: forwards the cancellation to the courier's own system
 * and returns its payload, which the API returns in `data` (interface 2.5: "some cancellations
 * return a provider response payload instead").
 */
export class CancelProvider extends Context.Tag("@waybill/core/CancelProvider")<
  CancelProvider,
  {
    readonly cancel: (
      shipment: ShipmentRecord
    ) => Effect.Effect<Readonly<Record<string, unknown>>, CancelProviderFailed>
  }
>() {}

/** Tracking numbers as the interface allows them in `id`: 6 to 8 digits. */
export const TRACKING_NUMBER = /^\d{6,8}$/

export interface CancelInput {
  /** The resolved client address (none when unknown); blocked addresses are refused first. */
  readonly client: Option.Option<ClientIp.Address>
  /** The authenticated and admitted caller (see `Admission.admit`). */
  readonly principal: Principal
  /** Every `id` query value. */
  readonly id: ReadonlyArray<string>
}

/** Checks the id before any lookup; exactly one value of 6 to 8 digits. */
export const parseId = (values: ReadonlyArray<string>): Option.Option<string> =>
  values.length === 1 && TRACKING_NUMBER.test(values[0]!) ? Option.some(values[0]!) : Option.none()

const cancelable = (principal: Principal, s: ShipmentRecord) =>
  s.customerNo === principal.account.customerNo && s.livemode === (principal.key.mode === "live")

/**
 * Cancels a shipment already read and found to be the caller's, in the account's cancel mode.
 * A `VersionConflict` is left to the caller, which reads again and retries.
 */
const cancelLoaded = Effect.fnUntraced(function* (account: AccountRecord, shipment: ShipmentRecord) {
  const transition = Lifecycle.decide(shipment, Lifecycle.Cancel())
  if (Either.isLeft(transition)) return yield* transition.left
  if (account.cancelMode === "local") {
    yield* commit(shipment, transition.right)
    return { result: "success" } as Readonly<Record<string, unknown>>
  }
  // Provider mode: the local change is written first (its version check settles any race),
  // and the provider is asked inside the same transaction, so a provider refusal rolls the
  // cancellation back and a lost race never reaches the provider at all.
  const provider = yield* Effect.serviceOption(CancelProvider)
  if (Option.isNone(provider)) return yield* new CancelProviderFailed({ message: "no cancel provider is configured" })
  const tx = yield* Transactor
  const payload = yield* tx.withTransaction(
    Effect.zipRight(commit(shipment, transition.right), provider.value.cancel(shipment))
  )
  return payload
})

/** One read-decide-write round of {@link cancel}: a miss is `InvalidTrackingNumber`. */
const cancelOwn = Effect.fnUntraced(function* (principal: Principal, trackNo: string) {
  const found = yield* (yield* ShipmentStore).findByTrackNo(trackNo)
  if (Option.isNone(found) || !cancelable(principal, found.value)) return yield* new InvalidTrackingNumber()
  return yield* cancelLoaded(principal.account, found.value)
})

/**
 * The cancel use case. Races with a concurrent driver assignment are settled by the optimistic
 * version check: on a conflict the shipment is read again and the decision retaken, so exactly
 * one of the two wins and the loser gets the answer the new state calls for. The caller was
 * admitted before (`Admission.admit`: blocked address, key, allowlist, limit); then the id.
 */
export const cancel = Effect.fn("Cancel.cancel")(function* (input: CancelInput) {
  const principal = input.principal
  const id = parseId(input.id)
  // A miss (malformed, unknown, or not this key's) counts towards the address's abuse limit.
  if (Option.isNone(id)) return yield* Effect.zipRight(Abuse.recordMiss(input.client), new InvalidTrackingNumber())
  return yield* cancelOwn(principal, id.value).pipe(
    Effect.retry({ times: 3, while: (e) => e instanceof VersionConflict }),
    Effect.tapErrorTag("InvalidTrackingNumber", () => Abuse.recordMiss(input.client))
  )
})

/** One read-decide-write round of {@link cancelForAccount}. */
const cancelAccounts = Effect.fnUntraced(function* (
  account: Option.Option<AccountRecord>,
  customerNo: string,
  trackNo: string
) {
  const found = TRACKING_NUMBER.test(trackNo) ? yield* (yield* ShipmentStore).findByTrackNo(trackNo) : Option.none()
  if (Option.isNone(account) || Option.isNone(found) || found.value.customerNo !== customerNo)
    return yield* new ShipmentNotFound({ trackNo })
  return yield* cancelLoaded(account.value, found.value)
})

/**
 * Cancels one of an account's shipments for a signed-in user of that account (the portal's
 * cancel button): the same lifecycle rule, cancel mode and race handling as {@link cancel}, for
 * live and test bookings alike (a person of the account owns both worlds; the key-mode split is
 * a rule about API keys). Another account's shipment and an unknown tracking number give the
 * same `ShipmentNotFound`; a shipment past `booked` gives `TransitionRejected`.
 */
export const cancelForAccount = Effect.fn("Cancel.cancelForAccount")(function* (customerNo: string, trackNo: string) {
  const account = yield* Effect.flatMap(AccountStore, (s) => s.findAccount(customerNo))
  return yield* cancelAccounts(account, customerNo, trackNo).pipe(
    Effect.retry({ times: 3, while: (e) => e instanceof VersionConflict })
  )
})
