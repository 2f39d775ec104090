import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as Abuse from "../src/access/Abuse.js"
import type { AccountRecord, Principal } from "../src/access/Account.js"
import { AccountStore, type AccountStoreShape } from "../src/access/AccountStore.js"
import * as Admission from "../src/access/Admission.js"
import * as ClientIp from "../src/access/ClientIp.js"
import * as Credentials from "../src/access/Credentials.js"
import { defaults, WaybillConfig, type WaybillConfigShape } from "../src/shared/Config.js"
import { type IpBlock, IpBlocklist } from "../src/access/IpBlocklist.js"
import { KeyRing } from "../src/shared/KeyRing.js"
import * as RateLimits from "../src/access/RateLimiter.js"
import { UserStore, type UserStoreShape } from "../src/access/UserStore.js"

const ip = (s: string) => ClientIp.parse(s)

const account = (ipAllowlist: ReadonlyArray<string> = []): AccountRecord => ({
  customerNo: "1234567",
  name: "A",
  cancelMode: "local",
  rateCard: null,
  ipAllowlist,
  createdAt: 0
})

const principal = (ipAllowlist: ReadonlyArray<string> = [], mode: "live" | "test" = "live"): Principal => ({
  account: account(ipAllowlist),
  key: {
    id: `key_1234567_${mode}`,
    customerNo: "1234567",
    mode,
    status: "active",
    generation: 1,
    hash: "h",
    hint: "wb_live_xxxx",
    last4: null,
    createdAt: null,
    updatedAt: 0
  }
})

const config = (limits: Partial<WaybillConfigShape["limits"]> = {}): WaybillConfigShape => ({
  ...defaults,
  limits: { ...defaults.limits, ...limits }
})

/** An in-memory IpBlocklist, enough for the abuse rules. */
const memoryBlocklist = () => {
  const blocks = new Map<string, IpBlock>()
  const layer = Layer.succeed(IpBlocklist, {
    find: (k) => Effect.sync(() => Option.fromNullable(blocks.get(k))),
    put: (b) => Effect.sync(() => void blocks.set(b.ipKey, b)),
    remove: (k) => Effect.sync(() => blocks.delete(k)),
    listActive: () => Effect.dieMessage("the admission door never lists blocks")
  })
  return { blocks, layer }
}

const services = (c: WaybillConfigShape = config()) => Layer.mergeAll(RateLimits.memory, WaybillConfig.layer(c))

describe("RateLimits.step", () => {
  it.prop(
    "counts consecutive hits in a window and restarts in a later one",
    {
      start: fc.integer({ min: 0, max: 1e12 }),
      windowMs: fc.integer({ min: 1, max: 1e7 }),
      n: fc.integer({ min: 1, max: 30 })
    },
    ({ n, start, windowMs }) => {
      let c: RateLimits.Counter | undefined
      const now = RateLimits.windowStart(start, windowMs)
      for (let i = 0; i < n; i++) c = RateLimits.step(c, now + (i % windowMs), windowMs)
      expect(c).toEqual({ windowStart: now, count: n })
      expect(RateLimits.step(c, now + windowMs, windowMs)).toEqual({ windowStart: now + windowMs, count: 1 })
      // A host whose clock is behind still counts in the newer stored window.
      expect(RateLimits.step(c, now - 1, windowMs).count).toBe(n + 1)
    }
  )
})

describe("Admission.allowlisted", () => {
  it("empty accepts all; entries accept their blocks only; unknown or unparsable never match", () => {
    expect(Admission.allowlisted(account(), Option.none())).toBe(true)
    const list = account(["203.0.113.0/24", "2001:db8:1::/48"])
    expect(Admission.allowlisted(list, ip("203.0.113.77"))).toBe(true)
    expect(Admission.allowlisted(list, ip("::ffff:203.0.113.8"))).toBe(true)
    expect(Admission.allowlisted(list, ip("2001:db8:1:ff::1"))).toBe(true)
    expect(Admission.allowlisted(list, ip("203.0.114.1"))).toBe(false)
    expect(Admission.allowlisted(list, ip("2001:db8:2::1"))).toBe(false)
    expect(Admission.allowlisted(list, Option.none())).toBe(false)
    expect(Admission.allowlisted(account(["not-an-ip"]), ip("203.0.113.1"))).toBe(false)
  })
})

