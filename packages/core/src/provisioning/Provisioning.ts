/**
 * @module Provisioning
 *
 * The account-provisioning use cases (interface 2.6, 3, 4.5; DECISIONS.md "Account
 * provisioning"): each action loads a registration, asks the pure machine in `Registration`
 * what happens, and stores the result with an optimistic version check (retrying on a lost
 * race), so 50 concurrent guesses against one registration count exactly 50.
 *
 * Secrets: the one-time code, the link token and the validation key exist in clear only in
 * the e-mail or the answer that hands them out; storage keeps HMACs under the KeyRing's `otp`
 * secret, the password only as the `PasswordHasher`'s hash. Nothing here logs any of them.
 *
 * `Mailer` and `PasswordHasher` are looked up as optional services: a host that provides
 * neither has provisioning switched off ({@link ProvisioningDisabled}) and still compiles.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { AccountRecord } from "../access/index.js"
import {
  AccountNotFound,
  AccountStore,
  ApiKey,
  ClientIp,
  PasswordHasher,
  PasswordPolicy,
  RateLimiter,
  UserStore
} from "../access/index.js"
import * as BusinessEmail from "./BusinessEmail.js"
import {
  type ProvisioningLimits,
  provisioningDefaults,
  type RateLimitRule,
  WaybillConfig,
  digits,
  Entropy,
  decimalNumber,
  DuplicateKey,
  type StorageError,
  toHex,
  utf8,
  KeyRing,
  type KeySecret,
  Ulid,
  Mailer,
  type MailerShape,
  Transactor
} from "../shared/index.js"
import {
  type Profile,
  ProvisioningStore,
  type ProvisioningStoreShape,
  type RegistrationRecord
} from "./ProvisioningStore.js"
import * as Registration from "./Registration.js"

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The host provides no `Mailer` or no `PasswordHasher`: provisioning is off (HTTP 404). */
export class ProvisioningDisabled extends Schema.TaggedError<ProvisioningDisabled>()("ProvisioningDisabled", {}) {}

/** Missing or unusable form fields (HTTP 400); `message` names them. */
export class ProvisioningInvalid extends Schema.TaggedError<ProvisioningInvalid>()("ProvisioningInvalid", {
  message: Schema.String
}) {}

/** No registration matches `idx` (and `email_address`). Says nothing about whether an address exists. */
export class RegistrationNotFound extends Schema.TaggedError<RegistrationNotFound>()("RegistrationNotFound", {}) {}

/** The machine refused the move; see `Registration.Reason`. */
export class ProvisioningRejected extends Schema.TaggedError<ProvisioningRejected>()("ProvisioningRejected", {
  reason: Schema.Literal(
    "wrong-code",
    "code-expired",
    "code-attempts-exceeded",
    "registration-locked",
    "link-invalid",
    "already-verified",
    "not-verified",
    "resend-too-soon",
    "resend-limit",
    "validation-key-invalid",
    "not-started",
    "not-active"
  ),
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

/**
 * Over a provisioning rate limit (per address, per domain, or the global e-mail cap): HTTP 429.
 * `refused` says what the limit refused, so the answer can name it: a new registration
 * (`pre-register`), or another verification e-mail (`pre-register-resend`, which spends the
 * same per-address budget but registers nothing).
 */
export class ProvisioningRateLimited extends Schema.TaggedError<ProvisioningRateLimited>()("ProvisioningRateLimited", {
  retryAfterSeconds: Schema.Number,
  refused: Schema.Literal("registration", "verification-email")
}) {}

/** The verified address already has a customer record (HTTP 409); only its verified owner learns this. */
export class AlreadyRegistered extends Schema.TaggedError<AlreadyRegistered>()("AlreadyRegistered", {}) {}

/** The verification e-mail could not be sent (HTTP 503); the registration keeps, resend works. */
export class VerificationMailFailed extends Schema.TaggedError<VerificationMailFailed>()(
  "VerificationMailFailed",
  {}
) {}

export type ProvisioningRequirements =
  | ProvisioningStore
  | UserStore
  | PaymentEnablementStore
  | AccountStore
  | Transactor
  | Entropy
  | KeyRing
  | WaybillConfig
  | RateLimiter

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** Unpadded base64url. */
export const base64url = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]!
    if (i + 1 < bytes.length) out += B64URL[(n >> 6) & 63]!
    if (i + 2 < bytes.length) out += B64URL[n & 63]!
  }
  return out
}

const randomToken = (bytes: number) => Effect.flatMap(Entropy, (e) => Effect.map(e.bytes(bytes), base64url))

const limitsOf = Effect.map(WaybillConfig, (c): ProvisioningLimits => c.provisioning ?? provisioningDefaults)

