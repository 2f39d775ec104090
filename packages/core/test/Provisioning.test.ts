/**
 * The provisioning use cases over in-memory ports: the limits that decide how much mail one
 * client can make the server send (per client address, shared by pre-register and resend; per
 * registrable domain), and that an address is one address whatever the case it is typed in.
 *
 * The in-memory `ProvisioningStore` compares `emailHasCustomer` exactly (the SQL adapter
 * compares without case), so what these tests prove about case does not lean on the store.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import type { AccountRecord, ApiKeyRecord } from "../src/access/Account.js"
import { AccountStore } from "../src/access/AccountStore.js"
import * as ClientIp from "../src/access/ClientIp.js"
import { defaults, type ProvisioningLimits, provisioningDefaults, WaybillConfig } from "../src/shared/Config.js"
import { Entropy } from "../src/shared/Entropy.js"
import { DuplicateKey } from "../src/shared/Errors.js"
import { KeyRing, type SecretPurpose } from "../src/shared/KeyRing.js"
import { Mailer, type VerificationMessage } from "../src/shared/Mailer.js"
import { PasswordHasher } from "../src/access/PasswordHasher.js"
import * as Provisioning from "../src/provisioning/Provisioning.js"
import { ProvisioningStore, type RegistrationRecord } from "../src/provisioning/ProvisioningStore.js"
import * as RateLimits from "../src/access/RateLimiter.js"
import { Transactor } from "../src/shared/Transactor.js"
import { emailKey, type UserRecord } from "../src/access/User.js"
import { UserStore } from "../src/access/UserStore.js"

const T0 = 1_800_000_000_000
const PASSWORD = Redacted.make("correct horse battery staple 42")
const LINK_BASE = "https://waybill.test/api/v1/accountsetup/verify/"

const material = (n: number) => Redacted.make(new Uint8Array(32).fill(n))
const ring = KeyRing.fromSecrets(
  Object.fromEntries(
    (["api-key", "ticket", "otp", "webhook"] as const).map((p, i) => [p, [{ id: `${p}-1`, material: material(i + 1) }]])
  ) as unknown as Record<SecretPurpose, ReadonlyArray<{ id: string; material: Redacted.Redacted<Uint8Array> }>>
)

/** Users by e-mail key: only `insertUser` (what provisioning's `start` calls) is needed here. */
const memoryUsers = (users: Map<string, UserRecord>) =>
  Layer.succeed(
    UserStore,
    new Proxy({} as UserStore["Type"], {
      get: (_, name) =>
        name === "insertUser"
          ? (user: UserRecord) =>
              Effect.sync(() => {
                if (users.has(emailKey(user.email))) return false
                users.set(emailKey(user.email), user)
                return true
              })
          : () => Effect.dieMessage(`memoryUsers: ${String(name)} is not used by provisioning`)
    })
  )

/** Registrations in a map; `emailHasCustomer` compares exactly (stricter than `ProvisioningStoreKysely`). */
const memoryProvisioningStore = (rows: Map<string, RegistrationRecord>) =>
  Layer.succeed(ProvisioningStore, {
    insert: (r) => Effect.sync(() => void rows.set(r.idx, r)),
    find: (idx) => Effect.sync(() => Option.fromNullable(rows.get(idx))),
    findByLinkHash: (h) =>
      Effect.sync(() => Option.fromNullable([...rows.values()].find((r) => r.state.linkHash === h))),
    findByValidationKeyHash: (h) =>
      Effect.sync(() => Option.fromNullable([...rows.values()].find((r) => r.state.validationKeyHash === h))),
    findByCustomerNo: (c) =>
      Effect.sync(() => Option.fromNullable([...rows.values()].find((r) => r.state.customerNo === c))),
    emailHasCustomer: (email) =>
      Effect.sync(() => [...rows.values()].some((r) => r.email === email && r.state.customerNo !== null)),
    update: (r) =>
      Effect.sync(() => {
        if (rows.get(r.idx)?.version !== r.version - 1) return false
        rows.set(r.idx, r)
        return true
      })
  })

const memoryAccountStore = () => {
  const accounts = new Map<string, AccountRecord>()
  const keys = new Map<string, ApiKeyRecord>()
  const unused = () => Effect.dieMessage("not used by provisioning")
  return Layer.succeed(AccountStore, {
    insertAccount: (a) =>
      accounts.has(a.customerNo)
        ? Effect.fail(new DuplicateKey({ what: "customer_no" }))
        : Effect.sync(() => void accounts.set(a.customerNo, a)),
    findAccount: (c) => Effect.sync(() => Option.fromNullable(accounts.get(c))),
    updateAccount: (a) => Effect.sync(() => void accounts.set(a.customerNo, a)),
    putKey: (k) => Effect.sync(() => void keys.set(`${k.customerNo}/${k.mode}`, k)),
    findKeyByHash: unused,
    findKeyWithAccount: unused,
    findSlotWithAccount: unused,
    findKey: unused,
    listKeys: unused,
    linkAccount: unused,
    unlinkAccount: unused,
    linkedChildren: unused
  })
}

