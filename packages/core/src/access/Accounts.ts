/**
 * @module Accounts
 *
 * Operator use cases for customers and their keys. Plaintext keys leave these programs only as
 * `Redacted` values, once, when created or rotated; storage keeps an HMAC.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { AccountRecord, ApiKeyRecord, CancelMode, KeyMode, RateCard } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import * as ApiKey from "./ApiKey.js"
import { digits, Entropy, uniformInt, DuplicateKey, Transactor } from "../shared/index.js"
import type { KeyRing } from "../shared/index.js"

/** The customer number asked for does not exist. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  customerNo: Schema.String
}) {}

/** A new account with both keys, shown once. */
export interface CreatedAccount {
  readonly account: AccountRecord
  readonly liveKey: Redacted.Redacted<string>
  readonly testKey: Redacted.Redacted<string>
}

/** 7 digits, never starting with 0 (clients that store it as a number keep it intact). */
const customerNumber = Effect.zipWith(uniformInt(9), digits(6), (first, rest) => `${first + 1}${rest}`)

const retryDuplicates = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.retry({ times: 8, while: (e) => e instanceof DuplicateKey }))

const issueKey = Effect.fn("Accounts.issueKey")(function* (customerNo: string, mode: KeyMode, generation: number) {
  const now = yield* Clock.currentTimeMillis
  const key = yield* ApiKey.generate(mode)
  const record: ApiKeyRecord = {
    id: `key_${customerNo}_${mode}`,
    customerNo,
    mode,
    status: "active",
    generation,
    hash: yield* ApiKey.hash(key),
    hint: ApiKey.hint(Redacted.value(key)),
    updatedAt: now
  }
  return { key, record }
})

/** Creates a customer with an active live key and an active test key. */
export const createAccount = Effect.fn("Accounts.createAccount")(function* (input: { readonly name: string }) {
  const store = yield* AccountStore
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  return yield* retryDuplicates(
    tx.withTransaction(
      Effect.gen(function* () {
        const account: AccountRecord = {
          customerNo: yield* customerNumber,
          name: input.name.trim().slice(0, 100),
          cancelMode: "local",
          rateCard: null,
          ipAllowlist: [],
          createdAt: now
        }
        yield* store.insertAccount(account)
        const live = yield* issueKey(account.customerNo, "live", 1)
        const test = yield* issueKey(account.customerNo, "test", 1)
        yield* store.putKey(live.record)
        yield* store.putKey(test.record)
        return { account, liveKey: live.key, testKey: test.key } satisfies CreatedAccount
      })
    )
  )
})

const requireAccount = (customerNo: string) =>
  Effect.flatMap(AccountStore, (s) => s.findAccount(customerNo)).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.fail(new AccountNotFound({ customerNo })), onSome: Effect.succeed })
    )
  )

const currentKey = (customerNo: string, mode: KeyMode) =>
  Effect.flatMap(AccountStore, (s) => s.findKey(customerNo, mode))

/**
 * Replaces the key of a mode with a new one and bumps its generation, so the old key and
 * everything issued under it (download tickets) stop working at once.
 */
export const rotateKey = Effect.fn("Accounts.rotateKey")(function* (customerNo: string, mode: KeyMode) {
  yield* requireAccount(customerNo)
  const previous = yield* currentKey(customerNo, mode)
  const generation = Option.match(previous, { onNone: () => 1, onSome: (k) => k.generation + 1 })
  const issued = yield* retryDuplicates(
    issueKey(customerNo, mode, generation).pipe(
      Effect.tap((i) => Effect.flatMap(AccountStore, (s) => s.putKey(i.record)))
    )
  )
  return { key: issued.key, record: issued.record }
})

/** Sets a key's status. Disabling bumps the generation: re-enabling does not revive old tickets. */
export const setKeyStatus = Effect.fn("Accounts.setKeyStatus")(function* (
  customerNo: string,
  mode: KeyMode,
  status: "active" | "disabled"
) {
  yield* requireAccount(customerNo)
  const previous = yield* currentKey(customerNo, mode)
  if (Option.isNone(previous) || previous.value.status === "blank") return yield* new AccountNotFound({ customerNo })
  const now = yield* Clock.currentTimeMillis
  const record: ApiKeyRecord = {
    ...previous.value,
    status,
    generation:
      status === "disabled" && previous.value.status !== "disabled"
        ? previous.value.generation + 1
        : previous.value.generation,
    updatedAt: now
  }
  yield* Effect.flatMap(AccountStore, (s) => s.putKey(record))
  return record
})

/** The account with its key slots (hints and statuses only; plaintext is never stored). */
export const showAccount = Effect.fn("Accounts.showAccount")(function* (customerNo: string) {
  const account = yield* requireAccount(customerNo)
  const keys = yield* Effect.flatMap(AccountStore, (s) => s.listKeys(customerNo))
  const children = yield* Effect.flatMap(AccountStore, (s) => s.linkedChildren(customerNo))
  return { account, keys, linkedAccounts: children }
})

export type AccountsRequirements = AccountStore | Transactor | Entropy | KeyRing

/** Account settings an operator may change. */
export interface AccountSettings {
  readonly cancelMode?: CancelMode
  readonly rateCard?: RateCard | null
  readonly ipAllowlist?: ReadonlyArray<string>
}

/** Changes an account's settings (cancel mode, negotiated rates, IP allowlist). */
export const updateAccount = Effect.fn("Accounts.updateAccount")(function* (
  customerNo: string,
  settings: AccountSettings
) {
  const account = yield* requireAccount(customerNo)
  const updated: AccountRecord = {
    ...account,
    ...(settings.cancelMode === undefined ? {} : { cancelMode: settings.cancelMode }),
    ...(settings.rateCard === undefined ? {} : { rateCard: settings.rateCard }),
    ...(settings.ipAllowlist === undefined ? {} : { ipAllowlist: settings.ipAllowlist })
  }
  yield* Effect.flatMap(AccountStore, (s) => s.updateAccount(updated))
  return updated
})

/** Lets `parent` read `child`'s orders (documents, tracking); both must exist. */
export const linkAccounts = Effect.fn("Accounts.linkAccounts")(function* (parent: string, child: string) {
  yield* requireAccount(parent)
  yield* requireAccount(child)
  yield* Effect.flatMap(AccountStore, (s) => s.linkAccount(parent, child))
})
