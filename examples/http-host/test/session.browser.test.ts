/**
 * The portal's session pages in a real browser against the real example host: the provisioned
 * primary user signs in with the pre-register password; sign-out ends the server session; an
 * idle session ends (the host's clock moves) with a notice; a form posted from another origin is
 * refused; ten failures throttle even the right password with the one generic message; an
 * invitation e-mail's link sets a password and signs in; a reset e-mail's link does the same;
 * changing the password ends the other sessions; and the session is a credential of the
 * documents endpoint (an Authorization header wins), logged in the activity log without a key
 * mode. Pages are checked with axe-core; screenshots are `docs/portal/session-*.png`.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { simpleParser } from "mailparser"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Activity, Config, Sessions, UserStore, Users } from "@waybill/core"
import { provisioningLayer } from "../src/provisioning.js"
import { bookOne, e2eConfig, startHost, type TestHost, testClock, waitFor } from "./harness.js"
import { action, codeAndLink, PASSWORD, recipient, STEP1 } from "./provisioning.helpers.js"
import { expectAxeClean, screenshot, useBrowser } from "./browser/browser.js"
import { PORTAL_PASSWORD, portalUser, signIn } from "./browser/users.js"

/** The host's clock: real time plus `time.offsetMs`, so a test can age every session at once. */
const { clock, time } = testClock()

const config = {
  ...e2eConfig,
  provisioning: {
    ...Config.provisioningDefaults,
    perIpHour: { requests: 1_000, windowSeconds: 3600 },
    perIpDay: { requests: 1_000, windowSeconds: 86400 }
  }
}

let h: TestHost
let mailDir: string
let forger: Server
let forgerUrl: string

