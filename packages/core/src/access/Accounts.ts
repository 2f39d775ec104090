/**
 * @module Accounts
 *
 * Operator use cases for customers and their keys. Plaintext keys leave these programs only as
 * `Redacted` values, once, when created or rotated; storage keeps an HMAC.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { AccountRecord, ApiKeyRecord, CancelMode, KeyMode, KeyStatus, RateCard } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import * as Activity from "./Activity.js"
import * as ApiKey from "./ApiKey.js"
import * as ClientIp from "./ClientIp.js"
import * as Sessions from "./Sessions.js"
import { NotAllowed, RecentAuthRequired, type Viewer } from "./User.js"
import { UserStore } from "./UserStore.js"
import { decimalNumber, Entropy, DuplicateKey, Transactor } from "../shared/index.js"
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
const customerNumber = decimalNumber(7)

const retryDuplicates = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(Effect.retry({ times: 8, while: (e) => e instanceof DuplicateKey }))

const issueKey = Effect.fn("Accounts.issueKey")(function* (customerNo: string, mode: KeyMode, generation: number) {
  return yield* ApiKey.issue(customerNo, mode, generation, yield* Clock.currentTimeMillis)
})

/** One try of {@link createAccount}, in its transaction: a fresh customer number, the account and its keys. */
const insertNewAccount = Effect.fnUntraced(function* (
  store: Context.Tag.Service<AccountStore>,
  input: { readonly name: string },
  now: number
) {
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

/** Creates a customer with an active live key and an active test key. */
export const createAccount = Effect.fn("Accounts.createAccount")(function* (input: { readonly name: string }) {
  const store = yield* AccountStore
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  return yield* retryDuplicates(tx.withTransaction(insertNewAccount(store, input, now)))
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

/** One key slot as the portal shows it; nothing in it is secret. */
export interface KeySlot {
  readonly mode: KeyMode
  /** `blank` when the slot holds no key. */
  readonly status: KeyStatus
  /** The last 4 characters of the current key; `null` for a blank slot or a key made before they were kept. */
  readonly last4: string | null
  /** When the current key was made; `null` when unknown (blank, or made before it was kept). */
  readonly createdAt: number | null
  /**
   * The latest call made with the current key that the activity log still holds (30 days), the
   * refused ones included; `null` when none.
   */
  readonly lastUsedAt: number | null
}

/** The slot order of {@link keySlots}: production first. */
const slotModes: ReadonlyArray<KeyMode> = ["live", "test"]

/** One slot of {@link keySlots}: the key of `mode` among the account's `keys`. */
const keySlot = Effect.fnUntraced(function* (customerNo: string, keys: ReadonlyArray<ApiKeyRecord>, mode: KeyMode) {
  const key = keys.find((k) => k.mode === mode)
  if (key === undefined || key.status === "blank") {
    return { mode, status: "blank", last4: null, createdAt: null, lastUsedAt: null } satisfies KeySlot
  }
  const lastUsedAt = yield* Activity.lastUsed(customerNo, mode, key.createdAt)
  return { mode, status: key.status, last4: key.last4, createdAt: key.createdAt, lastUsedAt } satisfies KeySlot
})

/**
 * The account's two key slots, production (`live`) then test, each with its status, the last
 * characters and creation time of its key, and when the key was last used (from the activity
 * log). A slot never filled is `blank`.
 */
export const keySlots = Effect.fn("Accounts.keySlots")(function* (customerNo: string) {
  yield* requireAccount(customerNo)
  const keys = yield* Effect.flatMap(AccountStore, (s) => s.listKeys(customerNo))
  return yield* Effect.forEach(slotModes, (mode) => keySlot(customerNo, keys, mode))
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

/** Allowlist entries that are not an IP address or CIDR (the rule of `account set --allow-ip`). */
export class InvalidAllowlist extends Schema.TaggedError<InvalidAllowlist>()("InvalidAllowlist", {
  entries: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/** The most entries an allowlist may hold (a longer one is a mistake, and every request checks it). */
export const MAX_ALLOWLIST = 100

/**
 * Reads an allowlist as a person types it: one address or CIDR per line (commas and blanks also
 * separate), empty lines dropped, duplicates kept once. `invalid` lists what is neither an IP
 * address nor a CIDR by `ClientIp.parseCidr`, the rule every check of the allowlist uses.
 */
export const parseIpAllowlist = (
  text: string
): { readonly entries: ReadonlyArray<string>; readonly invalid: ReadonlyArray<string> } => {
  const tokens = text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter((t) => t !== "")
  const entries = [...new Set(tokens)]
  return { entries, invalid: entries.filter((e) => Option.isNone(ClientIp.parseCidr(e))) }
}

/**
 * The viewer's account, if the viewer is an owner of it as stored now (a role changed since the
 * session began counts), else {@link NotAllowed}.
 */
const requireOwner = Effect.fnUntraced(function* (viewer: Viewer, action: string) {
  const user = yield* Effect.flatMap(UserStore, (s) => s.findUser(viewer.customerNo, viewer.userId))
  if (Option.isNone(user) || user.value.role !== "owner")
    return yield* new NotAllowed({ reason: "not-owner", message: `Only an owner of the account can ${action}.` })
})

/**
 * Regenerates a key of the viewer's account (the portal's "Regenerate"): owners only, with the
 * password entered in the last 10 minutes (`Sessions.isRecent`). The new key is returned once;
 * the old key and every download link issued under it stop working at once ({@link rotateKey}).
 */
export const regenerateKey = Effect.fn("Accounts.regenerateKey")(function* (viewer: Viewer, mode: KeyMode) {
  yield* requireOwner(viewer, "regenerate keys")
  if (!Sessions.isRecent(viewer, yield* Clock.currentTimeMillis)) return yield* new RecentAuthRequired()
  // Eight colliding keys in a row is not a state a person can act on: a defect.
  return yield* rotateKey(viewer.customerNo, mode).pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))
})

/** Disables or enables a key of the viewer's account: owners only ({@link setKeyStatus}). */
export const changeKeyStatus = Effect.fn("Accounts.changeKeyStatus")(function* (
  viewer: Viewer,
  mode: KeyMode,
  status: "active" | "disabled"
) {
  yield* requireOwner(viewer, "disable or enable keys")
  return yield* setKeyStatus(viewer.customerNo, mode, status).pipe(
    Effect.catchTag("DuplicateKey", (e) => Effect.die(e))
  )
})

/**
 * Replaces the viewer's account's IP allowlist: owners only; every entry must be an IP address
 * or CIDR ({@link parseIpAllowlist}'s rule), at most {@link MAX_ALLOWLIST}. An empty list lets
 * every address in.
 */
export const setIpAllowlist = Effect.fn("Accounts.setIpAllowlist")(function* (
  viewer: Viewer,
  entries: ReadonlyArray<string>
) {
  yield* requireOwner(viewer, "change the IP allowlist")
  const invalid = entries.filter((e) => Option.isNone(ClientIp.parseCidr(e)))
  if (invalid.length > 0)
    return yield* new InvalidAllowlist({
      entries: invalid,
      message: `Not an IP address or CIDR: ${invalid.join(", ")}`
    })
  if (entries.length > MAX_ALLOWLIST)
    return yield* new InvalidAllowlist({ entries: [], message: `Use at most ${MAX_ALLOWLIST} entries.` })
  return yield* updateAccount(viewer.customerNo, { ipAllowlist: [...entries] })
})
