/**
 * The request pipeline end to end through `handler`, with a fake resolver: base path, assets,
 * security fields, routing, form reading, CSRF (Origin, pre-session token, session token),
 * sessions and redirects, and the error pages.
 */
import { describe, expect, it } from "vitest"
import { CONTENT_SECURITY_POLICY } from "../src/index.js"
import {
  cookieValue,
  csrfField,
  EMAIL,
  makePortal,
  ORIGIN,
  PASSWORD,
  SESSION_TOKEN,
  setCookies,
  viewer
} from "./fakes.js"
import * as Redacted from "effect/Redacted"

const get = (path: string, headers: Record<string, string> = {}) => new Request(`${ORIGIN}${path}`, { headers })

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
    body
  })

const expectSecurityFields = (response: Response) => {
  expect(response.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY)
  expect(response.headers.get("x-content-type-options")).toBe("nosniff")
  expect(response.headers.get("referrer-policy")).toBe("same-origin")
}

/** Loads the sign-in page: its pre-session cookie line and the form's token. */
const signInForm = async (portal: ReturnType<typeof makePortal>["portal"]) => {
  const response = await portal.handler(get("/portal/signin"))
  const html = await response.text()
  const cookie = setCookies(response).get("__Host-waybill_form")!
  return { cookie: `__Host-waybill_form=${cookieValue(cookie)}`, csrf: csrfField(html), html }
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

describe("createPortal", () => {
  it("redirects the bare base path, 404s outside it, and serves the stylesheet under its hash", async () => {
    const { portal } = makePortal()
    const bare = await portal.handler(get("/portal"))
    expect(bare.status).toBe(308)
    expect(bare.headers.get("location")).toBe("/portal/")
    expect((await portal.handler(get("/elsewhere"))).status).toBe(404)

    const { html } = await signInForm(portal)
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(html)![1]!
    expect(href).toMatch(/^\/portal\/assets\/portal\.[0-9a-f]{16}\.css$/)
    const css = await portal.handler(get(href))
    expect(css.status).toBe(200)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expectSecurityFields(css)
    expect(await css.text()).toContain("--brand: #0b5cad")
    expect((await portal.handler(get("/portal/assets/portal.0000000000000000.css"))).status).toBe(404)
    expect(portal.handles("/portal")).toBe(true)
    expect(portal.handles("/portal/x")).toBe(true)
    expect(portal.handles("/portals")).toBe(false)
  })

  it("renders the sign-in page with the security fields, no-store, and a pre-session token cookie", async () => {
    const { portal } = makePortal()
    const response = await portal.handler(get("/portal/signin?next=%2Fportal%2Fshipments"))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(response.headers.get("cache-control")).toBe("no-store")
    expectSecurityFields(response)
    expect(response.headers.get("content-security-policy")).not.toContain("unsafe-inline")
    const html = await response.text()
    expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true)
    expect(html).not.toContain("<script")
    expect(html).not.toMatch(/ style=/)
    expect(html).toContain('<label for="field-email">E-mail</label>')
    expect(html).toContain('name="next" value="/portal/shipments"')
    const line = setCookies(response).get("__Host-waybill_form")!
    expect(line).toMatch(/; Path=\/; Max-Age=7200; HttpOnly; SameSite=Lax; Secure$/)
    expect(cookieValue(line)).toBe(csrfField(html))
  })

  it("signs in through the resolver: a Secure __Host- session cookie, then on to a safe next", async () => {
    const { portal, state } = makePortal()
    const { cookie, csrf } = await signInForm(portal)
    const answer = await portal.handler(
      post("/portal/signin", form({ csrf, next: "/portal/shipments?q=1", email: ` ${EMAIL} `, password: PASSWORD }), {
        cookie
      }),
      { remoteAddress: "203.0.113.9" }
    )
    expect(answer.status).toBe(303)
    expect(answer.headers.get("location")).toBe("/portal/shipments?q=1")
    expect(setCookies(answer).get("__Host-waybill_session")).toBe(
      `__Host-waybill_session=${SESSION_TOKEN}; Path=/; HttpOnly; SameSite=Lax; Secure`
    )
    expect(state.signIns).toEqual([{ email: EMAIL, clientIp: "203.0.113.9" }])

    // An open redirect is refused: next falls back to the start page.
    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/elsewhere"]) {
      const again = await portal.handler(
        post("/portal/signin", form({ csrf, next, email: EMAIL, password: PASSWORD }), { cookie })
      )
      expect(again.headers.get("location"), next).toBe("/portal/")
    }
  })

  it("answers a refused sign-in with the one generic message, keeping the e-mail and never the password", async () => {
    const { portal } = makePortal()
    const { cookie, csrf } = await signInForm(portal)
    const answer = await portal.handler(
      post("/portal/signin", form({ csrf, email: EMAIL, password: "wrong password!" }), { cookie })
    )
    expect(answer.status).toBe(200)
    expect(setCookies(answer).has("__Host-waybill_session")).toBe(false)
    const html = await answer.text()
    expect(html).toContain("E-mail or password is incorrect.")
    expect(html).toContain(`value="${EMAIL}"`)
    expect(html).not.toContain("wrong password!")

    const empty = await portal.handler(post("/portal/signin", form({ csrf, email: "", password: "" }), { cookie }))
    expect(empty.status).toBe(400)
    const emptyHtml = await empty.text()
    expect(emptyHtml).toContain('aria-describedby="field-email-error"')
    expect(emptyHtml).toContain('<span class="error" id="field-email-error">Enter your e-mail address.</span>')
  })

  it("refuses a POST from another origin, without an origin, or without the pre-session token (403)", async () => {
    const { portal, state } = makePortal()
    const { cookie, csrf } = await signInForm(portal)
    const body = form({ csrf, email: EMAIL, password: PASSWORD })
    const cases: Array<Record<string, string>> = [
      { cookie, origin: "https://evil.example" },
      { cookie, origin: "null" },
      { cookie, origin: "", referer: "https://evil.example/form" },
      { origin: ORIGIN } // no pre-session cookie
    ]
    for (const headers of cases) {
      const request = post("/portal/signin", body, headers)
      if (headers["origin"] === "") request.headers.delete("origin")
      const answer = await portal.handler(request)
      expect(answer.status, JSON.stringify(headers)).toBe(403)
      expect(await answer.text()).toContain("Not allowed")
    }
    const forged = await portal.handler(
      post("/portal/signin", form({ csrf: "x".repeat(43), email: EMAIL, password: PASSWORD }), { cookie })
    )
    expect(forged.status).toBe(403)
    // A Referer from the portal itself stands in for a missing Origin.
    const viaReferer = post("/portal/signin", body, { cookie, referer: `${ORIGIN}/portal/signin` })
    viaReferer.headers.delete("origin")
    expect((await portal.handler(viaReferer)).status).toBe(303)
    expect(state.signIns).toHaveLength(1)
  })

  it("answers bad form bodies with a 400 or 413 page, never a 500", async () => {
    const { portal } = makePortal()
    const { cookie } = await signInForm(portal)
    const malformed = await portal.handler(post("/portal/signin", "email=%E0%A4%A&password=x", { cookie }))
    expect(malformed.status).toBe(400)
    const json = await portal.handler(post("/portal/signin", "{}", { cookie, "content-type": "application/json" }))
    expect(json.status).toBe(400)
    const large = await portal.handler(post("/portal/signin", `email=${"a".repeat(20_000)}`, { cookie }))
    expect(large.status).toBe(413)
    expect(await large.text()).not.toMatch(/at |Error/)
  })

  it("sends a visitor without a session to sign in and back; a stale cookie is dropped", async () => {
    const { portal } = makePortal()
    const home = await portal.handler(get("/portal/"))
    expect(home.status).toBe(303)
    expect(home.headers.get("location")).toBe("/portal/signin?next=%2Fportal%2F")
    const stale = await portal.handler(get("/portal/", { cookie: "__Host-waybill_session=ended" }))
    expect(stale.headers.get("location")).toBe("/portal/signin?next=%2Fportal%2F")
    const cookies = setCookies(stale)
    expect(cookies.get("__Host-waybill_session")).toContain("Max-Age=0")
    expect(cookies.get("__Host-waybill_flash")).toContain("__Host-waybill_flash=session-ended")
  })

  it("lets a signed-in viewer in, and signs out only with the session's CSRF token", async () => {
    const { portal, state } = makePortal()
    state.live.add(SESSION_TOKEN)
    const cookie = `__Host-waybill_session=${SESSION_TOKEN}`
    const home = await portal.handler(get("/portal/", { cookie }))
    expect(home.headers.get("location")).toBe("/portal/keys")
    const signInAgain = await portal.handler(get("/portal/signin?next=%2Fportal%2Faccount", { cookie }))
    expect(signInAgain.headers.get("location")).toBe("/portal/account")

    expect((await portal.handler(post("/portal/signout", "", { cookie }))).status).toBe(403)
    expect((await portal.handler(post("/portal/signout", form({ csrf: "nope" }), { cookie }))).status).toBe(403)
    expect(state.live.has(SESSION_TOKEN)).toBe(true)

    const out = await portal.handler(
      post("/portal/signout", form({ csrf: Redacted.value(viewer.csrfToken) }), { cookie })
    )
    expect(out.status).toBe(303)
    expect(out.headers.get("location")).toBe("/portal/signin")
    expect(state.live.has(SESSION_TOKEN)).toBe(false)
    const cookies = setCookies(out)
    expect(cookies.get("__Host-waybill_session")).toContain("Max-Age=0")
    const flash = cookieValue(cookies.get("__Host-waybill_flash"))
    const next = await portal.handler(get("/portal/signin", { cookie: `__Host-waybill_flash=${flash}` }))
    expect(await next.text()).toContain("You are signed out.")
    expect(setCookies(next).get("__Host-waybill_flash")).toContain("Max-Age=0")
  })

  it("a sign-in over a live session ends it; a public page's sign-out form carries the session's token", async () => {
    const { portal, state } = makePortal()
    const earlier = "an-earlier-session-token-of-someone-else-0123"
    state.live.add(earlier)
    const { cookie, csrf } = await signInForm(portal)
    const answer = await portal.handler(
      post("/portal/signin", form({ csrf, email: EMAIL, password: PASSWORD }), {
        cookie: `${cookie}; __Host-waybill_session=${earlier}`
      })
    )
    expect(answer.status).toBe(303)
    expect([...state.live]).toEqual([SESSION_TOKEN])

    // Signed in, on a public page (its own forms carry the pre-session token): sign-out works.
    const session = `__Host-waybill_session=${SESSION_TOKEN}`
    const reset = await portal.handler(get("/portal/reset", { cookie: session }))
    const html = await reset.text()
    const signOutToken = /action="\/portal\/signout"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]*)"/.exec(
      html
    )
    expect(signOutToken?.[1]).toBe(Redacted.value(viewer.csrfToken))
    const out = await portal.handler(post("/portal/signout", form({ csrf: signOutToken![1]! }), { cookie: session }))
    expect(out.status).toBe(303)
    expect(state.live.size).toBe(0)
  })

  it("uses plain cookie names without Secure when allowInsecureHttp is set", async () => {
    const { portal } = makePortal({ allowInsecureHttp: true, publicOrigin: "http://127.0.0.1:8080" })
    const page = await portal.handler(new Request("http://127.0.0.1:8080/portal/signin"))
    const line = setCookies(page).get("waybill_form")!
    expect(line).not.toContain("Secure")
    const csrf = csrfField(await page.text())
    const answer = await portal.handler(
      new Request("http://127.0.0.1:8080/portal/signin", {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: "http://127.0.0.1:8080",
          cookie: `waybill_form=${cookieValue(line)}`
        },
        body: form({ csrf, email: EMAIL, password: PASSWORD })
      })
    )
    expect(setCookies(answer).get("waybill_session")).toBe(
      `waybill_session=${SESSION_TOKEN}; Path=/; HttpOnly; SameSite=Lax`
    )
  })

  it("takes the client address through trusted proxies only", async () => {
    const { portal, state } = makePortal({ trustedProxies: ["10.0.0.0/8"] })
    const { cookie, csrf } = await signInForm(portal)
    const body = form({ csrf, email: EMAIL, password: "x" })
    await portal.handler(post("/portal/signin", body, { cookie, "x-forwarded-for": "198.51.100.7" }), {
      remoteAddress: "10.1.2.3"
    })
    await portal.handler(post("/portal/signin", body, { cookie, "x-forwarded-for": "198.51.100.7" }), {
      remoteAddress: "192.0.2.1"
    })
    // No peer address at all (an embedder that passes none): no address, never a shared "unknown".
    await portal.handler(post("/portal/signin", body, { cookie }))
    expect(state.signIns.map((s) => s.clientIp)).toEqual(["198.51.100.7", "192.0.2.1", ""])
    expect(() => makePortal({ trustedProxies: ["nope"] })).toThrow(/trustedProxies/)
  })

  it("answers 404, 405, and 503 when the store is down, as pages", async () => {
    const { portal, state } = makePortal()
    const missing = await portal.handler(get("/portal/nothing-here"))
    expect(missing.status).toBe(404)
    expectSecurityFields(missing)
    expect(await missing.text()).toContain("Page not found")
    const method = await portal.handler(new Request(`${ORIGIN}/portal/signin`, { method: "PUT" }))
    expect(method.status).toBe(405)
    expect(method.headers.get("allow")).toBe("GET, HEAD, POST")
    state.failStorage = true
    const down = await portal.handler(get("/portal/", { cookie: `__Host-waybill_session=${SESSION_TOKEN}` }))
    expect(down.status).toBe(503)
    expect(await down.text()).toContain("Temporarily unavailable")
  })
})