beforeAll(async () => {
  h = await startHost({ clock, config })
  mailDir = join(h.dir, "waybill.db.mail")
  // Another origin (another port) serving a page whose form posts to the portal by itself.
  forger = createServer((req, res) => {
    const target = new URL(req.url ?? "/", "http://x").searchParams.get("target") ?? ""
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end(
      `<!doctype html><title>Win a prize</title><form method="post" action="${target}">` +
        `<input name="current" value="x"><input name="password" value="pwned pwned pwned 1">` +
        `<input name="confirm" value="pwned pwned pwned 1"><input name="csrf" value="guess"></form>` +
        `<script>document.forms[0].submit()</script>`
    )
  })
  await new Promise<void>((resolve) => forger.listen(0, "127.0.0.1", resolve))
  forgerUrl = `http://127.0.0.1:${(forger.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => forger.close(() => resolve()))
  await h.close()
})

const browser = useBrowser({ viewport: { width: 1100, height: 800 } })

/** The newest e-mail to `to` holding a portal link of `purpose`: the link. */
const portalLink = async (to: string, purpose: "invite" | "reset"): Promise<string> => {
  const pattern = new RegExp(`(https?://\\S+/portal/${purpose}/\\?token=[A-Za-z0-9_-]+)`)
  return waitFor(`a ${purpose} e-mail to ${to}`, () => {
    for (const file of readdirSync(mailDir).sort().reverse()) {
      const text = readFileSync(join(mailDir, file), "utf8")
      if (!text.toLowerCase().includes(to.toLowerCase())) continue
      const found = pattern.exec(text.replace(/=\r?\n/g, "").replace(/=3D/g, "="))
      if (found !== null) return found[1]!
    }
    return undefined
  })
}

/** The session cookie of a context (plain-HTTP development name). */
const sessionOf = async (context: BrowserContext) =>
  (await context.cookies()).find((c) => c.name === "waybill_session")?.value

/** Whether `page` is signed in: the change-password page opens (not the sign-in page). */
const signedIn = async (page: Page) => {
  await page.goto(`${h.url}/portal/password`)
  return new URL(page.url()).pathname === "/portal/password"
}

const flashText = (page: Page) => page.locator(".flash").first().textContent()

describe("signing in and out (browser)", () => {
  it("the provisioned primary user signs in with the pre-register password", async () => {
    const email = `ada.session-${process.pid}@acme-session-${process.pid}.example`
    const pre = await action(h.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(pre.status).toBe(200)
    const idx = pre.body.data.wait_idx as string
    const mail = await waitFor("the verification e-mail", () =>
      readdirSync(mailDir).length > 0 ? readdirSync(mailDir) : undefined
    )
    expect(mail.length).toBeGreaterThan(0)
    let code = ""
    for (const file of readdirSync(mailDir)) {
      const parsed = await simpleParser(readFileSync(join(mailDir, file)))
      if (recipient(parsed) === email.toLowerCase()) code = codeAndLink(parsed).code
    }
    expect((await action(h.url, "pre-register-verify", { idx, email_address: email, verify_code: code })).status).toBe(
      200
    )
    const check = await action(h.url, "pre-register-check", { idx, email_address: email })
    const validation_key = check.body.data.validation_key as string
    expect((await action(h.url, "start", { validation_key })).status).toBe(200)
    expect((await action(h.url, "step1", { validation_key, ...STEP1 })).status).toBe(200)

    const page = browser.page()
    await signIn(page, h, { email, password: PASSWORD })
    expect(await signedIn(page)).toBe(true)
    expect(await page.locator(".site-footer").textContent()).toContain(email)
  })

  it("sign-out ends the server session: the old cookie opens nothing", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, user)
    const token = await sessionOf(browser.context())
    expect(token).toBeDefined()
    await page.goto(`${h.url}/portal/password`)
    await Promise.all([
      page.waitForURL((url) => url.pathname === "/portal/signin"),
      page.getByRole("button", { name: "Sign out" }).click()
    ])
    expect(await flashText(page)).toBe("You are signed out.")
    expect(await sessionOf(browser.context())).toBeUndefined()
    // The token itself is dead on the server, not only forgotten by the browser.
    const replay = await fetch(`${h.url}/portal/password`, {
      headers: { cookie: `waybill_session=${token}` },
      redirect: "manual"
    })
    expect(replay.status).toBe(303)
    expect(replay.headers.get("location")).toMatch(/^\/portal\/signin\?next=/)
  })

  it("an idle session ends: back to sign-in with a notice, the cookie cleared", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, user)
    time.offsetMs += Sessions.IDLE_MS + 60_000
    try {
      await page.goto(`${h.url}/portal/password`)
      expect(new URL(page.url()).pathname).toBe("/portal/signin")
      expect(await flashText(page)).toBe("Your session has ended. Sign in again to continue.")
      expect(await sessionOf(browser.context())).toBeUndefined()
      await expectAxeClean(page)
      await screenshot(page, "session-ended")
    } finally {
      time.offsetMs = 0
    }
  })

  it("refuses a form posted from another origin (403) and changes nothing", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, user)
    const before = await h.run(Effect.flatMap(UserStore, (s) => s.findUserByEmail(user.email)))
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${h.url}/portal/password` && r.request().method() === "POST"),
      page.goto(`${forgerUrl}/?target=${encodeURIComponent(`${h.url}/portal/password`)}`)
    ])
    expect(answer.status()).toBe(403)
    const after = await h.run(Effect.flatMap(UserStore, (s) => s.findUserByEmail(user.email)))
    expect(Option.getOrThrow(after).passwordVersion).toBe(Option.getOrThrow(before).passwordVersion)
    expect(await signedIn(page)).toBe(true)
  })

  it("after 10 failures even the right password is refused with the one generic message", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    const attempt = async (password: string) => {
      await page.goto(`${h.url}/portal/signin`)
      await page.getByLabel("E-mail").fill(user.email)
      await page.getByLabel("Password", { exact: true }).fill(password)
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST"),
        page.getByRole("button", { name: "Sign in" }).click()
      ])
      await page.waitForLoadState()
    }
    for (let i = 0; i < 10; i++) await attempt(`wrong password number ${i}`)
    await attempt(user.password)
    expect(await page.getByRole("alert").textContent()).toBe("E-mail or password is incorrect.")
    expect(new URL(page.url()).pathname).toBe("/portal/signin")
    expect(await sessionOf(browser.context())).toBeUndefined()
    await screenshot(page, "session-throttled")
  })
})

describe("one-time links (browser)", () => {
  it("an invitation e-mail's link sets a password and signs in; used once, it is dead", async () => {
    const account = await h.newAccount("Invited Co")
    const email = `invitee-${process.pid}@example.com`
    await h.run(
      Users.invite({ customerNo: account.customerNo, email, linkBase: h.url }).pipe(
        Effect.provide(provisioningLayer(join(h.dir, "waybill.db")))
      )
    )
    const link = await portalLink(email, "invite")
    expect(link.startsWith(`${h.url}/portal/invite/?token=`)).toBe(true)
    const page = browser.page()
    await page.goto(link)
    expect(await page.locator("#link-email").textContent()).toBe(email)
    await expectAxeClean(page)
    await screenshot(page, "session-invite")

    // The policy's refusal is shown next to the field.
    await page.getByLabel("New password", { exact: true }).fill("password1234")
    await page.getByLabel("New password again").fill("password1234")
    await Promise.all([page.waitForLoadState(), page.getByRole("button", { name: "Set password" }).click()])
    expect(await page.locator("#field-password-error").textContent()).toBe(
      "The password is too common. Choose a longer, less predictable passphrase."
    )
    expect(await page.locator("#field-password").getAttribute("aria-describedby")).toContain("field-password-error")
    await expectAxeClean(page)

    await page.getByLabel("New password", { exact: true }).fill(PORTAL_PASSWORD)
    await page.getByLabel("New password again").fill(PORTAL_PASSWORD)
    await Promise.all([
      page.waitForURL((url) => url.pathname !== "/portal/invite/"),
      page.getByRole("button", { name: "Set password" }).click()
    ])
    expect(await sessionOf(browser.context())).toBeDefined()
    expect(await signedIn(page)).toBe(true)
    expect(await page.locator(".site-footer").textContent()).toContain(email)

    const again = await page.goto(link)
    expect(again?.status()).toBe(410)
    expect(await page.locator("h1").textContent()).toBe("This link no longer works")
    await expectAxeClean(page)
    await screenshot(page, "session-dead-link")
  })

  it("a reset asked from the sign-in page arrives by e-mail; its link sets a new password and signs in", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    await page.goto(`${h.url}/portal/signin`)
    await page.getByRole("link", { name: "Forgot your password?" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/reset")
    await expectAxeClean(page)
    await screenshot(page, "session-reset-request")
    await page.getByLabel("E-mail").fill(user.email)
    await Promise.all([
      page.waitForURL((url) => url.pathname === "/portal/signin"),
      page.getByRole("button", { name: "Send the link" }).click()
    ])
    const answer = await flashText(page)
    expect(answer).toMatch(/^If an account uses that address/)

    // An address without a user gets the very same answer.
    await page.goto(`${h.url}/portal/reset`)
    await page.getByLabel("E-mail").fill(`nobody-${process.pid}@example.com`)
    await Promise.all([
      page.waitForURL((url) => url.pathname === "/portal/signin"),
      page.getByRole("button", { name: "Send the link" }).click()
    ])
    expect(await flashText(page)).toBe(answer)

    const link = await portalLink(user.email, "reset")
    expect(link.startsWith(`${h.url}/portal/reset/?token=`)).toBe(true)
    await page.goto(link)
    await expectAxeClean(page)
    await screenshot(page, "session-reset")
    const fresh = "a brand new passphrase for the reset"
    await page.getByLabel("New password", { exact: true }).fill(fresh)
    await page.getByLabel("New password again").fill(fresh)
    await Promise.all([
      page.waitForURL((url) => url.pathname !== "/portal/reset/"),
      page.getByRole("button", { name: "Set password" }).click()
    ])
    expect(await signedIn(page)).toBe(true)

    // The new password signs in from another browser too.
    const other = await (await browser.newContext()).newPage()
    await signIn(other, h, { email: user.email, password: fresh })
    expect(await signedIn(other)).toBe(true)
  })
})

describe("changing the password (browser)", () => {
  it("ends every other session; this browser stays signed in", async () => {
    const user = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, user)
    const elsewhere = await (await browser.newContext()).newPage()
    await signIn(elsewhere, h, user)

    await page.goto(`${h.url}/portal/password`)
    await expectAxeClean(page)
    await page.getByLabel("Current password").fill("not my password at all")
    await page.getByLabel("New password", { exact: true }).fill("another fine passphrase 9")
    await page.getByLabel("New password again").fill("another fine passphrase 9")
    await Promise.all([page.waitForLoadState(), page.getByRole("button", { name: "Change password" }).click()])
    expect(await page.locator("#field-current-error").textContent()).toBe("The current password is not correct.")

    await page.getByLabel("Current password").fill(user.password)
    await page.getByLabel("New password", { exact: true }).fill("another fine passphrase 9")
    await page.getByLabel("New password again").fill("another fine passphrase 9")
    await Promise.all([page.waitForLoadState(), page.getByRole("button", { name: "Change password" }).click()])
    expect(await flashText(page)).toBe("Your password is changed. Every other session has ended.")
    await expectAxeClean(page)
    await screenshot(page, "session-password")
    expect(await signedIn(page)).toBe(true)

    await elsewhere.goto(`${h.url}/portal/password`)
    expect(new URL(elsewhere.url()).pathname).toBe("/portal/signin")
  })
})

describe("the session as the documents endpoint's credential", () => {
  it("is accepted without an Authorization header, never over one, and logged without a key mode", async () => {
    const user = await portalUser(h)
    const trackNo = await bookOne(h.url, user.account.liveKey)
    const page = browser.page()
    await signIn(page, h, user)
    const token = await sessionOf(browser.context())
    const docs = `${h.url}/api/v1/order/docs/?control_no=${trackNo}`

    const anonymous = await (await fetch(docs)).json()
    expect(anonymous.error.message).toBe("You did not provide an access token.")

    const bySession = await fetch(docs, { headers: { cookie: `waybill_session=${token}` } })
    expect(bySession.headers.get("cache-control")).toBe("no-store")
    expect(bySession.headers.get("vary")).toBe("Authorization, Cookie")
    const body = await bySession.json()
    expect(body.error).toBeNull()
    expect(body.data.orders.map((o: { control_no: string }) => o.control_no)).toEqual([trackNo])

    // The Authorization header always wins: an invalid one is refused, the cookie notwithstanding.
    const header = await fetch(docs, { headers: { cookie: `waybill_session=${token}`, authorization: "Bearer nope" } })
    expect((await header.json()).error.message).toBe("Access denied.")

    // In a browser: the signed-in page can open the endpoint directly.
    const opened = await page.goto(docs)
    expect((await opened!.json()).data.orders[0].control_no).toBe(trackNo)

    // The recorder writes in batches (every 250 ms): poll the log.
    let sessionCalls: ReadonlyArray<{ readonly keyMode: string | null; readonly path: string }> = []
    for (let i = 0; i < 100 && sessionCalls.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const logged = await h.run(Activity.list(user.account.customerNo, {}, { limit: 50 }))
      sessionCalls = logged.items.filter((e) => e.keyMode === null)
    }
    expect(sessionCalls.length).toBeGreaterThanOrEqual(2)
    expect(sessionCalls[0]!.path).toBe("/api/v1/order/docs/")
  })
})
