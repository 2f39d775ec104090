/**
 * A signed-in portal user's session as the documents metadata endpoint's credential (interface
 * 5, rule 1), through the real handler over stub ports: accepted without an Authorization header
 * or key, under the cookie name of the handler's `allowInsecureHttp` (like the portal's); an
 * Authorization header or a key always wins; answers are `no-store` and vary by both; the call
 * goes to the account's activity log with no key mode. And `memoMap`: two runtimes on one map
 * build a shared layer once.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  type ActivityEntry,
  ActivityStore,
  type ActivityStoreShape,
  AccountStore,
  type AccountStoreShape,
  Config,
  DocumentStore,
  type DocumentStoreShape,
  Entropy,
  KeyRing,
  RateLimits,
  type SecretPurpose,
  Sessions,
  UserStore,
  type UserStoreShape,
  WaybillConfig
} from "@waybill/core"
import { createHandler, type HandlerRequirements } from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const TOKEN = "S".repeat(43)
const account = { customerNo: "100001", name: "A", cancelMode: "local", rateCard: null, ipAllowlist: [], createdAt: 0 }
const liveKey = {
  id: "k-live",
  customerNo: account.customerNo,
  mode: "live",
  status: "active",
  generation: 1,
  hash: "h",
  hint: "wb_live_x",
  last4: null,
  createdAt: null,
  updatedAt: 0
}

const ring = KeyRing.fromSecrets(
  Object.fromEntries(
    (["api-key", "ticket", "otp", "webhook"] as const).map((p, i) => [
      p,
      [{ id: `${p}-1`, material: Redacted.make(new Uint8Array(32).fill(i + 1)) }]
    ])
  ) as unknown as Record<SecretPurpose, ReadonlyArray<{ id: string; material: Redacted.Redacted<Uint8Array> }>>
)

const makeLayer = async (logged: Array<ActivityEntry>) => {
  const sessionId = await Effect.runPromise(Sessions.hashToken(TOKEN))
  const now = Date.now()
  const users = {
    findSession: (id: string) =>
      Effect.succeed(
        id === sessionId
          ? Option.some({
              session: {
                id,
                userId: "usr_1",
                customerNo: account.customerNo,
                csrfToken: "c",
                createdAt: now,
                lastSeenAt: now,
                authenticatedAt: now,
                passwordVersion: 1
              },
              user: {
                userId: "usr_1",
                customerNo: account.customerNo,
                email: "ada@example.com",
                role: "owner",
                passwordHash: "x",
                passwordVersion: 1,
                passwordChangedAt: null,
                invitedBy: null,
                createdAt: 0
              }
            })
          : Option.none()
      ),
    touchSession: () => Effect.void,
    deleteSession: () => Effect.void
  } as unknown as UserStoreShape
  const accounts = {
    findAccount: () => Effect.succeed(Option.some(account)),
    findKey: (_: string, mode: string) => Effect.succeed(mode === "live" ? Option.some(liveKey) : Option.none()),
    findKeyWithAccount: () => Effect.succeed(Option.none()),
    linkedChildren: () => Effect.succeed([])
  } as unknown as AccountStoreShape
  // No order matches: a caller who got that far was authenticated ("No records found.").
  const documents = { lookupOrders: () => Effect.succeed([]) } as unknown as DocumentStoreShape
  const activity = {
    append: (entries: ReadonlyArray<ActivityEntry>) => Effect.sync(() => void logged.push(...entries))
  } as unknown as ActivityStoreShape
  return Layer.mergeAll(
    WaybillConfig.layer(Config.defaults),
    noBlocks,
    RateLimits.memory,
    Layer.succeed(AccountStore, accounts),
    Layer.succeed(UserStore, users),
    Layer.succeed(DocumentStore, documents),
    Layer.succeed(ActivityStore, activity),
    Entropy.webCrypto,
    ring,
    Logger.minimumLogLevel(LogLevel.Warning)
  ) as unknown as Layer.Layer<HandlerRequirements, never>
}

const docs = (origin: string, headers: Record<string, string> = {}, query = "control_no=123456") =>
  new Request(`${origin}/api/v1/order/docs/?${query}`, { headers })

const messageOf = async (response: Response) =>
  ((await response.json()) as { error: { message: string } }).error.message

describe("the documents endpoint with a portal session", () => {
  it("takes the session cookie when nothing else is given; a header or a key always wins", async () => {
    const logged: Array<ActivityEntry> = []
    const waybill = createHandler(await makeLayer(logged), {
      allowInsecureHttp: true,
      activity: { flushEveryMs: 1 }
    })
    try {
      const origin = "http://127.0.0.1"
      expect(await messageOf(await waybill.handler(docs(origin)))).toBe("You did not provide an access token.")
      const bySession = await waybill.handler(docs(origin, { cookie: `other=1; waybill_session=${TOKEN}` }))
      expect(bySession.headers.get("cache-control")).toBe("no-store")
      expect(bySession.headers.get("vary")).toBe("Authorization, Cookie")
      expect(await messageOf(bySession)).toBe("No records found.")
      // An unknown session is refused, never anonymous.
      const unknown = await waybill.handler(docs(origin, { cookie: `waybill_session=${"U".repeat(43)}` }))
      expect(await messageOf(unknown)).toBe("Access denied.")
      // The Authorization header wins, even an invalid one.
      const header = await waybill.handler(
        docs(origin, { cookie: `waybill_session=${TOKEN}`, authorization: "Bearer wb_live_nope" })
      )
      expect(await messageOf(header)).toBe("Access denied.")
      // A key in the query wins too: the credential the caller chose.
      const keyed = await waybill.handler(
        docs(origin, { cookie: `waybill_session=${TOKEN}` }, "control_no=123456&key=wb_live_nope")
      )
      expect(await messageOf(keyed)).toBe("Access denied.")
      // The __Host- name is not the plain-HTTP handler's cookie.
      const hostName = await waybill.handler(docs(origin, { cookie: `__Host-waybill_session=${TOKEN}` }))
      expect(await messageOf(hostName)).toBe("You did not provide an access token.")
    } finally {
      await waybill.dispose()
    }
    const sessionCalls = logged.filter((e) => e.keyMode === null)
    expect(sessionCalls.map((e) => [e.customerNo, e.path, e.status])).toEqual([
      [account.customerNo, "/api/v1/order/docs/", 200]
    ])
  })

  it("over HTTPS reads only the __Host- cookie", async () => {
    const waybill = createHandler(await makeLayer([]), { activity: false })
    try {
      const origin = "https://waybill.example.com"
      expect(await messageOf(await waybill.handler(docs(origin, { cookie: `waybill_session=${TOKEN}` })))).toBe(
        "You did not provide an access token."
      )
      expect(await messageOf(await waybill.handler(docs(origin, { cookie: `__Host-waybill_session=${TOKEN}` })))).toBe(
        "No records found."
      )
    } finally {
      await waybill.dispose()
    }
  })
})

describe("createHandler's memoMap", () => {
  it("two runtimes on one map build a shared layer once and release it with the last", async () => {
    let built = 0
    let released = 0
    const counted = Layer.scopedDiscard(
      Effect.acquireRelease(
        Effect.sync(() => void (built += 1)),
        () => Effect.sync(() => void (released += 1))
      )
    )
    const layer = Layer.merge(await makeLayer([]), counted) as unknown as Layer.Layer<HandlerRequirements, never>
    const memoMap = Effect.runSync(Layer.makeMemoMap)
    const first = createHandler(layer, { memoMap, activity: false, allowInsecureHttp: true })
    const second = createHandler(layer, { memoMap, activity: false, allowInsecureHttp: true })
    await first.handler(docs("http://127.0.0.1"))
    await second.handler(docs("http://127.0.0.1"))
    expect(built).toBe(1)
    await first.dispose()
    expect(released).toBe(0)
    await second.dispose()
    expect(released).toBe(1)
  })
})