/** A fresh world: stores, counters and an outbox of the e-mails "sent". */
const world = (limits: Partial<ProvisioningLimits> = {}) => {
  const rows = new Map<string, RegistrationRecord>()
  const users = new Map<string, UserRecord>()
  const sent: Array<VerificationMessage> = []
  const layer = Layer.mergeAll(
    memoryProvisioningStore(rows),
    memoryAccountStore(),
    memoryUsers(users),
    Layer.succeed(Transactor, { withTransaction: (self) => self }),
    ring,
    Layer.succeed(Entropy, { bytes: (n) => Effect.sync(() => globalThis.crypto.getRandomValues(new Uint8Array(n))) }),
    WaybillConfig.layer({
      ...defaults,
      // Per-address limits out of reach unless a test sets its own.
      provisioning: {
        ...provisioningDefaults,
        perIpHour: { requests: 1000, windowSeconds: 3600 },
        perIpDay: { requests: 1000, windowSeconds: 86400 },
        ...limits
      }
    }),
    RateLimits.memory,
    Layer.succeed(Mailer, {
      send: (m) => Effect.sync(() => void (m._tag === "Verification" && sent.push(m)))
    }),
    Layer.succeed(PasswordHasher, {
      hash: () => Effect.succeed("$test$hash"),
      verify: () => Effect.succeed(false)
    })
  )
  /** Runs a program in this world, the test clock at a real-looking instant (0 reads as "never sent"). */
  const run = <A, E>(program: Effect.Effect<A, E, Layer.Layer.Success<typeof layer>>) =>
    Effect.provide(Effect.zipRight(TestClock.setTime(T0), program), layer)
  return { rows, sent, run, users }
}

const ip = (s: string) => Option.getOrThrow(ClientIp.parse(s))

const preRegister = (email: string, client = "198.51.100.1") =>
  Provisioning.preRegister({ email, password: PASSWORD, client: Option.some(ip(client)), linkBase: LINK_BASE })

const resend = (idx: string, client = "198.51.100.1") =>
  Provisioning.resend({ idx, linkBase: LINK_BASE, client: Option.some(ip(client)) })

/** The code of the newest e-mail to `to`, as a mailbox would receive it (case does not matter). */
const codeFor = (sent: ReadonlyArray<VerificationMessage>, to: string) =>
  Redacted.value(sent.filter((m) => m.to.toLowerCase() === to.toLowerCase()).at(-1)!.code)

/** Verified, checked, started: the validation key and customer number. */
const toCustomer = (sent: ReadonlyArray<VerificationMessage>, idx: string, email: string) =>
  Effect.gen(function* () {
    yield* Provisioning.verify({ idx, email, code: Redacted.make(codeFor(sent, email)) })
    const { validationKey } = yield* Provisioning.check({ idx, email })
    return yield* Provisioning.start({ validationKey: Redacted.value(validationKey) })
  })

