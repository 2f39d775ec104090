/**
 * The portal's account use cases: `Accounts.parseIpAllowlist` (property tests against
 * `ClientIp.parseCidr`), the owner and recent-password checks of `Accounts.regenerateKey`,
 * `changeKeyStatus` and `setIpAllowlist` (the role as stored now wins over the session's), and
 * `Provisioning.accountProfile` with and without a registration.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import {
  type Account,
  Accounts,
  AccountStore,
  type AccountStoreShape,
  ClientIp,
  Entropy,
  KeyRing,
  Provisioning,
  ProvisioningStore,
  type ProvisioningStoreShape,
  Sessions,
  Transactor,
  type User,
  UserStore,
  type UserStoreShape
} from "../src/index.js"

const T0 = 1_800_000_000_000

const account: Account.AccountRecord = {
  customerNo: "1234567",
  name: "Acme Freight",
  cancelMode: "local",
  rateCard: null,
  ipAllowlist: [],
  createdAt: T0 - 1000
}

const viewer = (over: Partial<User.Viewer> = {}): User.Viewer => ({
  userId: "usr_1",
  customerNo: account.customerNo,
  email: "owner@example.com",
  role: "owner",
  sessionId: "s",
  csrfToken: Redacted.make("c"),
  authenticatedAt: T0,
  createdAt: T0,
  ...over
})

const userRecord = (role: User.Role): User.UserRecord => ({
  userId: "usr_1",
  customerNo: account.customerNo,
  email: "owner@example.com",
  role,
  passwordHash: "h",
  passwordVersion: 1,
  passwordChangedAt: null,
  invitedBy: null,
  createdAt: T0
})

/** Stores that answer what these checks read; anything else they are asked is a defect. */
const world = (storedRole: User.Role) => {
  const updated: Array<Account.AccountRecord> = []
  const layer = Layer.mergeAll(
    Layer.succeed(AccountStore, {
      findAccount: (no: string) => Effect.succeed(no === account.customerNo ? Option.some(account) : Option.none()),
      updateAccount: (a: Account.AccountRecord) => Effect.sync(() => void updated.push(a))
    } as unknown as AccountStoreShape),
    Layer.succeed(UserStore, {
      findUser: (no: string, id: string) =>
        Effect.succeed(
          no === account.customerNo && id === "usr_1" ? Option.some(userRecord(storedRole)) : Option.none()
        )
    } as unknown as UserStoreShape),
    Layer.succeed(Entropy, {} as never),
    Layer.succeed(KeyRing, {} as never),
    Layer.succeed(Transactor, {} as never)
  )
  return { layer, updated }
}

const failureTag = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(self), (r) => (Either.isLeft(r) ? r.left._tag : "ok"))

describe("Accounts.parseIpAllowlist", () => {
  it("splits on lines, commas and blanks, drops empties and duplicates", () => {
    expect(Accounts.parseIpAllowlist(" 10.0.0.0/8\r\n\n2001:db8::/32, 10.0.0.0/8 \n")).toEqual({
      entries: ["10.0.0.0/8", "2001:db8::/32"],
      invalid: []
    })
    expect(Accounts.parseIpAllowlist("").entries).toEqual([])
    expect(Accounts.parseIpAllowlist("10.0.0.0/33\nexample.com\n192.0.2.1").invalid).toEqual([
      "10.0.0.0/33",
      "example.com"
    ])
  })

  it("invalid is exactly what ClientIp.parseCidr refuses (property)", () => {
    const token = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 40 })).map(([a, n]) => `${a}/${n}`),
      fc.stringMatching(/^[a-z0-9.:/]{1,12}$/)
    )
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), fc.constantFrom("\n", ",", " \r\n"), (tokens, sep) => {
        const { entries, invalid } = Accounts.parseIpAllowlist(tokens.join(sep))
        expect(new Set(entries)).toEqual(new Set(tokens))
        expect(invalid).toEqual(entries.filter((e) => Option.isNone(ClientIp.parseCidr(e))))
      })
    )
  })
})

