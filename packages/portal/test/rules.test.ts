/**
 * The pipeline's pure rules, with properties: form parsing, the `next` redirect, the CSRF rules,
 * cookies and the router.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import { parseCookies, setCookie } from "../src/internal/cookies.js"
import { FORM_LIMIT_BYTES, parseForm } from "../src/internal/form.js"
import { safeNext } from "../src/internal/next.js"
import { makeRouter } from "../src/internal/router.js"
import { checkCsrf, sameOrigin } from "../src/internal/session.js"
import { viewer } from "./fakes.js"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("parseForm", () => {
  it.prop(
    "reads back what URLSearchParams encodes",
    [fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 20 })],
    ([entries]) => {
      const clean = entries.filter(([k, v]) => !k.includes("\0") && !v.includes("\0"))
      const body = new URLSearchParams(clean).toString()
      const form = parseForm(bytes(body))
      expect(Either.isRight(form)).toBe(true)
      const parsed = Either.getOrThrow(form)
      for (const [name] of clean)
        expect(parsed.getAll(name)).toEqual(clean.filter(([k]) => k === name).map(([, v]) => v))
    }
  )

  it.prop("never throws: any bytes are a form or a 400/413 refusal", [fc.uint8Array({ maxLength: 512 })], ([input]) => {
    const form = parseForm(input)
    if (Either.isLeft(form)) expect([400, 413]).toContain(form.left.status)
  })

  it("refuses malformed escapes, invalid UTF-8, NUL, too many fields and too many bytes", () => {
    for (const body of ["a=%", "a=%E0%A4%A", "a=%FF", "a=%00", "a=b%00c"])
      expect(Either.isLeft(parseForm(bytes(body))), body).toBe(true)
    expect(Either.isLeft(parseForm(new Uint8Array([0x61, 0x3d, 0xff])))).toBe(true)
    expect(Either.isLeft(parseForm(bytes(Array.from({ length: 65 }, (_, i) => `f${i}=1`).join("&"))))).toBe(true)
    const big = parseForm(new Uint8Array(FORM_LIMIT_BYTES + 1).fill(0x61))
    expect(Either.isLeft(big) && big.left.status).toBe(413)
    const plus = Either.getOrThrow(parseForm(bytes("q=a+b&q=c&flag")))
    expect(plus.getAll("q")).toEqual(["a b", "c"])
    expect(plus.get("flag")).toBe("")
    expect(plus.get("missing")).toBeUndefined()
  })
})

describe("safeNext", () => {
  it("keeps portal paths with their query, and refuses everything else", () => {
    expect(safeNext("/portal", "/portal/shipments?q=PO-1")).toBe("/portal/shipments?q=PO-1")
    expect(safeNext("/portal", "/portal")).toBe("/portal")
    for (const bad of [
      null,
      "",
      "//evil.example/portal/",
      "https://evil.example/portal/",
      "/\\evil.example",
      "\\\\evil.example",
      "/portalx",
      "/api/v1/",
      "/portal/../api/v1/",
      "javascript:alert(1)",
      "/portal/\u0000",
      " /portal/"
    ])
      expect(safeNext("/portal", bad), String(bad)).toBe("/portal/")
  })

  it.prop("always answers a path under the base path on the same site", [fc.string()], ([next]) => {
    const answer = safeNext("/portal", next)
    expect(answer.startsWith("/portal")).toBe(true)
    expect(answer.startsWith("//")).toBe(false)
    const url = new URL(answer, "https://site.example")
    expect(url.origin).toBe("https://site.example")
    expect(url.pathname === "/portal" || url.pathname.startsWith("/portal/")).toBe(true)
  })
})

describe("sameOrigin and checkCsrf", () => {
  const expected = "https://portal.example.com"
  it("accepts the portal's origin, or its Referer when Origin is absent; refuses the rest", () => {
    expect(sameOrigin({ origin: expected, referer: null, expected })).toBe(true)
    expect(sameOrigin({ origin: null, referer: `${expected}/portal/signin`, expected })).toBe(true)
    expect(sameOrigin({ origin: "https://evil.example", referer: `${expected}/x`, expected })).toBe(false)
    expect(sameOrigin({ origin: "null", referer: null, expected })).toBe(false)
    expect(sameOrigin({ origin: null, referer: null, expected })).toBe(false)
    expect(sameOrigin({ origin: null, referer: "not a url", expected })).toBe(false)
    expect(sameOrigin({ origin: "https://portal.example.com:8443", referer: null, expected })).toBe(false)
    expect(sameOrigin({ origin: "http://portal.example.com", referer: null, expected })).toBe(false)
  })

  it.prop("an Origin other than the expected one is always refused", [fc.webUrl()], ([url]) => {
    const origin = new URL(url).origin
    expect(sameOrigin({ origin, referer: `${expected}/`, expected })).toBe(origin === expected)
  })

  it("checkCsrf accepts exactly the session's token", () => {
    expect(checkCsrf(viewer, Redacted.value(viewer.csrfToken))).toBe(true)
    expect(checkCsrf(viewer, undefined)).toBe(false)
    expect(checkCsrf(viewer, "")).toBe(false)
    expect(checkCsrf(viewer, `${Redacted.value(viewer.csrfToken)}x`)).toBe(false)
  })
})

describe("cookies", () => {
  it("parses the Cookie field (first of a name wins) and writes flagged Set-Cookie lines", () => {
    const cookies = parseCookies('a=1; b="two"; a=3; junk; =x; c=')
    expect([...cookies]).toEqual([
      ["a", "1"],
      ["b", "two"],
      ["c", ""]
    ])
    expect(setCookie({ insecure: false }, "waybill_session", "abc")).toBe(
      "__Host-waybill_session=abc; Path=/; HttpOnly; SameSite=Lax; Secure"
    )
    expect(setCookie({ insecure: true }, "waybill_session", "abc", { maxAgeSeconds: 0 })).toBe(
      "waybill_session=abc; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
    )
    expect(() => setCookie({ insecure: false }, "x", "a;b")).toThrow()
  })
})

describe("makeRouter", () => {
  const route = (method: "GET" | "POST", path: string) => ({ method, path })
  const match = makeRouter([
    route("GET", "/"),
    route("GET", "/signin"),
    route("POST", "/signin"),
    route("GET", "/shipments/:trackingNo")
  ])

  it("matches with or without a final slash, binds decoded params, and tells 404 from 405", () => {
    expect(match("GET", "/signin")._tag).toBe("Found")
    expect(match("GET", "/signin/")._tag).toBe("Found")
    expect(match("HEAD", "/signin")._tag).toBe("Found")
    expect(match("GET", "/")._tag).toBe("Found")
    const found = match("GET", "/shipments/WB%20123")
    expect(found._tag === "Found" && found.params).toEqual({ trackingNo: "WB 123" })
    expect(match("GET", "/shipments/%E0%A4%A")._tag).toBe("NotFound")
    expect(match("GET", "/shipments/a%2Fb")._tag).toBe("NotFound")
    expect(match("GET", "/shipments")._tag).toBe("NotFound")
    const wrong = match("DELETE", "/signin")
    expect(wrong._tag === "MethodNotAllowed" && wrong.allow).toEqual(["GET", "HEAD", "POST"])
  })

  it("refuses a route declared twice", () => {
    expect(() => makeRouter([route("GET", "/a"), route("GET", "/a/")])).toThrow(/twice/)
  })
})
