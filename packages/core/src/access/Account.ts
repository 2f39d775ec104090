/**
 * @module Account
 *
 * Customers and their API keys as stored. Only an HMAC of a key is kept; the plaintext is shown
 * once, when the key is created or rotated.
 */
import type { VehicleRates } from "../shared/index.js"

export type KeyMode = "live" | "test"

/** `active` keys authenticate; `disabled` and `blank` (a slot with no key) never do. */
export type KeyStatus = "active" | "disabled" | "blank"

export type CancelMode = "local" | "provider"

/**
 * Negotiated rates: per-vehicle overrides of the list tariff and/or a percentage discount,
 * never below `floor` (absolute USD per shipment).
 */
export interface RateCard {
  readonly discountPercent?: number
  readonly vehicles?: Readonly<Record<string, Partial<VehicleRates>>>
  readonly floor?: number
}

export interface AccountRecord {
  readonly customerNo: string
  readonly name: string
  readonly cancelMode: CancelMode
  readonly rateCard: RateCard | null
  /** CIDRs; empty means any address. */
  readonly ipAllowlist: ReadonlyArray<string>
  readonly createdAt: number
}

export interface ApiKeyRecord {
  readonly id: string
  readonly customerNo: string
  readonly mode: KeyMode
  readonly status: KeyStatus
  /** Bumped on rotate and disable; things issued under an older generation stay dead. */
  readonly generation: number
  /** Hex HMAC-SHA-256 of the key under the KeyRing's `api-key` secret; "" for a blank slot. */
  readonly hash: string
  /** The first characters of the key (`wb_live_AbC1`), safe to show and log. */
  readonly hint: string
  readonly updatedAt: number
}

/**
 * Who a request acts for, once its key checked out. The accounts it may read (its own and linked
 * children) are looked up only by the reads that need them (`Credentials.readableAccounts`).
 */
export interface Principal {
  readonly account: AccountRecord
  readonly key: ApiKeyRecord
}
