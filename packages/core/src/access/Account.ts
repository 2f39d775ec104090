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
  /**
   * The last 4 characters of the key (its checksum's end), shown to tell keys apart; `null` for
   * a blank slot and for keys made before they were kept.
   */
  readonly last4: string | null
  /** When the current key was made (rotation makes a new one); `null` for keys made before it was kept. */
  readonly createdAt: number | null
  readonly updatedAt: number
}

/**
 * Who a request acts for, once its key checked out. The accounts it may read (its own and linked
 * children) are looked up only by the reads that need them (`Credentials.readableAccounts`).
 */
export interface Principal {
  readonly account: AccountRecord
  readonly key: ApiKeyRecord
  /**
   * Set when the caller is a signed-in portal user's browser session rather than a key
   * (the documents metadata endpoint only: interface 5, rule 1). `key` is then the account key
   * the session acts under (the live key; the test key while the live one is not active), which
   * download tickets are bound to; the activity log records the call without a key mode.
   */
  readonly session?: { readonly userId: string }
}