describe("Provisioning: pre-register-resend is limited per client address", () => {
  it.effect("resends from one address stop at the per-address hourly limit (429), whoever registered", () => {
    const w = world({ resendCooldownSeconds: 0, perIpHour: { requests: 2, windowSeconds: 3600 } })
    return w.run(
      Effect.gen(function* () {
        // Three registrations from three addresses, then one client resends them all.
        const idxs: Array<string> = []
        for (const n of [1, 2, 3]) idxs.push((yield* preRegister(`ops@firm-${n}.test`, `203.0.113.${n}`)).waitIdx)
        const attacker = "198.51.100.77"
        yield* resend(idxs[0]!, attacker)
        yield* resend(idxs[1]!, attacker)
        const before = w.rows.get(idxs[2]!)!
        const third = yield* Effect.flip(resend(idxs[2]!, attacker))
        expect(third._tag).toBe("ProvisioningRateLimited")
        expect(third._tag === "ProvisioningRateLimited" && third.retryAfterSeconds).toBeGreaterThan(0)
        // It names what it refused: an e-mail, not a registration.
        expect(third).toMatchObject({ refused: "verification-email" })
        // Refused before anything changed: no e-mail, the registration's code and cooldown intact.
        expect(w.sent).toHaveLength(5)
        expect(w.rows.get(idxs[2]!)).toEqual(before)
        // Another client address still has its own budget.
        yield* resend(idxs[2]!, "198.51.100.78")
        expect(w.sent).toHaveLength(6)
      })
    )
  })

  it.effect("pre-register and resend share the client's budget (one budget of verification e-mails)", () => {
    const w = world({ resendCooldownSeconds: 0, perIpHour: { requests: 3, windowSeconds: 3600 } })
    return w.run(
      Effect.gen(function* () {
        const a = yield* preRegister("ops@one-firm.test")
        yield* preRegister("ops@two-firm.test")
        yield* resend(a.waitIdx)
        expect(yield* Effect.flip(resend(a.waitIdx))).toMatchObject({
          _tag: "ProvisioningRateLimited",
          refused: "verification-email"
        })
        expect(yield* Effect.flip(preRegister("ops@three-firm.test"))).toMatchObject({
          _tag: "ProvisioningRateLimited",
          refused: "registration"
        })
      })
    )
  })

  it.effect("the daily per-address limit applies to resends too", () => {
    const w = world({
      resendCooldownSeconds: 0,
      perIpHour: { requests: 100, windowSeconds: 3600 },
      perIpDay: { requests: 3, windowSeconds: 86400 }
    })
    return w.run(
      Effect.gen(function* () {
        const a = yield* preRegister("ops@one-firm.test", "203.0.113.1")
        for (let i = 0; i < 3; i++) yield* resend(a.waitIdx, "198.51.100.9")
        expect(yield* Effect.flip(resend(a.waitIdx, "198.51.100.9"))).toMatchObject({
          _tag: "ProvisioningRateLimited"
        })
      })
    )
  })

  it.effect("a resend the registration refuses (cooldown) costs the client nothing", () => {
    const w = world({ perIpHour: { requests: 2, windowSeconds: 3600 } })
    return w.run(
      Effect.gen(function* () {
        const a = yield* preRegister("ops@one-firm.test", "203.0.113.1")
        for (let i = 0; i < 5; i++)
          expect(yield* Effect.flip(resend(a.waitIdx, "198.51.100.9"))).toMatchObject({ reason: "resend-too-soon" })
        const b = yield* preRegister("ops@two-firm.test", "198.51.100.9")
        expect(b.waitIdx).toMatch(/^wr_/)
      })
    )
  })

  it.effect("IPv6 clients are counted per /64", () => {
    const w = world({ resendCooldownSeconds: 0, perIpHour: { requests: 1, windowSeconds: 3600 } })
    return w.run(
      Effect.gen(function* () {
        const a = yield* preRegister("ops@one-firm.test", "203.0.113.1")
        yield* resend(a.waitIdx, "2001:db8:1:2::1")
        expect(yield* Effect.flip(resend(a.waitIdx, "2001:db8:1:2:ffff::9"))).toMatchObject({
          _tag: "ProvisioningRateLimited"
        })
      })
    )
  })
})

describe("Provisioning: the per-domain limit counts the registrable domain", () => {
  it.effect("wildcard subdomains share their parent's budget", () => {
    const w = world({ perDomainDay: { requests: 2, windowSeconds: 86400 } })
    return w.run(
      Effect.gen(function* () {
        yield* preRegister("ops@a1.spam-farm.test")
        yield* preRegister("ops@a2.spam-farm.test")
        expect(yield* Effect.flip(preRegister("ops@x.a3.spam-farm.test"))).toMatchObject({
          _tag: "ProvisioningRateLimited"
        })
        expect(yield* Effect.flip(preRegister("ops@SPAM-FARM.test."))).toMatchObject({
          _tag: "ProvisioningRateLimited"
        })
        // Another registrable domain is unaffected.
        yield* preRegister("ops@a1.other-farm.test")
      })
    )
  })

  it.effect("under a shared second level of a country (co.uk) each company keeps its own budget", () => {
    const w = world({ perDomainDay: { requests: 1, windowSeconds: 86400 } })
    return w.run(
      Effect.gen(function* () {
        yield* preRegister("ops@acme.co.uk")
        yield* preRegister("ops@globex.co.uk")
        yield* preRegister("ops@initech.com.au")
        expect(yield* Effect.flip(preRegister("ops@mail.acme.co.uk"))).toMatchObject({
          _tag: "ProvisioningRateLimited"
        })
      })
    )
  })

  it.effect("the stored domain stays the full domain (it names the account)", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const { waitIdx } = yield* preRegister("ops@eu.acme-logistics.test")
        expect(w.rows.get(waitIdx)!.emailDomain).toBe("eu.acme-logistics.test")
      })
    )
  })
})