/** HMAC of a labelled secret under one `otp` secret, hex. Labels keep codes, links and keys apart. */
const digest = (secret: KeySecret, label: "code" | "link" | "vkey", value: string) =>
  Effect.flatMap(KeyRing, (ring) => Effect.map(ring.hmac(secret, utf8(`${label}:${value}`)), toHex))

const currentSecret = Effect.flatMap(KeyRing, (ring) => ring.current("otp"))

const secretFor = (id: string) =>
  Effect.flatMap(KeyRing, (ring) =>
    Effect.flatMap(ring.byId("otp", id), Option.match({ onNone: () => ring.current("otp"), onSome: Effect.succeed }))
  )

/** The code's hash is bound to its registration, so a code is worthless against another idx. */
const codeHash = (secret: KeySecret, idx: string, code: string) => digest(secret, "code", `${idx}:${code}`)

const hashLink = (token: string) => Effect.flatMap(currentSecret, (s) => digest(s, "link", token))
const hashValidationKey = (key: string) => Effect.flatMap(currentSecret, (s) => digest(s, "vkey", key))

const hit = (bucket: string, rule: RateLimitRule, refused: ProvisioningRateLimited["refused"]) =>
  Effect.flatMap(RateLimiter, (limiter) => limiter.hit(bucket, rule.requests, rule.windowSeconds * 1000)).pipe(
    Effect.flatMap((quota) =>
      quota.allowed
        ? Effect.void
        : Effect.fail(
            new ProvisioningRateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(quota.resetMs / 1000)), refused })
          )
    )
  )

/** The hourly and daily budgets of {@link limitClient} for a known client address. */
const limitAddress = Effect.fnUntraced(function* (
  address: ClientIp.Address,
  refused: ProvisioningRateLimited["refused"]
) {
  const limits = yield* limitsOf
  const ip = ClientIp.blockKey(address)
  yield* hit(`prov:ip:h:${ip}`, limits.perIpHour, refused)
  yield* hit(`prov:ip:d:${ip}`, limits.perIpDay, refused)
})

/**
 * The per-client-address limits (DECISIONS.md: 5 an hour, 20 a day; IPv6 per /64): one budget
 * of verification e-mails a client address can make the server send, spent alike by
 * `pre-register` and `pre-register-resend` (each sends one e-mail), in the same `prov:ip:h:` /
 * `prov:ip:d:` buckets. Without a known client address only the other limits apply.
 */
const limitClient = (client: Option.Option<ClientIp.Address>, refused: ProvisioningRateLimited["refused"]) =>
  Option.match(client, {
    onNone: () => Effect.void,
    onSome: (address) => limitAddress(address, refused)
  })

const rejected = (reason: Registration.Reason, retryAfterMs?: number) =>
  new ProvisioningRejected(
    retryAfterMs === undefined ? { reason } : { reason, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) }
  )

/** `verify_expires`: ISO 8601 UTC, second precision (`2026-11-21T21:10:00Z`). */
export const isoUtc = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

const optionalServices = Effect.all({
  mailer: Effect.serviceOption(Mailer),
  hasher: Effect.serviceOption(PasswordHasher)
})

/** Whether the host switched provisioning on (provides a `Mailer` and a `PasswordHasher`). */
export const enabled: Effect.Effect<boolean> = Effect.map(
  optionalServices,
  (s) => Option.isSome(s.mailer) && Option.isSome(s.hasher)
)

class LostRace extends Schema.TaggedError<LostRace>()("LostRace", {}) {}

/** One try of {@link advance}, in its transaction: a lost version race fails with `LostRace`. */
const advanceRound = Effect.fnUntraced(function* <E, R>(
  store: ProvisioningStoreShape,
  limits: ProvisioningLimits,
  load: Effect.Effect<Option.Option<RegistrationRecord>, StorageError, ProvisioningStore>,
  move: (record: RegistrationRecord, now: number) => Effect.Effect<Registration.Move, never, KeyRing | Entropy>,
  beforeCommit: (record: RegistrationRecord, outcome: Registration.Outcome) => Effect.Effect<RegistrationRecord, E, R>
) {
  const found = yield* load
  if (Option.isNone(found)) return yield* new RegistrationNotFound()
  const record = found.value
  const now = yield* Clock.currentTimeMillis
  const decision = Registration.decide(record.state, yield* move(record, now), limits)
  let next: RegistrationRecord = decision.state === record.state ? record : { ...record, state: decision.state }
  if (decision.outcome._tag !== "Rejected") next = yield* beforeCommit(next, decision.outcome)
  if (next !== record) {
    next = { ...next, updatedAt: now, version: record.version + 1 }
    if (!(yield* store.update(next))) return yield* new LostRace()
  }
  return { record: next, outcome: decision.outcome }
})