describe("the portal's key and allowlist use cases", () => {
  it.effect("a member, or an owner demoted since signing in, may not regenerate, disable or edit", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + 1000)
      const { layer, updated } = world("member")
      for (const who of [viewer({ role: "member" }), viewer({ role: "owner" })]) {
        const tags = yield* Effect.all([
          failureTag(Accounts.regenerateKey(who, "live")),
          failureTag(Accounts.changeKeyStatus(who, "live", "disabled")),
          failureTag(Accounts.setIpAllowlist(who, ["10.0.0.0/8"]))
        ]).pipe(Effect.provide(layer))
        expect(tags).toEqual(["NotAllowed", "NotAllowed", "NotAllowed"])
      }
      expect(updated).toEqual([])
    })
  )

  it.effect("regenerating needs the password entered in the last 10 minutes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0 + Sessions.RECENT_AUTH_MS + 1)
      const tag = yield* failureTag(Accounts.regenerateKey(viewer(), "test")).pipe(Effect.provide(world("owner").layer))
      expect(tag).toBe("RecentAuthRequired")
    })
  )

  it.effect("the allowlist: bad entries refused by name, too many refused, good ones saved", () =>
    Effect.gen(function* () {
      const { layer, updated } = world("owner")
      const bad = yield* Effect.either(Accounts.setIpAllowlist(viewer(), ["10.0.0.0/8", "nope"])).pipe(
        Effect.provide(layer)
      )
      expect(Either.isLeft(bad) && bad.left._tag === "InvalidAllowlist" && bad.left.entries).toEqual(["nope"])
      const many = Array.from({ length: Accounts.MAX_ALLOWLIST + 1 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)
      const tooMany = yield* failureTag(Accounts.setIpAllowlist(viewer(), many)).pipe(Effect.provide(layer))
      expect(tooMany).toBe("InvalidAllowlist")
      expect(updated).toEqual([])
      const saved = yield* Accounts.setIpAllowlist(viewer(), ["192.0.2.0/24"]).pipe(Effect.provide(layer))
      expect(saved.ipAllowlist).toEqual(["192.0.2.0/24"])
      expect(updated.map((a) => a.ipAllowlist)).toEqual([["192.0.2.0/24"]])
    })
  )
})

describe("Provisioning.accountProfile", () => {
  const provisioning = (profile: boolean) =>
    Layer.merge(
      Layer.succeed(AccountStore, {
        findAccount: (no: string) => Effect.succeed(no === account.customerNo ? Option.some(account) : Option.none())
      } as unknown as AccountStoreShape),
      Layer.succeed(ProvisioningStore, {
        findByCustomerNo: () =>
          Effect.succeed(
            profile
              ? Option.some({
                  email: "ada@acme.example",
                  profile: { firstName: "Ada", lastName: "Lopez", customerName: "Acme Freight", localCity: "Chicago" }
                })
              : Option.none()
          )
      } as unknown as ProvisioningStoreShape)
    )

  it.effect("a provisioned account: the registration's e-mail and profile", () =>
    Effect.gen(function* () {
      const shown = yield* Provisioning.accountProfile(account.customerNo)
      expect(shown).toEqual({
        customerNo: account.customerNo,
        name: "Acme Freight",
        createdAt: account.createdAt,
        email: "ada@acme.example",
        profile: { firstName: "Ada", lastName: "Lopez", customerName: "Acme Freight", localCity: "Chicago" }
      })
    }).pipe(Effect.provide(provisioning(true)))
  )

  it.effect("an operator's account: its name only; an unknown one is AccountNotFound", () =>
    Effect.gen(function* () {
      const shown = yield* Provisioning.accountProfile(account.customerNo)
      expect(shown).toEqual({ customerNo: account.customerNo, name: "Acme Freight", createdAt: account.createdAt })
      expect(yield* failureTag(Provisioning.accountProfile("7654321"))).toBe("AccountNotFound")
    }).pipe(Effect.provide(provisioning(false)))
  )
})
