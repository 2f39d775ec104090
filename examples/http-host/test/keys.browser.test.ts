/**
 * API Access and Activity in a real browser against the real example host: both key slots;
 * regenerating the live key through the password confirmation, after which the OLD key gets 401
 * from booking and the new one books; disable and enable; the activity table lists those calls
 * and filters them by status; bad filters and cursors show a notice, not an error page; a
 * member sees the keys and cannot regenerate. Every page is checked with axe-core.
 */
import * as Effect from "effect/Effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts, type ActivityEntry, ActivityStore, Sessions, Ulid, UserStore } from "@waybill/core"
import { postJson, shipment, startHost, type TestHost } from "./harness.js"
import { expectAxeClean, screenshot, scrollsSideways, useBrowser } from "./browser/browser.js"
import { portalUser, signIn } from "./browser/users.js"

let h: TestHost
beforeAll(async () => {
  h = await startHost()
})
afterAll(async () => {
  await h.close()
})

const browser = useBrowser({ viewport: { width: 1100, height: 800 } })

/** Books the sample shipment with `key`; the answer's status. */
const book = async (key: string): Promise<number> => {
  const r = await postJson(
    `${h.url}/api/v1/order/json/`,
    { data: { shipments: [shipment()] } },
    { authorization: `Bearer ${key}` }
  )
  return r.status
}