/** The transaction of {@link advance}, tried again while it loses the version race. */
const advanceRetrying = Effect.fnUntraced(function* <E, R>(
  load: Effect.Effect<Option.Option<RegistrationRecord>, StorageError, ProvisioningStore>,
  move: (record: RegistrationRecord, now: number) => Effect.Effect<Registration.Move, never, KeyRing | Entropy>,
  beforeCommit: (record: RegistrationRecord, outcome: Registration.Outcome) => Effect.Effect<RegistrationRecord, E, R>
) {
  const store = yield* ProvisioningStore
  const tx = yield* Transactor
  const limits = yield* limitsOf
  return yield* tx
    .withTransaction(advanceRound(store, limits, load, move, beforeCommit))
    .pipe(Effect.retry({ times: 100, while: (e) => e instanceof LostRace }))
})

/**
 * Applies one move to the registration `load` finds, in a transaction, storing the new state
 * if it changed. `beforeCommit` runs in the same transaction for accepted moves (creating the
 * account on `start`), so a lost version race rolls it back too; then the whole step retries.
 */
const advance = <E = never, R = never>(
  load: Effect.Effect<Option.Option<RegistrationRecord>, StorageError, ProvisioningStore>,
  move: (record: RegistrationRecord, now: number) => Effect.Effect<Registration.Move, never, KeyRing | Entropy>,
  beforeCommit: (
    record: RegistrationRecord,
    outcome: Registration.Outcome
  ) => Effect.Effect<RegistrationRecord, E, R> = (r) => Effect.succeed(r)
) =>
  advanceRetrying(load, move, beforeCommit).pipe(
    Effect.catchTag("LostRace", () => Effect.dieMessage("Provisioning: registration kept changing")),
    Effect.flatMap(({ outcome, record }) =>
      outcome._tag === "Rejected"
        ? Effect.fail(rejected(outcome.reason, outcome.retryAfterMs))
        : Effect.succeed({ outcome, record })
    )
  )

const sendVerification = Effect.fnUntraced(function* (input: {
  readonly mailer: MailerShape
  readonly to: string
  readonly code: string
  readonly token: string
  readonly linkBase: string
  readonly state: Registration.State
}) {
  const limits = yield* limitsOf
  yield* hit("prov:mail", limits.mailsPerHour, "verification-email")
  return yield* input.mailer.send({
    _tag: "Verification",
    to: input.to,
    code: Redacted.make(input.code),
    link: Redacted.make(`${input.linkBase}?token=${encodeURIComponent(input.token)}`),
    codeExpiresAt: input.state.otpExpiresAt,
    linkExpiresAt: input.state.linkExpiresAt
  })
})

const requireField = (fields: Readonly<Record<string, string | undefined>>, names: ReadonlyArray<string>) => {
  const missing = names.filter((n) => (fields[n] ?? "").trim() === "")
  return missing.length === 0
    ? Effect.void
    : Effect.fail(new ProvisioningInvalid({ message: `Missing required field(s): ${missing.join(", ")}.` }))
}

const clean = (value: string | undefined, max = 100): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim().replace(/\s+/g, " ").slice(0, max)

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

/** What `pre-register` answers (interface 4.5). */
export interface PreRegistered {
  readonly waitIdx: string
  readonly verifyExpires: string
}

/**
 * `pre-register`: checks the address (business only) and the password, counts the limits,
 * stores a pending registration and sends the code and link. The answer is the same whether or
 * not the address already has an account (one more registration is made either way), and the
 * same whether or not the e-mail went out (a failure is recorded; resend works at once).
 */