describe("Provisioning: an address is compared without its case", () => {
  it.effect("verify and check find the registration whatever the case of email_address", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const typed = "Ada.Lopez@Acme-Logistics.test"
        const { waitIdx } = yield* preRegister(typed)
        const code = codeFor(w.sent, "Ada.Lopez@acme-logistics.test")
        yield* Provisioning.verify({ idx: waitIdx, email: "ada.lopez@acme-logistics.test", code: Redacted.make(code) })
        const { validationKey } = yield* Provisioning.check({ idx: waitIdx, email: "ADA.LOPEZ@ACME-LOGISTICS.TEST" })
        expect(Redacted.value(validationKey)).toMatch(/^vk_/)
        // Another address is still another address.
        expect(
          yield* Effect.flip(Provisioning.check({ idx: waitIdx, email: "ada.lopez2@acme-logistics.test" }))
        ).toMatchObject({ _tag: "RegistrationNotFound" })
      })
    )
  })

  it.effect("a row stored before the fix, in mixed case, is still found by a lowercase address", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const { waitIdx } = yield* preRegister("ops@acme-logistics.test")
        // As an older version wrote it: the local part in the case it was typed in.
        const row = w.rows.get(waitIdx)!
        w.rows.set(waitIdx, { ...row, email: "OPS.Desk@acme-logistics.test" })
        yield* Provisioning.verify({
          idx: waitIdx,
          email: "ops.desk@acme-logistics.test",
          code: Redacted.make(codeFor(w.sent, "ops@acme-logistics.test"))
        })
      })
    )
  })

  it.effect("a second registration of the same address in another case cannot start a second account", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const first = yield* preRegister("ada.lopez@acme-logistics.test")
        yield* toCustomer(w.sent, first.waitIdx, "ada.lopez@acme-logistics.test")
        const second = yield* preRegister("Ada.Lopez@ACME-logistics.test")
        const dup = yield* Effect.flip(toCustomer(w.sent, second.waitIdx, "Ada.Lopez@acme-logistics.test"))
        expect(dup._tag).toBe("AlreadyRegistered")
      })
    )
  })

  it.effect("the same address typed the same way twice is still one account", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const first = yield* preRegister("Ada.Lopez@acme-logistics.test")
        yield* toCustomer(w.sent, first.waitIdx, "Ada.Lopez@acme-logistics.test")
        const second = yield* preRegister("Ada.Lopez@acme-logistics.test")
        const dup = yield* Effect.flip(toCustomer(w.sent, second.waitIdx, "Ada.Lopez@acme-logistics.test"))
        expect(dup._tag).toBe("AlreadyRegistered")
      })
    )
  })

  it.effect("the address is kept as typed for the e-mails and the answers", () => {
    const w = world({ resendCooldownSeconds: 0 })
    return w.run(
      Effect.gen(function* () {
        const { waitIdx } = yield* preRegister("Ada.Lopez@Acme-Logistics.test")
        yield* resend(waitIdx)
        expect(w.sent.map((m) => m.to)).toEqual(["Ada.Lopez@acme-logistics.test", "Ada.Lopez@acme-logistics.test"])
        const started = yield* toCustomer(w.sent, waitIdx, "ada.lopez@acme-logistics.test")
        const user = Option.getOrThrow(yield* Provisioning.primaryUser(started.customerNo))
        expect(user.email).toBe("Ada.Lopez@acme-logistics.test")
      })
    )
  })
})

describe("Provisioning: a code is single use", () => {
  it.effect("once verified, neither a wrong code nor the used code is answered with success", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const email = "ops@single-use.test"
        const { waitIdx: idx } = yield* preRegister(email)
        const code = codeFor(w.sent, email)
        const wrong = code === "000000" ? "111111" : "000000"
        yield* Provisioning.verify({ idx, email, code: Redacted.make(code) })
        for (const again of [wrong, code, code])
          expect(yield* Effect.flip(Provisioning.verify({ idx, email, code: Redacted.make(again) }))).toMatchObject({
            _tag: "ProvisioningRejected",
            reason: "already-verified"
          })
        // Still verified: the next step works.
        yield* Provisioning.check({ idx, email })
      })
    )
  })
})

