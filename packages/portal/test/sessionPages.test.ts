/**
 * The session group's pages that need no store (the flows that do are in the example host's
 * browser tests): the sign-in page's reset link, the reset request form, a link without a
 * usable token (410, the same page whatever is wrong), the change-password form of a signed-in
 * user, and the refusals that come before any use case (missing fields, a confirmation that
 * differs, a cross-site POST).
 */
import { describe, expect, it } from "vitest"
import { cookieValue, csrfField, makePortal, ORIGIN, SESSION_TOKEN, setCookies, viewer } from "./fakes.js"
import * as Redacted from "effect/Redacted"

const get = (path: string, headers: Record<string, string> = {}) => new Request(`${ORIGIN}${path}`, { headers })

const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
    body: new URLSearchParams(fields).toString()
  })

describe("the session group's pages", () => {
  it("the sign-in page links to the reset page; the reset page asks for the e-mail", async () => {
    const { portal } = makePortal()
    const signin = await (await portal.handler(get("/portal/signin"))).text()
    expect(signin).toContain('<a href="/portal/reset">Forgot your password?</a>')
    const reset = await portal.handler(get("/portal/reset"))
    expect(reset.status).toBe(200)
    expect(reset.headers.get("cache-control")).toBe("no-store")
    const html = await reset.text()
    expect(html).toContain('<form method="post" action="/portal/reset"')
    expect(html).toContain('name="email"')
    expect(csrfField(html)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it("a link without a usable token is the one 410 page, on GET and POST", async () => {
    const { portal } = makePortal()
    const pages: Array<string> = []
    for (const path of ["/portal/invite/", "/portal/invite/?token=", `/portal/reset/?token=${"x".repeat(200)}`]) {
      const answer = await portal.handler(get(path))
      expect(answer.status).toBe(410)
      pages.push((await answer.text()).replace(/name="csrf" value="[^"]*"/, ""))
    }
    expect(pages[0]).toContain("This link no longer works")
    expect(new Set(pages).size).toBe(1)

    const form = await portal.handler(get("/portal/reset"))
    const csrf = csrfField(await form.text())
    const cookie = `__Host-waybill_form=${cookieValue(setCookies(form).get("__Host-waybill_form"))}`
    const posted = await portal.handler(post("/portal/invite/", { csrf, token: "" }, { cookie }))
    expect(posted.status).toBe(410)
  })

  it("a request for a reset link needs an address; a cross-site one is refused", async () => {
    const { portal } = makePortal()
    const form = await portal.handler(get("/portal/reset"))
    const csrf = csrfField(await form.text())
    const cookie = `__Host-waybill_form=${cookieValue(setCookies(form).get("__Host-waybill_form"))}`
    const empty = await portal.handler(post("/portal/reset", { csrf, email: " " }, { cookie }))
    expect(empty.status).toBe(400)
    expect(await empty.text()).toContain('id="field-email-error"')
    const forged = await portal.handler(
      post("/portal/reset", { csrf, email: "a@example.com" }, { cookie, origin: "https://evil.example" })
    )
    expect(forged.status).toBe(403)
  })

  it("the change-password form: a signed-in user's page; mismatched or missing fields are shown", async () => {
    const { portal, state } = makePortal()
    expect((await portal.handler(get("/portal/password"))).status).toBe(303)
    state.live.add(SESSION_TOKEN)
    const cookie = `__Host-waybill_session=${SESSION_TOKEN}`
    const page = await portal.handler(get("/portal/password", { cookie }))
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('autocomplete="current-password"')
    expect(html.match(/autocomplete="new-password"/g)).toHaveLength(2)
    const csrf = Redacted.value(viewer.csrfToken)
    const mismatch = await portal.handler(
      post(
        "/portal/password",
        { csrf, current: "x", password: "a long new passphrase", confirm: "another one" },
        { cookie }
      )
    )
    expect(mismatch.status).toBe(400)
    const text = await mismatch.text()
    expect(text).toContain("The two passwords are not the same.")
    expect(text).toContain('aria-describedby="field-confirm-error"')
    const missing = await portal.handler(post("/portal/password", { csrf }, { cookie }))
    expect(await missing.text()).toContain("Enter your current password.")
    const noCsrf = await portal.handler(post("/portal/password", { current: "x" }, { cookie }))
    expect(noCsrf.status).toBe(403)
  })
})