export const preRegister = Effect.fn("Provisioning.preRegister")(function* (input: {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly client: Option.Option<ClientIp.Address>
  /** Absolute URL of the link-confirm page, without query. */
  readonly linkBase: string
}) {
  const services = yield* optionalServices
  if (Option.isNone(services.mailer) || Option.isNone(services.hasher)) return yield* new ProvisioningDisabled()
  const limits = yield* limitsOf
  if (input.email.trim() === "") return yield* new ProvisioningInvalid({ message: "email_address is required." })
  const checked = BusinessEmail.check(input.email, limits.allowDomains)
  if (checked._tag === "Refused")
    return yield* new ProvisioningInvalid({
      message:
        checked.problem === "free-mail"
          ? "A business e-mail address is required; free-mail and disposable addresses are not accepted."
          : "email_address is not a valid e-mail address."
    })
  const email = checked.email
  const weak = PasswordPolicy.check(Redacted.value(input.password), { email: email.address })
  if (weak !== undefined) return yield* new ProvisioningInvalid({ message: PasswordPolicy.describe(weak) })

  yield* limitClient(input.client, "registration")
  // Per registrable domain, so wildcard subdomains (a1.acme.com, a2.acme.com) share one budget.
  yield* hit(`prov:domain:${BusinessEmail.registrableDomain(email.domain)}`, limits.perDomainDay, "registration")

  const passwordHash = yield* services.hasher.value.hash(input.password)
  const idx = `wr_${yield* randomToken(16)}`
  const code = yield* digits(6)
  const token = yield* randomToken(32)
  const secret = yield* currentSecret
  const now = yield* Clock.currentTimeMillis
  const state = Registration.initial(
    { otpHash: yield* codeHash(secret, idx, code), linkHash: yield* hashLink(token), now, mailSent: true },
    limits
  )
  const record: RegistrationRecord = {
    idx,
    email: email.address,
    emailDomain: email.domain,
    passwordHash,
    otpSecretId: secret.id,
    state,
    mailStatus: "sent",
    profile: {},
    createdAt: now,
    updatedAt: now,
    version: 1
  }
  const store = yield* ProvisioningStore
  yield* store.insert(record)
  yield* sendVerification({
    mailer: services.mailer.value,
    to: email.address,
    code,
    token,
    linkBase: input.linkBase,
    state
  }).pipe(
    Effect.catchAll((e) =>
      Effect.logWarning("provisioning: verification e-mail not sent", idx, e._tag).pipe(
        Effect.zipRight(
          store.update({
            ...record,
            state: { ...state, lastSentAt: 0 },
            mailStatus: "failed",
            version: record.version + 1
          })
        )
      )
    )
  )
  return { waitIdx: idx, verifyExpires: isoUtc(state.otpExpiresAt) } satisfies PreRegistered
})

/**
 * The registration `idx` names, if `emailAddress` (when given) is its address in any case: both
 * sides are compared by `BusinessEmail.addressKey`, so rows stored as typed, in any case and by
 * any version, match.
 */
const byIdxAndEmail = (idx: string, emailAddress?: string) =>
  Effect.flatMap(ProvisioningStore, (store) =>
    Effect.map(store.find(idx.trim()), (found) => {
      if (emailAddress === undefined) return found
      const email = BusinessEmail.normalise(emailAddress)
      return Option.filter(found, (r) => email !== undefined && BusinessEmail.addressKey(r.email) === email.key)
    })
  )

/**
 * Whether another registration of `email` (in any case) already has a customer record. Rows
 * keep the address as typed, so the store is asked with the address's key, the form every
 * comparison uses; a store that compares case-insensitively finds every row by it. A store that
 * compares the column exactly finds rows typed in lowercase by the key, and rows typed exactly
 * like this one by the second question, so no address that matched before goes unmatched.
 */
const emailHasCustomer = Effect.fnUntraced(function* (store: ProvisioningStoreShape, email: string) {
  const key = BusinessEmail.addressKey(email)
  if (yield* store.emailHasCustomer(key)) return true
  return email !== key && (yield* store.emailHasCustomer(email))
})

/** `pre-register-verify`: a wrong code counts against the code (5) and the registration (10). */
export const verify = Effect.fn("Provisioning.verify")(function* (input: {
  readonly idx: string
  readonly email: string
  readonly code: Redacted.Redacted<string>
}) {
  const code = Redacted.value(input.code).trim()
  yield* advance(byIdxAndEmail(input.idx, input.email), (record, now) =>
    Effect.map(
      Effect.flatMap(secretFor(record.otpSecretId), (s) => codeHash(s, record.idx, code)),
      (hash): Registration.Move => ({ _tag: "Verify", codeHash: hash, now })
    )
  )
})

/** The registration a link token points at, if the token is still good (for the confirm page). */
export const linkIsValid = Effect.fn("Provisioning.linkIsValid")(function* (token: string) {
  const store = yield* ProvisioningStore
  const hash = yield* hashLink(token)
  const now = yield* Clock.currentTimeMillis
  const found = yield* store.findByLinkHash(hash)
  return Option.isSome(found) && found.value.state.linkHash === hash && now < found.value.state.linkExpiresAt
})

/** The verification link, confirmed by POST: verifies like the code, once. */
export const followLink = Effect.fn("Provisioning.followLink")(function* (token: string) {
  const hash = yield* hashLink(token)
  yield* advance(
    Effect.flatMap(ProvisioningStore, (s) => s.findByLinkHash(hash)),
    (_, now) => Effect.succeed<Registration.Move>({ _tag: "FollowLink", linkHash: hash, now })
  ).pipe(Effect.catchTag("RegistrationNotFound", () => Effect.fail(rejected("link-invalid"))))
})

