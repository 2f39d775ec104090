/**
 * The account portal in a real browser (Debian's Chromium through playwright-core), against the
 * real example host: the sign-in page loads with its stylesheet, is clean under axe-core, has a
 * Content-Security-Policy without `unsafe-inline`, works by keyboard alone, and fits a phone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CONTENT_SECURITY_POLICY } from "@waybill/portal"
import { startHost, type TestHost } from "./harness.js"
import { expectAxeClean, screenshot, scrollsSideways, useBrowser } from "./browser/browser.js"
import { portalUser, signIn } from "./browser/users.js"

let h: TestHost
beforeAll(async () => {
  h = await startHost()
})
afterAll(async () => {
  await h.close()
})

const browser = useBrowser()

describe("the portal mounted by the example host", () => {
  it("owns /portal and below; other paths stay the API handler's", async () => {
    const bare = await fetch(`${h.url}/portal?x=1`, { redirect: "manual" })
    expect(bare.status).toBe(308)
    expect(bare.headers.get("location")).toBe("/portal/?x=1")
    const page = await fetch(`${h.url}/portal/signin`)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    await page.text()
    const beside = await fetch(`${h.url}/portalx`)
    expect(beside.status).toBe(404)
    expect(await beside.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
  })
})

describe("the portal's sign-in page (browser)", () => {
  it("loads with its stylesheet and the portal's CSP, and is clean under axe-core", async () => {
    const page = browser.page()
    const styles: Array<number> = []
    page.on("response", (r) => {
      if (r.url().endsWith(".css")) styles.push(r.status())
    })
    const answer = await page.goto(`${h.url}/portal/signin`)
    expect(answer?.status()).toBe(200)
    const csp = answer!.headers()["content-security-policy"]!
    expect(csp).toBe(CONTENT_SECURITY_POLICY)
    expect(csp).not.toContain("unsafe-inline")
    expect(styles).toEqual([200])
    expect(await page.title()).toBe("Sign in — Waybill")
    // The stylesheet applied: the wordmark is in the brand colour.
    const colour = await page.locator(".wordmark").evaluate((el) => getComputedStyle(el).color)
    expect(colour).toBe("rgb(11, 92, 173)")
    await expectAxeClean(page)
    await screenshot(page, "signin")
  })

  it("sends a visitor without a session from a portal page to sign in, and back", async () => {
    const page = browser.page()
    await page.goto(`${h.url}/portal`)
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/portal/signin?next=%2Fportal%2F")
    expect(await page.locator('input[name="next"]').inputValue()).toBe("/portal/")
  })

  it("is operable by keyboard: Tab reaches the fields in order, Enter submits", async () => {
    const page = browser.page()
    await page.goto(`${h.url}/portal/signin`)
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName)
    const order: Array<string | undefined> = []
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab")
      order.push(await focused())
      if (order.at(-1) === "field-email") break
    }
    expect(order.at(-1)).toBe("field-email")
    // The first stop is the skip link, and it is visible when focused.
    expect(order[0]).toBe("A")
    await page.keyboard.type("nobody@example.com")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("field-password")
    await page.keyboard.type("not the password at all")
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.keyboard.press("Enter")
    ])
    expect(response.status()).toBe(200)
    await page.waitForLoadState()
    // An unknown address gets the one generic refusal.
    expect(await page.getByRole("alert").textContent()).toBe("E-mail or password is incorrect.")
    expect(await page.locator("#field-email").inputValue()).toBe("nobody@example.com")
    expect(await page.locator("#field-password").inputValue()).toBe("")
    await expectAxeClean(page)
  })

  it("fits a 375px-wide phone without scrolling sideways", async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })
    const page = await phone.newPage()
    await page.goto(`${h.url}/portal/signin`)
    expect(await scrollsSideways(page)).toBe(false)
    const field = await page.locator("#field-email").boundingBox()
    expect(field!.x).toBeGreaterThanOrEqual(0)
    expect(field!.x + field!.width).toBeLessThanOrEqual(375)
    await expectAxeClean(page)
    await screenshot(page, "signin-phone")
  })

  it("signs a user in with core's sessions: a new session cookie, on to the portal", async () => {
    const user = await portalUser(h)
    const context = await browser.newContext()
    const page = await context.newPage()
    await signIn(page, h, user)
    expect(new URL(page.url()).pathname).toBe("/portal/keys")
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === "waybill_session")
    expect(session?.httpOnly).toBe(true)
    expect(session?.sameSite).toBe("Lax")
  })
})
