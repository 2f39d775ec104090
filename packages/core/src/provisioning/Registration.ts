/**
 * @module Registration
 *
 * The account-provisioning sequence (interface 3, 4.5; DECISIONS.md "Account provisioning") as a
 * pure state machine: {@link decide} takes a registration's state and one move and returns the
 * next state with an outcome. It never reads a clock, a random source or a secret: the caller
 * passes the time, the hashes of what the client sent, and fresh hashes and numbers for moves
 * that mint something, so every rule (no step skips e-mail verification, a wrong code never
 * verifies, a resend never resets the failure count, `start` is idempotent, `step1` needs a
 * customer record) is checked by property tests over arbitrary move sequences.
 *
 * Rejections that count (a wrong code) still return a changed state, which the caller stores:
 * an outcome and a state always travel together.
 */
import type { ProvisioningLimits } from "../shared/index.js"

/** `pending` until the e-mail is verified; `customer` once `start` made the record; `active` after `step1`. */
export type Stage = "pending" | "verified" | "customer" | "active"

/** The parts of a registration the machine decides on. Hashes are opaque strings compared for equality. */
export interface State {
  readonly stage: Stage
  /** Hash of the newest one-time code; `null` once it was used or the e-mail is verified. */
  readonly otpHash: string | null
  readonly otpExpiresAt: number
  /** Wrong tries against the newest code. */
  readonly otpFailures: number
  /** Wrong tries over the registration's whole life; never reset. */
  readonly totalFailures: number
  /** Hash of the newest verification-link token; `null` once used. */
  readonly linkHash: string | null
  readonly linkExpiresAt: number
  /** When the last e-mail was sent (0: never, or its sending failed: a resend may follow at once). */
  readonly lastSentAt: number
  /** Resends in the current day window starting at {@link resendDayStart}. */
  readonly resendCount: number
  readonly resendDayStart: number
  readonly validationKeyHash: string | null
  readonly validationKeyExpiresAt: number
  readonly customerNo: string | null
  readonly billingUpdated: boolean
}

/** Why a move was refused; the HTTP layer maps each to a status and message. */
export type Reason =
  | "wrong-code"
  | "code-expired"
  | "code-attempts-exceeded"
  | "registration-locked"
  | "link-invalid"
  | "already-verified"
  | "not-verified"
  | "resend-too-soon"
  | "resend-limit"
  | "validation-key-invalid"
  | "not-started"
  | "not-active"

export type Move =
  | { readonly _tag: "Verify"; readonly codeHash: string; readonly now: number }
  | { readonly _tag: "FollowLink"; readonly linkHash: string; readonly now: number }
  | {
      readonly _tag: "Resend"
      readonly otpHash: string
      readonly linkHash: string
      readonly now: number
    }
  | { readonly _tag: "Check"; readonly validationKeyHash: string; readonly now: number }
  | {
      readonly _tag: "Start"
      readonly validationKeyHash: string
      readonly customerNo: string
      readonly now: number
    }
  | { readonly _tag: "Step1"; readonly validationKeyHash: string; readonly now: number }
  | { readonly _tag: "Step2"; readonly validationKeyHash: string; readonly now: number }
  | { readonly _tag: "PaymentCheck"; readonly validationKeyHash: string; readonly now: number }

export type Outcome =
  | { readonly _tag: "Verified" }
  | { readonly _tag: "Resent" }
  | { readonly _tag: "Checked" }
  /** `created` is false when `start` was repeated and returned the existing number. */
  | { readonly _tag: "Started"; readonly customerNo: string; readonly created: boolean }
  /** `first` is true only on the `step1` that activated the account (keys are issued then). */
  | { readonly _tag: "Activated"; readonly customerNo: string; readonly first: boolean }
  | { readonly _tag: "BillingUpdated" }
  | { readonly _tag: "PaymentChecked"; readonly customerNo: string }
  /** `retryAfterMs` for limits that end (resend cooldown and daily limit). */
  | { readonly _tag: "Rejected"; readonly reason: Reason; readonly retryAfterMs?: number }

export interface Decision {
  readonly state: State
  readonly outcome: Outcome
}

const DAY_MS = 86_400_000

/** A fresh registration after `pre-register`: pending, with the first code and link. */
export const initial = (
  input: { readonly otpHash: string; readonly linkHash: string; readonly now: number; readonly mailSent: boolean },
  limits: ProvisioningLimits
): State => ({
  stage: "pending",
  otpHash: input.otpHash,
  otpExpiresAt: input.now + limits.otpTtlSeconds * 1000,
  otpFailures: 0,
  totalFailures: 0,
  linkHash: input.linkHash,
  linkExpiresAt: input.now + limits.linkTtlSeconds * 1000,
  lastSentAt: input.mailSent ? input.now : 0,
  resendCount: 0,
  resendDayStart: input.now,
  validationKeyHash: null,
  validationKeyExpiresAt: 0,
  customerNo: null,
  billingUpdated: false
})

/** Whether the e-mail of a registration in this stage has been verified. */
export const isVerified = (stage: Stage): boolean => stage !== "pending"