/**
 * `pre-register-resend`: a new code and link (the old ones die), the window refreshed; 60 s
 * apart (unless the last e-mail failed), at most 5 a day; the failure count is kept.
 *
 * Each accepted resend also spends the client address's budget ({@link limitClient}), the one
 * `pre-register` spends: otherwise one client could make the server mail every registration it
 * knows an `idx` of, bounded only per registration and globally. The limit is counted once the
 * registration accepted the resend and in the same transaction, so a resend refused for its
 * cooldown costs the client nothing, and one refused by the limit (429) changes nothing: the old
 * code and link keep working and no e-mail goes out.
 */
export const resend = Effect.fn("Provisioning.resend")(function* (input: {
  readonly idx: string
  readonly linkBase: string
  readonly client: Option.Option<ClientIp.Address>
}) {
  const services = yield* optionalServices
  if (Option.isNone(services.mailer) || Option.isNone(services.hasher)) return yield* new ProvisioningDisabled()
  const code = yield* digits(6)
  const token = yield* randomToken(32)
  const linkHash = yield* hashLink(token)
  const { record } = yield* advance(
    byIdxAndEmail(input.idx),
    (r, now) =>
      Effect.map(
        Effect.flatMap(secretFor(r.otpSecretId), (s) => codeHash(s, r.idx, code)),
        (otpHash): Registration.Move => ({ _tag: "Resend", otpHash, linkHash, now })
      ),
    (r) => Effect.as(limitClient(input.client, "verification-email"), r)
  )
  const sent = yield* sendVerification({
    mailer: services.mailer.value,
    to: record.email,
    code,
    token,
    linkBase: input.linkBase,
    state: record.state
  }).pipe(
    Effect.as(true),
    Effect.catchAll((e) =>
      Effect.logWarning("provisioning: verification e-mail not sent", record.idx, e._tag).pipe(Effect.as(false))
    )
  )
  const store = yield* ProvisioningStore
  if (!sent || record.mailStatus !== "sent") {
    // Record the outcome; a failed send lets the next resend through at once.
    yield* Effect.flatMap(store.find(record.idx), (found) =>
      Option.match(found, {
        onNone: () => Effect.void,
        onSome: (r) =>
          store.update({
            ...r,
            state: sent ? r.state : { ...r.state, lastSentAt: 0 },
            mailStatus: sent ? "sent" : "failed",
            version: r.version + 1
          })
      })
    )
  }
  if (!sent) return yield* new VerificationMailFailed()
  return { verifyExpires: isoUtc(record.state.otpExpiresAt) }
})

/** `pre-register-check`: once verified, mints a validation key (60 min; a newer one replaces it). */
export const check = Effect.fn("Provisioning.check")(function* (input: {
  readonly idx: string
  readonly email: string
}) {
  const key = `vk_${yield* randomToken(32)}`
  const hash = yield* hashValidationKey(key)
  yield* advance(byIdxAndEmail(input.idx, input.email), (_, now) =>
    Effect.succeed<Registration.Move>({ _tag: "Check", validationKeyHash: hash, now })
  )
  return { validationKey: Redacted.make(key) }
})

const byValidationKey = (key: string) =>
  Effect.flatMap(hashValidationKey(key.trim()), (hash) =>
    Effect.map(
      Effect.flatMap(ProvisioningStore, (s) => s.findByValidationKeyHash(hash)),
      (found) => ({ hash, found })
    )
  )

/** Runs a validation-key move; an unknown key is the same answer as an expired or replaced one. */
const withKey = <E = never, R = never>(
  validationKey: string,
  move: (hash: string, now: number) => Registration.Move,
  beforeCommit?: (record: RegistrationRecord, outcome: Registration.Outcome) => Effect.Effect<RegistrationRecord, E, R>
) =>
  Effect.flatMap(byValidationKey(validationKey), ({ found, hash }) =>
    advance(Effect.succeed(found), (_, now) => Effect.succeed(move(hash, now)), beforeCommit)
  ).pipe(
    Effect.catchIf(
      (e): e is RegistrationNotFound => e instanceof RegistrationNotFound,
      () => Effect.fail(rejected("validation-key-invalid"))
    )
  )

/** 7 digits, never starting with 0, like operator-made accounts. */
const customerNumber = decimalNumber(7)

/** What `start` answers. */
export interface Started {
  readonly customerNo: string
  readonly frequentCallerId: string
  readonly hasFirmographics: boolean
}

/**
 * What {@link start} adds in the registration's transaction when the machine accepts a new
 * number: the account and its owner user.
 */