/** Polls an async probe until it gives a value (the activity recorder writes every 250 ms). */
const eventually = async <A>(what: string, probe: () => Promise<A | undefined | false>, deadlineMs = 20_000) => {
  const until = Date.now() + deadlineMs
  for (;;) {
    const found = await probe()
    if (found !== undefined && found !== false) return found
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

/** Makes the page's session look signed in 11 minutes ago, so the next sensitive step asks again. */
const ageAuthentication = async (page: Page) => {
  const cookie = (await page.context().cookies()).find((c) => c.name === "waybill_session")
  expect(cookie).toBeDefined()
  await h.run(
    Effect.gen(function* () {
      const id = yield* Sessions.hashToken(cookie!.value)
      const now = Date.now()
      yield* Effect.flatMap(UserStore, (s) =>
        s.touchSession(id, { lastSeenAt: now, authenticatedAt: now - Sessions.RECENT_AUTH_MS - 60_000 })
      )
    })
  )
}

/** The activity table's rows as `[endpoint, key, status]`. */
const activityRows = (page: Page) =>
  page
    .locator("table", { has: page.locator("caption", { hasText: "Recent API calls" }) })
    .locator("tbody tr")
    .evaluateAll((rows) =>
      rows
        .map((r) => [...r.querySelectorAll("td")].map((td) => (td.textContent ?? "").trim()))
        .filter((c) => c.length > 1)
    )

describe("API Access and Activity (browser)", () => {
  it("shows both slots; regenerate (with the password again) kills the old key; disable and enable; the activity lists the calls", async () => {
    const user = await portalUser(h)
    const oldLive = user.account.liveKey
    expect(await book(oldLive)).toBe(200)
    const page = browser.page()
    await signIn(page, h, user)
    expect(new URL(page.url()).pathname).toBe("/portal/keys")

    // Both slots, with the last characters of each key.
    await expect(page.getByRole("heading", { name: "Production (live) key" }).isVisible()).resolves.toBe(true)
    await expect(page.getByRole("heading", { name: "Test key" }).isVisible()).resolves.toBe(true)
    const liveSlot = page.locator("section.slot", { has: page.getByRole("heading", { name: "Production (live) key" }) })
    expect(await liveSlot.textContent()).toContain(`…${oldLive.slice(-4)}`)
    expect(await page.locator("section.slot", { hasText: "Test key" }).textContent()).toContain(
      `…${user.account.testKey.slice(-4)}`
    )
    await eventually("the first booking in the activity", async () => {
      await page.reload()
      return (await activityRows(page)).some((r) => r[1] === "POST /api/v1/order/json/" && r[3] === "200")
    })
    await expectAxeClean(page)
    await screenshot(page, "keys-page")

    // Regenerate: the password was entered long ago, so the portal asks for it again first.
    await ageAuthentication(page)
    await page.getByRole("link", { name: "Regenerate live key" }).click()
    await page.waitForURL((url) => url.pathname === "/portal/confirm")
    expect(new URL(page.url()).searchParams.get("next")).toBe("/portal/keys/live/regenerate")
    await expectAxeClean(page)
    await screenshot(page, "keys-confirm")
    await page.getByLabel("Password", { exact: true }).fill("not my password at all")
    await page.getByRole("button", { name: "Continue" }).click()
    expect(await page.locator("#field-password-error").textContent()).toBe("That is not your password.")
    await page.getByLabel("Password", { exact: true }).fill(user.password)
    await Promise.all([
      page.waitForURL((url) => url.pathname === "/portal/keys/live/regenerate"),
      page.getByRole("button", { name: "Continue" }).click()
    ])
    await expectAxeClean(page)
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Regenerate the live key" }).click()
    ])
    expect(answer.status()).toBe(200)
    expect(answer.headers()["cache-control"]).toBe("no-store")
    const newLive = (await page.locator(".one-time-secret code.secret").textContent()) ?? ""
    expect(newLive).toMatch(/live/)
    expect(newLive).not.toBe(oldLive)
    await expectAxeClean(page)
    await screenshot(page, "keys-new-key")

    // The old key is dead at once; the new one books.
    expect(await book(oldLive)).toBe(401)
    expect(await book(newLive)).toBe(200)

    // Shown once: the page lists only its last characters now.
    await page.goto(`${h.url}/portal/keys`)
    expect(await page.content()).not.toContain(newLive)
    expect(await liveSlot.textContent()).toContain(`…${newLive.slice(-4)}`)

    // Disable: the key is refused; enable: it books again.
    await page.getByRole("button", { name: "Disable live key" }).click()
    expect(await page.getByRole("status").first().textContent()).toContain("The key is disabled")
    expect(await liveSlot.textContent()).toContain("disabled")
    expect(await book(newLive)).toBe(401)
    await page.getByRole("button", { name: "Enable live key" }).click()
    expect(await liveSlot.textContent()).toContain("active")
    expect(await book(newLive)).toBe(200)

    // The activity: the bookings with their statuses (the disabled key's 401 included), newest first.
    const rows = await eventually("the calls in the activity", async () => {
      await page.goto(`${h.url}/portal/keys`)
      const found = await activityRows(page)
      return found.filter((r) => r[1] === "POST /api/v1/order/json/").length >= 4 ? found : undefined
    })
    expect(rows.map((r) => r[3]).slice(0, 4)).toEqual(["200", "401", "200", "200"])
    expect(rows[0]![2]).toBe("live")
    expect(rows[0]![4]).toBe("127.0.0.1")
    expect(rows[0]![5]).toMatch(/^[A-Za-z0-9._-]+$/)

    // Filter by status: only the 4xx.
    await page.getByLabel("Status").fill("4xx")
    await page.getByRole("button", { name: "Filter" }).click()
    expect(new URL(page.url()).searchParams.get("status")).toBe("4xx")
    const refused = await activityRows(page)
    expect(refused.length).toBeGreaterThanOrEqual(1)
    expect(refused.every((r) => r[3]!.startsWith("4"))).toBe(true)
    await page.getByLabel("Key", { exact: true }).selectOption("test")
    await page.getByRole("button", { name: "Filter" }).click()
    expect(await page.locator("tbody td").first().textContent()).toBe("No calls match.")
    await expectAxeClean(page)
  })

  it("pages the activity (Older, Newest) and answers a bad filter or cursor with a notice, never a 500", async () => {
    const user = await portalUser(h)
    // 25 recorded calls, as the recorder writes them: one page of 20, then 5.
    const t0 = Date.now() - 60_000
    await h.run(
      Effect.gen(function* () {
        const entries: Array<ActivityEntry> = []
        for (let i = 0; i < 25; i++)
          entries.push({
            id: yield* Ulid.make,
            at: t0 + i * 1000,
            customerNo: user.account.customerNo,
            method: "GET",
            path: `/api/v1/order/track/${i}/`,
            keyMode: "test" as const,
            status: i % 5 === 0 ? 404 : 200,
            clientIp: "192.0.2.7",
            requestId: `req-${i}`
          })
        yield* Effect.flatMap(ActivityStore, (s) => s.append(entries))
      })
    )
    const page = browser.page()
    await signIn(page, h, user)
    const first = await activityRows(page)
    expect(first).toHaveLength(20)
    expect(first[0]![5]).toBe("req-24")
    expect(await page.getByRole("link", { name: "Newest" }).count()).toBe(0)
    await page.getByRole("link", { name: "Older" }).click()
    const second = await activityRows(page)
    expect(second.map((r) => r[5])).toEqual(["req-4", "req-3", "req-2", "req-1", "req-0"])
    expect(await page.getByRole("link", { name: "Older" }).count()).toBe(0)
    await expectAxeClean(page)
    await page.getByRole("link", { name: "Newest" }).click()
    expect((await activityRows(page))[0]![5]).toBe("req-24")
    // An exact status: the five 404s.
    await page.goto(`${h.url}/portal/keys?status=404&mode=test`)
    expect((await activityRows(page)).map((r) => r[3])).toEqual(["404", "404", "404", "404", "404"])

    const bad = await page.goto(`${h.url}/portal/keys?status=abc&mode=prod`)
    expect(bad?.status()).toBe(400)
    expect(await page.getByRole("alert").textContent()).toBe("Check the filters marked below.")
    expect(await page.locator("#field-status-error").textContent()).toContain("2xx")
    expect(await page.locator("#field-mode-error").textContent()).toContain("live or test")
    await expectAxeClean(page)
    const cursor = await page.goto(`${h.url}/portal/keys?starting_after=not-a-cursor`)
    expect(cursor?.status()).toBe(200)
    expect(await page.getByRole("alert").textContent()).toContain("does not exist")
    const exact = await page.goto(`${h.url}/portal/keys?status=401`)
    expect(exact?.status()).toBe(200)
  })

  it("lets a member see the keys but not regenerate, disable or enable them", async () => {
    const owner = await portalUser(h)
    const member = await portalUser(h, { account: owner.account, role: "member" })
    const page = browser.page()
    await signIn(page, h, member)
    expect(await page.getByRole("heading", { name: "Production (live) key" }).isVisible()).toBe(true)
    expect(await page.getByRole("link", { name: /Regenerate/ }).count()).toBe(0)
    expect(await page.getByRole("button", { name: /Disable/ }).count()).toBe(0)
    const ask = await page.goto(`${h.url}/portal/keys/live/regenerate`)
    expect(ask?.status()).toBe(403)
    // A forged POST with the member's own session and CSRF token is refused by core too.
    await page.goto(`${h.url}/portal/keys`)
    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    for (const path of ["/portal/keys/live/regenerate", "/portal/keys/live/status"]) {
      const r = await page.request.post(`${h.url}${path}`, {
        form: { csrf, status: "disabled" },
        headers: { origin: h.url },
        maxRedirects: 0
      })
      expect(r.status()).toBe(403)
    }
    const slots = await h.run(Accounts.keySlots(owner.account.customerNo))
    expect(slots.map((s) => [s.status, s.last4])).toEqual([
      ["active", owner.account.liveKey.slice(-4)],
      ["active", owner.account.testKey.slice(-4)]
    ])
    await expectAxeClean(page)
  })

  it("fits a 375px-wide phone without scrolling sideways", async () => {
    const user = await portalUser(h)
    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })
    const page = await phone.newPage()
    await signIn(page, h, user)
    expect(await scrollsSideways(page)).toBe(false)
    await expectAxeClean(page)
    await screenshot(page, "keys-phone")
  })
})
