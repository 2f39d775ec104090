/**
 * The example host builds its layer once for the API handler and the portal (one memo map): a
 * service of the host's layer is built a single time however both are used, and released once
 * when the host stops. (Before, each built its own copy: two sets of stores and rate limiters
 * over one database.) And the host's hourly cleanup deletes ended portal sessions.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import * as Option from "effect/Option"
import { Cancel, Sessions, UserStore } from "@waybill/core"
import { startHost } from "./harness.js"
import { portalUser } from "./browser/users.js"

describe("the host's API and portal share one built layer", () => {
  it("a service of the layer is built once for both, and released once", async () => {
    let built = 0
    let released = 0
    const counted = Layer.scoped(
      Cancel.CancelProvider,
      Effect.acquireRelease(
        Effect.sync(() => {
          built += 1
          return { cancel: () => Effect.succeed({}) }
        }),
        () => Effect.sync(() => void (released += 1))
      )
    )
    const h = await startHost({ extraLayer: counted })
    try {
      expect((await fetch(`${h.url}/api/v1/utilities/quote/?origin=60606&destination=60613&weight=5`)).status).toBe(200)
      const page = await fetch(`${h.url}/portal/signin`)
      expect(page.status).toBe(200)
      await page.text()
      expect((await fetch(`${h.url}/api/v1/order/docs/?control_no=123456`)).status).toBe(200)
      expect(built).toBe(1)
    } finally {
      await h.close()
    }
    expect(released).toBe(1)
  })
})

describe("the host's session purge", () => {
  it("deletes sessions past a timeout and keeps live ones", async () => {
    const h = await startHost({ sessions: { everyMs: 200 } })
    try {
      const user = await portalUser(h)
      const now = Date.now()
      const insert = (id: string, createdAt: number) =>
        h.run(
          Effect.gen(function* () {
            const store = yield* UserStore
            const found = yield* store.findUserByEmail(user.email)
            yield* store.insertSession({
              id,
              userId: user.userId,
              customerNo: user.account.customerNo,
              csrfToken: "c",
              createdAt,
              lastSeenAt: createdAt,
              authenticatedAt: createdAt,
              passwordVersion: Option.getOrThrow(found).passwordVersion
            })
          })
        )
      const exists = (id: string) =>
        h.run(
          Effect.map(
            Effect.flatMap(UserStore, (s) => s.findSession(id)),
            Option.isSome
          )
        )
      const ended = "a".repeat(64)
      const live = "b".repeat(64)
      await insert(ended, now - Sessions.ABSOLUTE_MS - 60_000)
      await insert(live, now)
      for (let i = 0; i < 300 && (await exists(ended)); i++) await new Promise((r) => setTimeout(r, 100))
      expect(await exists(ended)).toBe(false)
      expect(await exists(live)).toBe(true)
    } finally {
      await h.close()
    }
  })
})