const createRegistered = Effect.fnUntraced(function* (
  accounts: Context.Tag.Service<AccountStore>,
  store: ProvisioningStoreShape,
  record: RegistrationRecord,
  outcome: Registration.Outcome
) {
  if (outcome._tag !== "Started" || !outcome.created) return record
  if (yield* emailHasCustomer(store, record.email)) return yield* new AlreadyRegistered()
  const now = yield* Clock.currentTimeMillis
  const account: AccountRecord = {
    customerNo: outcome.customerNo,
    name: record.emailDomain,
    cancelMode: "local",
    rateCard: null,
    ipAllowlist: [],
    createdAt: now
  }
  yield* accounts.insertAccount(account)
  // The registrant becomes the account's owner user, signing in to the portal with the
  // password given at pre-register. One sign-in name is one user across all accounts.
  const owner = yield* Effect.flatMap(UserStore, (users) =>
    Effect.flatMap(Ulid.make, (id) =>
      users.insertUser({
        userId: `usr_${id}`,
        customerNo: outcome.customerNo,
        email: record.email,
        role: "owner",
        passwordHash: record.passwordHash,
        passwordVersion: 1,
        passwordChangedAt: now,
        invitedBy: null,
        createdAt: now
      })
    )
  )
  if (!owner) return yield* new AlreadyRegistered()
  return record
})

/** One try of {@link start}, with a fresh customer number (a taken one fails with `DuplicateKey`). */
const startAttempt = Effect.fnUntraced(function* (
  accounts: Context.Tag.Service<AccountStore>,
  store: ProvisioningStoreShape,
  input: { readonly validationKey: string }
) {
  const candidate = yield* customerNumber
  return yield* withKey(
    input.validationKey,
    (hash, now) => ({ _tag: "Start", validationKeyHash: hash, customerNo: candidate, now }),
    (record, outcome) => createRegistered(accounts, store, record, outcome)
  )
})

/**
 * `start`: creates the customer record (no keys yet) and its owner user (the registrant, with
 * the registration's password hash); repeated calls return the same number. The machine gets a
 * fresh number; when it accepts it, the account and the user are inserted in the same
 * transaction (a taken number retries with another). An address that already has a customer
 * record, or already signs in as a user of any account, gets `AlreadyRegistered`.
 */
export const start = Effect.fn("Provisioning.start")(function* (input: { readonly validationKey: string }) {
  const accounts = yield* AccountStore
  const store = yield* ProvisioningStore
  const { record } = yield* startAttempt(accounts, store, input).pipe(
    Effect.retry({ times: 8, while: (e) => e instanceof DuplicateKey })
  )
  return {
    customerNo: record.state.customerNo ?? "",
    frequentCallerId: "",
    hasFirmographics: record.profile.customerName !== undefined
  } satisfies Started
})

/** The step1 form (interface 4.5). */
export interface Step1Input {
  readonly validationKey: string
  readonly firstName: string
  readonly lastName: string
  readonly customerName: string
  readonly localAddr1: string
  readonly localCity: string
  readonly localState: string
  readonly localZip: string
  readonly localPhone: string
}

/** What step1 answers; `keys` only on the call that activated the account (shown once). */
export interface Activated {
  readonly customerNo: string
  readonly email: string
  readonly firstName: string
  readonly lastName: string
  readonly keys: Option.Option<{ readonly live: Redacted.Redacted<string>; readonly test: Redacted.Redacted<string> }>
}

/**
 * What {@link step1} does in the registration's transaction when the machine activates it: the
 * account gets its name and, the first time, its live and test keys (handed to `onIssued`).
 */
const activate = Effect.fnUntraced(function* (
  accounts: Context.Tag.Service<AccountStore>,
  profile: Profile,
  record: RegistrationRecord,
  outcome: Registration.Outcome,
  onIssued: (keys: Activated["keys"]) => void
) {
  if (outcome._tag !== "Activated") return record
  const now = yield* Clock.currentTimeMillis
  const account = yield* accounts.findAccount(outcome.customerNo)
  if (Option.isSome(account)) yield* accounts.updateAccount({ ...account.value, name: profile.customerName! })
  if (outcome.first) {
    const live = yield* ApiKey.issue(outcome.customerNo, "live", 1, now)
    const test = yield* ApiKey.issue(outcome.customerNo, "test", 1, now)
    yield* accounts.putKey(live.record)
    yield* accounts.putKey(test.record)
    onIssued(Option.some({ live: live.key, test: test.key }))
  }
  return { ...record, profile: { ...record.profile, ...profile } }
})

/**
 * `step1`: the primary user (the registrant, with the verified address and the hashed
 * password) becomes active, the account gets its name and its live and test keys. The keys are
 * returned once, by the call that activated the account; a repeated step1 updates the details
 * and returns none (the operator can rotate keys).
 */
