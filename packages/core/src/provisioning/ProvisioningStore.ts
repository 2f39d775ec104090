/**
 * @module ProvisioningStore
 *
 * Registrations of account provisioning as stored: the machine's `Registration.State`
 * plus who registered and what they entered. Secrets (code, link token, validation key) are
 * stored only as HMACs; the password only as its scrypt hash. `update` is optimistic (a version
 * check), so concurrent guesses against one registration count exactly.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { StorageError } from "../shared/index.js"
import type * as Registration from "./Registration.js"

/** What step1 and step2 entered. */
export interface Profile {
  readonly firstName?: string
  readonly lastName?: string
  readonly customerName?: string
  readonly localAddr1?: string
  readonly localCity?: string
  readonly localState?: string
  readonly localZip?: string
  readonly localPhone?: string
  readonly billingAddr2?: string
  readonly billingCity?: string
  readonly billingState?: string
  readonly billingZip?: string
}

export interface RegistrationRecord {
  /** The `wait_idx`: 128 random bits, so it cannot be guessed or enumerated. */
  readonly idx: string
  /** As normalised by `BusinessEmail.normalise`. */
  readonly email: string
  readonly emailDomain: string
  readonly passwordHash: string
  /** Id of the KeyRing `otp` secret the code hash was made with. */
  readonly otpSecretId: string
  readonly state: Registration.State
  /** `failed` when the last verification e-mail could not be sent (a resend may follow at once). */
  readonly mailStatus: "sent" | "failed"
  readonly profile: Profile
  readonly createdAt: number
  readonly updatedAt: number
  /** Bumped by every update. */
  readonly version: number
}

export interface ProvisioningStoreShape {
  readonly insert: (record: RegistrationRecord) => Effect.Effect<void, StorageError>
  readonly find: (idx: string) => Effect.Effect<Option.Option<RegistrationRecord>, StorageError>
  readonly findByLinkHash: (hash: string) => Effect.Effect<Option.Option<RegistrationRecord>, StorageError>
  readonly findByValidationKeyHash: (hash: string) => Effect.Effect<Option.Option<RegistrationRecord>, StorageError>
  /** The registration that made the customer record, if any (one account per e-mail address). */
  readonly findByCustomerNo: (customerNo: string) => Effect.Effect<Option.Option<RegistrationRecord>, StorageError>
  /** Whether another registration of this address (compared without regard to case) already has a customer record. */
  readonly emailHasCustomer: (email: string) => Effect.Effect<boolean, StorageError>
  /**
   * Writes `record` (with `version` already incremented) if the stored version is still
   * `record.version - 1`; false when another writer got there first.
   */
  readonly update: (record: RegistrationRecord) => Effect.Effect<boolean, StorageError>
}

export class ProvisioningStore extends Context.Tag("@waybill/core/ProvisioningStore")<
  ProvisioningStore,
  ProvisioningStoreShape
>() {}
