/**
 * @module AccountStore
 *
 * Customers, their API keys (hashed) and linked accounts. A customer has at most one key per
 * mode (`live`, `test`); `putKey` replaces the slot.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { AccountRecord, ApiKeyRecord, KeyMode } from "./Account.js"
import type { DuplicateKey, StorageError } from "../shared/index.js"

export interface AccountStoreShape {
  /** Fails with `DuplicateKey({ what: "customer_no" })` when the number is taken. */
  readonly insertAccount: (account: AccountRecord) => Effect.Effect<void, DuplicateKey | StorageError>
  readonly findAccount: (customerNo: string) => Effect.Effect<Option.Option<AccountRecord>, StorageError>
  readonly updateAccount: (account: AccountRecord) => Effect.Effect<void, StorageError>
  /** Inserts or replaces the key slot (customerNo, mode). A hash already used elsewhere is `DuplicateKey({ what: "key" })`. */
  readonly putKey: (key: ApiKeyRecord) => Effect.Effect<void, DuplicateKey | StorageError>
  readonly findKeyByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  /**
   * The key with that hash and its account, in one lookup: what every authenticated request
   * needs first, so adapters should answer it with a single indexed query.
   */
  readonly findKeyWithAccount: (
    hash: string
  ) => Effect.Effect<Option.Option<{ readonly key: ApiKeyRecord; readonly account: AccountRecord }>, StorageError>
  /**
   * The key in slot (customerNo, mode) and its account, in one lookup: what every download
   * re-checks (the key's status and generation, the account's IP allowlist).
   */
  readonly findSlotWithAccount: (
    customerNo: string,
    mode: KeyMode
  ) => Effect.Effect<Option.Option<{ readonly key: ApiKeyRecord; readonly account: AccountRecord }>, StorageError>
  readonly findKey: (customerNo: string, mode: KeyMode) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageError>
  readonly listKeys: (customerNo: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageError>
  /** Lets `parent` read `child`'s orders. Idempotent. */
  readonly linkAccount: (parent: string, child: string) => Effect.Effect<void, StorageError>
  readonly unlinkAccount: (parent: string, child: string) => Effect.Effect<void, StorageError>
  readonly linkedChildren: (parent: string) => Effect.Effect<ReadonlyArray<string>, StorageError>
}

export class AccountStore extends Context.Tag("@waybill/core/AccountStore")<AccountStore, AccountStoreShape>() {}