describe("Admission.admitKey", () => {
  it.effect("counts per key, records usage for the headers, and refuses over the limit", () =>
    Effect.gen(function* () {
      const p = principal()
      const client = ip("198.51.100.1")
      yield* TestClock.setTime(60_000 * 10 + 20_000)
      yield* Admission.admitKey(p, client)
      expect(yield* FiberRef.get(Admission.currentUsage)).toEqual(
        Option.some({ policy: "key", limit: 2, windowSeconds: 60, remaining: 1, resetSeconds: 40 })
      )
      yield* Admission.admitKey(p, client)
      const refused = yield* Effect.flip(Admission.admitKey(p, client))
      expect(refused).toMatchObject({ _tag: "RateLimited", policy: "key", limit: 2, retryAfterSeconds: 40 })
      // The test key of the same account has its own budget.
      yield* Admission.admitKey(principal([], "test"), client)
    }).pipe(Effect.provide(services(config({ perKey: { requests: 2, windowSeconds: 60 } }))))
  )

  it.effect("an address outside the allowlist is refused before it is counted", () =>
    Effect.gen(function* () {
      const p = principal(["203.0.113.0/24"])
      const refused = yield* Effect.flip(Admission.admitKey(p, ip("198.51.100.1")))
      expect(refused._tag).toBe("IpNotAllowed")
      expect(yield* FiberRef.get(Admission.currentUsage)).toEqual(Option.none())
      yield* Admission.admitKey(p, ip("203.0.113.9"))
    }).pipe(Effect.provide(services()))
  )
})

describe("Admission.admit and admitOptional", () => {
  /** The optional-key door as quote and track use it: header, then query `key`. */
  const optional = (input: {
    readonly client: Option.Option<ClientIp.Address>
    readonly authorization: string | null
    readonly key: ReadonlyArray<string>
  }) =>
    Admission.admitOptional({
      client: input.client,
      resolution: Credentials.resolve(input.authorization, [{ source: "query.key", values: input.key }])
    })
  const noStore = Layer.mergeAll(
    memoryBlocklist().layer,
    Layer.succeed(AccountStore, {} as AccountStoreShape),
    Layer.succeed(UserStore, {} as UserStoreShape),
    KeyRing.fromSecrets({
      "api-key": [{ id: "k", material: Redacted.make(new Uint8Array(32)) }],
      ticket: [],
      otp: [],
      webhook: []
    })
  )

  it.effect("without a key: anonymous, limited per address (IPv6 by /64)", () =>
    Effect.gen(function* () {
      const input = (address: string) => ({ client: ip(address), authorization: null, key: [] })
      expect(yield* optional(input("2001:db8:5:6::1"))).toEqual(Option.none())
      yield* Effect.flip(optional(input("2001:db8:5:6::2"))).pipe(Effect.map((e) => expect(e._tag).toBe("RateLimited")))
      yield* optional(input("2001:db8:5:7::1"))
      const usage = yield* FiberRef.get(Admission.currentUsage)
      expect(Option.map(usage, (u) => [u.policy, u.limit, u.remaining])).toEqual(Option.some(["ip", 1, 0]))
      // No known address: nothing to count by.
      yield* optional({ client: Option.none(), authorization: null, key: [] })
    }).pipe(Effect.provide(Layer.merge(services(config({ perClient: { requests: 1, windowSeconds: 60 } })), noStore)))
  )

  it.effect("a key that does not authenticate is refused, never treated as anonymous", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.flip(
        optional({ client: ip("198.51.100.1"), authorization: null, key: ["wb_live_nope"] })
      )
      expect(bad._tag).toBe("InvalidCredential")
      const header = yield* Effect.flip(optional({ client: ip("198.51.100.1"), authorization: "Basic abc", key: [] }))
      expect(header._tag).toBe("InvalidCredential")
      const twice = yield* Effect.flip(optional({ client: ip("198.51.100.1"), authorization: null, key: ["a", "b"] }))
      expect(twice).toMatchObject({ _tag: "InvalidCredential", reason: "duplicate" })
    }).pipe(Effect.provide(Layer.merge(services(), noStore)))
  )

  it.effect("a required key that is missing is MissingCredential, and counts no address limit", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(
        Admission.admit({ client: ip("198.51.100.1"), resolution: Credentials.resolve(null, []) })
      )
      expect(missing._tag).toBe("MissingCredential")
      expect(yield* FiberRef.get(Admission.currentUsage)).toEqual(Option.none())
    }).pipe(Effect.provide(Layer.merge(services(), noStore)))
  )

  it.effect("a blocked address is refused before any credential is looked at", () => {
    const { blocks, layer: blocked } = memoryBlocklist()
    const ipKey = ClientIp.blockKey(Option.getOrThrow(ip("198.51.100.1")))
    blocks.set(ipKey, { ipKey, until: Number.MAX_SAFE_INTEGER, reason: "t", createdAt: 0, strikes: 1 })
    return Effect.gen(function* () {
      const refused = yield* Effect.flip(
        Admission.admit({ client: ip("198.51.100.1"), resolution: Credentials.resolve("Basic abc", []) })
      )
      expect(refused._tag).toBe("IpBlocked")
    }).pipe(Effect.provide(Layer.mergeAll(services(), noStore, blocked)))
  })
})

