/**
 * A portal session as the documents endpoint's credential (interface 5, rule 1): where it stands
 * in the precedence, and the principal it becomes (the account's live key, else its test key;
 * a dead session or no active key is invalid), counted per user by the request limit.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import type { AccountRecord, ApiKeyRecord, KeyMode, KeyStatus } from "../src/access/Account.js"
import { AccountStore, type AccountStoreShape } from "../src/access/AccountStore.js"
import * as Admission from "../src/access/Admission.js"
import * as Credentials from "../src/access/Credentials.js"
import * as RateLimits from "../src/access/RateLimiter.js"
import * as Sessions from "../src/access/Sessions.js"
import type { SessionRecord, UserRecord } from "../src/access/User.js"
import { UserStore, type UserStoreShape } from "../src/access/UserStore.js"
import { defaults, WaybillConfig } from "../src/shared/Config.js"
import { KeyRing } from "../src/shared/KeyRing.js"

const TOKEN = "A".repeat(43)

const account: AccountRecord = {
  customerNo: "1234567",
  name: "A",
  cancelMode: "local",
  rateCard: null,
  ipAllowlist: [],
  createdAt: 0
}

const user: UserRecord = {
  userId: "usr_1",
  customerNo: account.customerNo,
  email: "ada@example.com",
  role: "owner",
  passwordHash: "scrypt$x",
  passwordVersion: 1,
  passwordChangedAt: null,
  invitedBy: null,
  createdAt: 0
}

const key = (mode: KeyMode, status: KeyStatus): ApiKeyRecord => ({
  id: `k-${mode}`,
  customerNo: account.customerNo,
  mode,
  status,
  generation: 3,
  hash: "h",
  hint: `wb_${mode}_xxxx`,
  last4: null,
  createdAt: null,
  updatedAt: 0
})

/** Stores over one session (made at time 0) and the account's two key slots. */
const services = async (keys: { readonly live: KeyStatus; readonly test: KeyStatus }) => {
  const id = await Effect.runPromise(Sessions.hashToken(TOKEN))
  const session: SessionRecord = {
    id,
    userId: user.userId,
    customerNo: user.customerNo,
    csrfToken: "c",
    createdAt: 0,
    lastSeenAt: 0,
    authenticatedAt: 0,
    passwordVersion: 1
  }
  const users = {
    findSession: (wanted: string) => Effect.succeed(wanted === id ? Option.some({ session, user }) : Option.none()),
    touchSession: () => Effect.void,
    deleteSession: () => Effect.void
  } as unknown as UserStoreShape
  const accounts = {
    findAccount: (no: string) => Effect.succeed(no === account.customerNo ? Option.some(account) : Option.none()),
    findKey: (_: string, mode: KeyMode) => Effect.succeed(Option.some(key(mode, keys[mode])))
  } as unknown as AccountStoreShape
  return Layer.mergeAll(
    Layer.succeed(UserStore, users),
    Layer.succeed(AccountStore, accounts),
    RateLimits.memory,
    // Keys are never looked up on the session path.
    KeyRing.fromSecrets({
      "api-key": [{ id: "k", material: Redacted.make(new Uint8Array(32)) }],
      ticket: [],
      otp: [],
      webhook: []
    }),
    WaybillConfig.layer({ ...defaults, limits: { ...defaults.limits, perKey: { requests: 2, windowSeconds: 60 } } })
  )
}

const session = Credentials.orSession({ _tag: "None" }, TOKEN)

describe("Credentials.orSession (precedence)", () => {
  it.prop(
    "the cookie is used only when no other credential was found",
    [fc.option(fc.string({ minLength: 1 }), { nil: undefined }), fc.option(fc.string(), { nil: undefined })],
    ([formKey, cookie]) => {
      const keyed = Credentials.resolve(null, [{ source: "form.key", values: [formKey] }])
      const r = Credentials.orSession(keyed, cookie)
      if (formKey !== undefined) expect(r).toEqual(keyed)
      else if (cookie === undefined || cookie === "") expect(r._tag).toBe("None")
      else expect(r._tag).toBe("Session")
    }
  )

  it("an Authorization header, even an invalid one, always wins over the cookie", () => {
    const header = Credentials.resolve("Basic abc", [])
    expect(Credentials.orSession(header, TOKEN)).toEqual(header)
    const bearer = Credentials.resolve("Bearer wb_live_x", [])
    expect(Credentials.orSession(bearer, TOKEN)._tag).toBe("Found")
  })
})

describe("Credentials.authenticate with a session", () => {
  it.effect("a live session acts under the account's live key; identified says it was a session", () =>
    Effect.gen(function* () {
      const layer = yield* Effect.promise(() => services({ live: "active", test: "active" }))
      const principal = yield* Credentials.authenticate(session).pipe(Effect.provide(layer))
      expect(principal.account.customerNo).toBe(account.customerNo)
      expect(principal.key.mode).toBe("live")
      expect(principal.session).toEqual({ userId: user.userId })
      const who = yield* FiberRef.get(Credentials.identified)
      expect(Option.getOrUndefined(who)?.session).toEqual({ userId: user.userId })
    })
  )

  it.effect("the test key while the live one is not active; neither active: invalid", () =>
    Effect.gen(function* () {
      const testOnly = yield* Effect.promise(() => services({ live: "disabled", test: "active" }))
      const principal = yield* Credentials.authenticate(session).pipe(Effect.provide(testOnly))
      expect(principal.key.mode).toBe("test")
      const none = yield* Effect.promise(() => services({ live: "disabled", test: "blank" }))
      const refused = yield* Effect.flip(Credentials.authenticate(session).pipe(Effect.provide(none)))
      expect(refused._tag === "InvalidCredential" && refused.reason).toBe("session")
    })
  )

  it.effect("an unknown or timed-out session is invalid, never anonymous", () =>
    Effect.gen(function* () {
      const layer = yield* Effect.promise(() => services({ live: "active", test: "active" }))
      const unknown = yield* Effect.flip(
        Credentials.authenticate(Credentials.orSession({ _tag: "None" }, "B".repeat(43))).pipe(Effect.provide(layer))
      )
      expect(unknown._tag).toBe("InvalidCredential")
      yield* TestClock.adjust(Sessions.IDLE_MS)
      const idle = yield* Effect.flip(Credentials.authenticate(session).pipe(Effect.provide(layer)))
      expect(idle._tag === "InvalidCredential" && idle.reason).toBe("session")
    })
  )
})

describe("Admission.admitKey with a session", () => {
  it.effect("a session is limited per user, apart from the key it acts under", () =>
    Effect.gen(function* () {
      const layer = yield* Effect.promise(() => services({ live: "active", test: "active" }))
      yield* Effect.gen(function* () {
        const viaSession = yield* Credentials.authenticate(session)
        const viaKey = { account: viaSession.account, key: viaSession.key }
        yield* Admission.admitKey(viaSession, Option.none())
        yield* Admission.admitKey(viaSession, Option.none())
        const third = yield* Effect.flip(Admission.admitKey(viaSession, Option.none()))
        expect(third._tag).toBe("RateLimited")
        // The live key's own budget is untouched.
        yield* Admission.admitKey(viaKey, Option.none())
      }).pipe(Effect.provide(layer))
    })
  )
})

describe("Sessions.cookieName", () => {
  it("is the __Host- cookie, or the plain one for plain-HTTP development", () => {
    expect(Sessions.cookieName(false)).toBe("__Host-waybill_session")
    expect(Sessions.cookieName(true)).toBe("waybill_session")
  })
})