export const step1 = Effect.fn("Provisioning.step1")(function* (input: Step1Input) {
  yield* requireField(
    {
      validation_key: input.validationKey,
      first_name: input.firstName,
      last_name: input.lastName,
      customer_name: input.customerName,
      local_addr1: input.localAddr1,
      local_city: input.localCity,
      local_state: input.localState,
      local_zip_postal: input.localZip,
      local_phone: input.localPhone
    },
    [
      "validation_key",
      "first_name",
      "last_name",
      "customer_name",
      "local_addr1",
      "local_city",
      "local_state",
      "local_zip_postal",
      "local_phone"
    ]
  )
  const accounts = yield* AccountStore
  const profile: Profile = {
    firstName: clean(input.firstName, 50)!,
    lastName: clean(input.lastName, 50)!,
    customerName: clean(input.customerName)!,
    localAddr1: clean(input.localAddr1)!,
    localCity: clean(input.localCity, 50)!,
    localState: clean(input.localState, 30)!,
    localZip: clean(input.localZip, 12)!,
    localPhone: clean(input.localPhone, 30)!
  }
  let issued: Activated["keys"] = Option.none()
  const { record } = yield* withKey(
    input.validationKey,
    (hash, now) => ({ _tag: "Step1", validationKeyHash: hash, now }),
    (record, outcome) =>
      activate(accounts, profile, record, outcome, (keys) => {
        issued = keys
      })
  ).pipe(Effect.retry({ times: 8, while: (e) => e instanceof DuplicateKey }))
  return {
    customerNo: record.state.customerNo ?? "",
    email: record.email,
    firstName: profile.firstName!,
    lastName: profile.lastName!,
    keys: issued
  } satisfies Activated
})

/** `step2`: the billing address, only when it differs from step1's; optional. */
export const step2 = Effect.fn("Provisioning.step2")(function* (input: {
  readonly validationKey: string
  readonly billingAddr2?: string
  readonly billingCity: string
  readonly billingState: string
  readonly billingZip: string
}) {
  yield* requireField(
    {
      validation_key: input.validationKey,
      billing_city: input.billingCity,
      billing_state: input.billingState,
      billing_zip_postal: input.billingZip
    },
    ["validation_key", "billing_city", "billing_state", "billing_zip_postal"]
  )
  const billing: Profile = {
    ...(clean(input.billingAddr2) === undefined ? {} : { billingAddr2: clean(input.billingAddr2)! }),
    billingCity: clean(input.billingCity, 50)!,
    billingState: clean(input.billingState, 30)!,
    billingZip: clean(input.billingZip, 12)!
  }
  yield* withKey(
    input.validationKey,
    (hash, now) => ({ _tag: "Step2", validationKeyHash: hash, now }),
    (record) => Effect.succeed({ ...record, profile: { ...record.profile, ...billing } })
  )
})

/**
 * Whether a customer has set up payment with a provider: the courier's billing system answers
 * `registered-with-<provider>-check` (DECISIONS.md). An embedder whose payment provider knows
 * this provides its own adapter here; without one, the check answers from the enablements an
 * operator recorded ({@link PaymentEnablementStore}), and without those either, `N`.
 */
export class PaymentRegistry extends Context.Tag("@waybill/core/PaymentRegistry")<
  PaymentRegistry,
  {
    readonly isRegistered: (customerNo: string, provider: string) => Effect.Effect<boolean, StorageError>
  }
>() {}

/** An operator's record that a customer's payment is set up with a provider. */
export interface PaymentEnablement {
  readonly customerNo: string
  readonly provider: string
  readonly enabledAt: number
}

/**
 * The payment enablements operators record (`waybill account payment`, `/ops/v1/accounts/:no/payment`):
 * the default source of {@link PaymentRegistry} for couriers whose billing system is not wired in.
 */
export class PaymentEnablementStore extends Context.Tag("@waybill/core/PaymentEnablementStore")<
  PaymentEnablementStore,
  {
    readonly find: (
      customerNo: string,
      provider: string
    ) => Effect.Effect<Option.Option<PaymentEnablement>, StorageError>
    /** Records the enablement; recording it again keeps the first time. */
    readonly put: (enablement: PaymentEnablement) => Effect.Effect<void, StorageError>
    /** Clears it; false when there was none. */
    readonly remove: (customerNo: string, provider: string) => Effect.Effect<boolean, StorageError>
  }
>() {}

/** The registry that answers from recorded enablements. */
const recordedRegistry = (store: PaymentEnablementStore["Type"]): PaymentRegistry["Type"] => ({
  isRegistered: (customerNo, provider) => Effect.map(store.find(customerNo, provider), Option.isSome)
})

/** The host's own registry if it provides one, else the recorded enablements, else none. */
const paymentRegistry = Effect.map(
  Effect.all([Effect.serviceOption(PaymentRegistry), Effect.serviceOption(PaymentEnablementStore)]),
  ([own, recorded]) => Option.orElse(own, () => Option.map(recorded, recordedRegistry))
)

/**
 * `registered-with-<provider>-check`: whether payment is set up for the registration's customer,
 * asked of the {@link PaymentRegistry} (before `start` there is no customer yet: `N`).
 */