const reject = (state: State, reason: Reason, retryAfterMs?: number): Decision => ({
  state,
  outcome: retryAfterMs === undefined ? { _tag: "Rejected", reason } : { _tag: "Rejected", reason, retryAfterMs }
})

const validKey = (state: State, hash: string, now: number): boolean =>
  state.validationKeyHash !== null && state.validationKeyHash === hash && now < state.validationKeyExpiresAt

const verified = (state: State): State => ({
  ...state,
  stage: "verified",
  otpHash: null,
  linkHash: null
})

/** The next state and outcome of one move. Pure and total. */
export const decide = (state: State, move: Move, limits: ProvisioningLimits): Decision => {
  switch (move._tag) {
    case "Verify": {
      // A code is single use: once the address is verified no code, the used one included,
      // verifies again, so a guess after verification is never answered with success.
      if (isVerified(state.stage)) return reject(state, "already-verified")
      if (state.totalFailures >= limits.maxFailuresPerRegistration) return reject(state, "registration-locked")
      if (state.otpHash === null || state.otpFailures >= limits.maxFailuresPerCode)
        // Retry after: when a resend is allowed (the only way to a new code).
        return reject(
          state,
          "code-attempts-exceeded",
          Math.max(1000, state.lastSentAt + limits.resendCooldownSeconds * 1000 - move.now)
        )
      if (move.now >= state.otpExpiresAt) return reject(state, "code-expired")
      if (move.codeHash !== state.otpHash) {
        const next = { ...state, otpFailures: state.otpFailures + 1, totalFailures: state.totalFailures + 1 }
        return reject(next, "wrong-code")
      }
      return { state: verified(state), outcome: { _tag: "Verified" } }
    }
    case "FollowLink": {
      if (state.linkHash === null || state.linkHash !== move.linkHash || move.now >= state.linkExpiresAt)
        return reject(state, "link-invalid")
      if (state.totalFailures >= limits.maxFailuresPerRegistration) return reject(state, "registration-locked")
      return { state: verified(state), outcome: { _tag: "Verified" } }
    }
    case "Resend": {
      if (isVerified(state.stage)) return reject(state, "already-verified")
      if (state.totalFailures >= limits.maxFailuresPerRegistration) return reject(state, "registration-locked")
      const cooldownEnds = state.lastSentAt + limits.resendCooldownSeconds * 1000
      if (state.lastSentAt > 0 && move.now < cooldownEnds)
        return reject(state, "resend-too-soon", cooldownEnds - move.now)
      const newDay = move.now >= state.resendDayStart + DAY_MS
      const count = newDay ? 0 : state.resendCount
      if (count >= limits.maxResendsPerDay)
        return reject(state, "resend-limit", state.resendDayStart + DAY_MS - move.now)
      return {
        state: {
          ...state,
          otpHash: move.otpHash,
          otpExpiresAt: move.now + limits.otpTtlSeconds * 1000,
          // A new code gets its own tries; the registration's total is never reset.
          otpFailures: 0,
          linkHash: move.linkHash,
          linkExpiresAt: move.now + limits.linkTtlSeconds * 1000,
          lastSentAt: move.now,
          resendCount: count + 1,
          resendDayStart: newDay ? move.now : state.resendDayStart
        },
        outcome: { _tag: "Resent" }
      }
    }
    case "Check": {
      if (!isVerified(state.stage)) return reject(state, "not-verified")
      return {
        state: {
          ...state,
          validationKeyHash: move.validationKeyHash,
          validationKeyExpiresAt: move.now + limits.validationKeyTtlSeconds * 1000
        },
        outcome: { _tag: "Checked" }
      }
    }
    case "Start": {
      if (!validKey(state, move.validationKeyHash, move.now)) return reject(state, "validation-key-invalid")
      if (state.customerNo !== null)
        return { state, outcome: { _tag: "Started", customerNo: state.customerNo, created: false } }
      return {
        state: { ...state, stage: "customer", customerNo: move.customerNo },
        outcome: { _tag: "Started", customerNo: move.customerNo, created: true }
      }
    }
    case "Step1": {
      if (!validKey(state, move.validationKeyHash, move.now)) return reject(state, "validation-key-invalid")
      if (state.customerNo === null) return reject(state, "not-started")
      return {
        state: { ...state, stage: "active" },
        outcome: { _tag: "Activated", customerNo: state.customerNo, first: state.stage !== "active" }
      }
    }
    case "Step2": {
      if (!validKey(state, move.validationKeyHash, move.now)) return reject(state, "validation-key-invalid")
      if (state.stage !== "active") return reject(state, "not-active")
      return { state: { ...state, billingUpdated: true }, outcome: { _tag: "BillingUpdated" } }
    }
    case "PaymentCheck": {
      if (!validKey(state, move.validationKeyHash, move.now)) return reject(state, "validation-key-invalid")
      if (state.customerNo === null) return reject(state, "not-started")
      return { state, outcome: { _tag: "PaymentChecked", customerNo: state.customerNo } }
    }
  }
}