describe("Provisioning: the payment check's registry", () => {
  const memoryEnablements = () => {
    const rows = new Map<string, Provisioning.PaymentEnablement>()
    const key = (c: string, p: string) => `${c}/${p}`
    return Layer.succeed(Provisioning.PaymentEnablementStore, {
      find: (c, p) => Effect.sync(() => Option.fromNullable(rows.get(key(c, p)))),
      put: (e) =>
        Effect.sync(() => void (rows.has(key(e.customerNo, e.provider)) || rows.set(key(e.customerNo, e.provider), e))),
      remove: (c, p) => Effect.sync(() => rows.delete(key(c, p)))
    })
  }
  const startedCustomer = (w: ReturnType<typeof world>, email: string) =>
    Effect.gen(function* () {
      const { waitIdx: idx } = yield* preRegister(email)
      yield* Provisioning.verify({ idx, email, code: Redacted.make(codeFor(w.sent, email)) })
      const { validationKey } = yield* Provisioning.check({ idx, email })
      const { customerNo } = yield* Provisioning.start({ validationKey: Redacted.value(validationKey) })
      return { customerNo, validationKey: Redacted.value(validationKey) }
    })

  it.effect("answers from the recorded enablements: Y once recorded, N once cleared, per customer", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const a = yield* startedCustomer(w, "ops@pay-one.test")
        const b = yield* startedCustomer(w, "ops@pay-two.test")
        const check = (k: string) => Effect.map(Provisioning.paymentCheck({ validationKey: k }), (r) => r.registered)
        expect(yield* check(a.validationKey)).toBe(false)
        const set = yield* Provisioning.setPaymentEnablement({ customerNo: a.customerNo, enabled: true })
        expect(set).toEqual({ customerNo: a.customerNo, provider: "stripe", enabled: true, enabledAt: T0 })
        expect(yield* check(a.validationKey)).toBe(true)
        expect(yield* check(b.validationKey)).toBe(false)
        yield* Provisioning.setPaymentEnablement({ customerNo: a.customerNo, enabled: false })
        expect(yield* check(a.validationKey)).toBe(false)
        expect(
          yield* Effect.flip(Provisioning.setPaymentEnablement({ customerNo: "9999999", enabled: true }))
        ).toMatchObject({ _tag: "AccountNotFound" })
      }).pipe(Effect.provide(memoryEnablements()))
    )
  })

  it.effect("a host's own PaymentRegistry wins, and operators cannot record what it would ignore", () => {
    const w = world()
    const asked: Array<string> = []
    const own = Layer.succeed(Provisioning.PaymentRegistry, {
      isRegistered: (c, p) => Effect.sync(() => (asked.push(`${c}/${p}`), true))
    })
    return w.run(
      Effect.gen(function* () {
        const a = yield* startedCustomer(w, "ops@pay-own.test")
        expect(yield* Provisioning.paymentCheck({ validationKey: a.validationKey })).toEqual({ registered: true })
        expect(asked).toEqual([`${a.customerNo}/stripe`])
        expect(
          yield* Effect.flip(Provisioning.setPaymentEnablement({ customerNo: a.customerNo, enabled: true }))
        ).toMatchObject({ _tag: "PaymentRegistryExternal" })
      }).pipe(Effect.provide(Layer.merge(memoryEnablements(), own)))
    )
  })

  it.effect("without a registry or recorded enablements the answer is N", () => {
    const w = world()
    return w.run(
      Effect.gen(function* () {
        const a = yield* startedCustomer(w, "ops@pay-none.test")
        expect(yield* Provisioning.paymentCheck({ validationKey: a.validationKey })).toEqual({ registered: false })
      })
    )
  })
})

describe("Provisioning: start makes the registrant the account's owner user", () => {
  it.effect(
    "the owner signs in with the pre-register password hash; an address that is already a user is AlreadyRegistered",
    () => {
      const w = world()
      return w.run(
        Effect.gen(function* () {
          const { waitIdx } = yield* preRegister("Ops@Owner-Firm.test")
          const { customerNo } = yield* toCustomer(w.sent, waitIdx, "Ops@Owner-Firm.test")
          const owner = w.users.get("ops@owner-firm.test")!
          expect(owner).toMatchObject({
            customerNo,
            role: "owner",
            passwordHash: "$test$hash",
            passwordVersion: 1,
            invitedBy: null
          })
          expect(owner.userId).toMatch(/^usr_[0-9A-Z]{26}$/)
          // The same address as a user of some account already: no second customer record.
          w.users.set("taken@other-firm.test", { ...owner, email: "taken@other-firm.test", customerNo: "7777777" })
          const second = (yield* preRegister("Taken@Other-Firm.test", "198.51.100.2")).waitIdx
          const refused = yield* Effect.flip(toCustomer(w.sent, second, "Taken@Other-Firm.test"))
          expect(refused._tag).toBe("AlreadyRegistered")
        })
      )
    }
  )
})