export const paymentCheck = Effect.fn("Provisioning.paymentCheck")(function* (input: {
  readonly validationKey: string
}) {
  const { record } = yield* withKey(input.validationKey, (hash, now) => ({
    _tag: "PaymentCheck",
    validationKeyHash: hash,
    now
  }))
  const registry = yield* paymentRegistry
  const customerNo = record.state.customerNo
  if (customerNo === null || Option.isNone(registry)) return { registered: false }
  return { registered: yield* registry.value.isRegistered(customerNo, yield* paymentProvider) }
})

/**
 * The host provides its own {@link PaymentRegistry}: the check asks the payment provider, so an
 * enablement recorded here would be ignored; operators set it up with the provider instead.
 */
export class PaymentRegistryExternal extends Schema.TaggedError<PaymentRegistryExternal>()(
  "PaymentRegistryExternal",
  {}
) {}

/** A customer's payment enablement as operators see it. */
export interface PaymentStatus {
  readonly customerNo: string
  readonly provider: string
  readonly enabled: boolean
  /** When an operator recorded it; null when not enabled. */
  readonly enabledAt: number | null
}

const requireCustomer = (customerNo: string) =>
  Effect.flatMap(AccountStore, (s) => s.findAccount(customerNo)).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.fail(new AccountNotFound({ customerNo })), onSome: () => Effect.void })
    )
  )

/** An account's recorded payment enablement with the configured provider. */
export const paymentStatus = Effect.fn("Provisioning.paymentStatus")(function* (customerNo: string) {
  yield* requireCustomer(customerNo)
  const provider = yield* paymentProvider
  const found = yield* Effect.flatMap(PaymentEnablementStore, (s) => s.find(customerNo, provider))
  return {
    customerNo,
    provider,
    enabled: Option.isSome(found),
    enabledAt: Option.match(found, { onNone: () => null, onSome: (e) => e.enabledAt })
  } satisfies PaymentStatus
})

/**
 * Operators record (`enabled: true`) or clear an account's payment enablement with the
 * configured provider, for couriers whose billing system is not wired in as a
 * {@link PaymentRegistry}; the payment check answers `Y` once it is recorded. Refused
 * ({@link PaymentRegistryExternal}) when the host provides its own registry.
 */
export const setPaymentEnablement = Effect.fn("Provisioning.setPaymentEnablement")(function* (input: {
  readonly customerNo: string
  readonly enabled: boolean
}) {
  if (Option.isSome(yield* Effect.serviceOption(PaymentRegistry))) return yield* new PaymentRegistryExternal()
  yield* requireCustomer(input.customerNo)
  const provider = yield* paymentProvider
  const store = yield* PaymentEnablementStore
  if (input.enabled)
    yield* store.put({ customerNo: input.customerNo, provider, enabledAt: yield* Clock.currentTimeMillis })
  else yield* store.remove(input.customerNo, provider)
  return yield* paymentStatus(input.customerNo)
})

/** The configured provider name of `registered-with-<provider>-check`. */
export const paymentProvider = Effect.map(limitsOf, (l) => l.paymentProvider)

/** The primary user of an account made by provisioning, for the operator (`account show`). */
export const primaryUser = Effect.fn("Provisioning.primaryUser")(function* (customerNo: string) {
  const store = yield* ProvisioningStore
  const found = yield* store.findByCustomerNo(customerNo)
  return Option.map(found, (r) => ({
    email: r.email,
    firstName: r.profile.firstName ?? "",
    lastName: r.profile.lastName ?? "",
    status: r.state.stage === "active" ? ("active" as const) : ("pending" as const),
    profile: r.profile,
    registeredAt: r.createdAt
  }))
})

/** The account's details as the portal's Account page shows them. */
export interface AccountProfile {
  readonly customerNo: string
  /** The company name (step1's, or the name an operator gave). */
  readonly name: string
  /** The registration's e-mail; absent for an account made by an operator. */
  readonly email?: string
  /** What step1 and step2 entered; absent for an account made by an operator. */
  readonly profile?: Profile
  readonly createdAt: number
}

/**
 * The account's details, read-only: the account's name, and the registration profile (contact,
 * local and billing address) when provisioning made the account.
 */
export const accountProfile = Effect.fn("Provisioning.accountProfile")(function* (customerNo: string) {
  const account = yield* Effect.flatMap(AccountStore, (s) => s.findAccount(customerNo))
  if (Option.isNone(account)) return yield* new AccountNotFound({ customerNo })
  const found = yield* Effect.flatMap(ProvisioningStore, (s) => s.findByCustomerNo(customerNo))
  return {
    customerNo,
    name: account.value.name,
    createdAt: account.value.createdAt,
    ...(Option.isSome(found) ? { email: found.value.email, profile: found.value.profile } : {})
  } satisfies AccountProfile
})