describe("Abuse", () => {
  const abuse = {
    windowSeconds: 3600,
    maxUnrelatedAccounts: 2,
    maxMisses: 3,
    blockSeconds: [3600, 21600, 86400] as const
  }

  it("block durations grow by strike and then stay at the last", () => {
    expect([1, 2, 3, 4, 9].map((n) => Abuse.blockSecondsFor(n, [3600, 21600, 86400]))).toEqual([
      3600, 21600, 86400, 86400, 86400
    ])
  })

  it.effect("misses past the threshold block the address: 1 h, then 6 h on the next window's repeat", () => {
    const { blocks, layer } = memoryBlocklist()
    return Effect.gen(function* () {
      const client = ip("198.51.100.7")
      for (let i = 0; i < 3; i++) yield* Abuse.recordMiss(client)
      expect(blocks.size).toBe(0)
      yield* Abuse.recordMiss(client)
      expect(blocks.get("198.51.100.7")).toMatchObject({ until: 3_600_000, strikes: 1 })
      // In-flight requests crossing the line while blocked do not add strikes.
      yield* Abuse.recordMiss(client)
      expect(blocks.get("198.51.100.7")?.strikes).toBe(1)

      yield* TestClock.setTime(3_600_000) // block over, new window
      for (let i = 0; i < 4; i++) yield* Abuse.recordMiss(client)
      expect(blocks.get("198.51.100.7")).toMatchObject({ until: 3_600_000 + 21_600_000, strikes: 2 })
    }).pipe(Effect.provide(Layer.merge(services(config({ abuse })), layer)))
  })

  it.effect("touching more unrelated accounts than allowed blocks; the same account counts once", () => {
    const { blocks, layer } = memoryBlocklist()
    return Effect.gen(function* () {
      const client = ip("2001:db8:9:9::1")
      for (let i = 0; i < 10; i++) yield* Abuse.recordTouch(client, "1000001")
      yield* Abuse.recordTouch(client, "1000002")
      expect(blocks.size).toBe(0)
      yield* Abuse.recordTouch(ip("2001:db8:9:9::ffff"), "1000003") // same /64
      expect([...blocks.keys()]).toEqual(["2001:db8:9:9::/64"])
    }).pipe(Effect.provide(Layer.merge(services(config({ abuse })), layer)))
  })

  it.effect("forgive lifts the block and the counts, so the next miss does not block again", () => {
    const { blocks, layer } = memoryBlocklist()
    return Effect.gen(function* () {
      const client = ip("198.51.100.8")
      for (let i = 0; i < 4; i++) yield* Abuse.recordMiss(client)
      expect(blocks.size).toBe(1)
      expect(yield* Abuse.forgive("198.51.100.8")).toBe(true)
      yield* Abuse.recordMiss(client)
      expect(blocks.size).toBe(0)
    }).pipe(Effect.provide(Layer.merge(services(config({ abuse })), layer)))
  })
})
