import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import { Look } from "../src/index.js"
import * as Mail from "../src/shared/Mailer.js"

const T0 = Date.UTC(2027, 0, 15, 8, 30)

const verification = (over: Partial<Record<"to" | "code" | "link", string>> = {}): Mail.VerificationMessage => ({
  _tag: "Verification",
  to: over.to ?? "ada@acme-logistics.com",
  code: Redacted.make(over.code ?? "042917"),
  link: Redacted.make(over.link ?? "https://api.example/api/v1/accountsetup/verify/?token=abc_DEF-1"),
  codeExpiresAt: T0,
  linkExpiresAt: T0 + 30 * 60_000
})

const invite = (over: Partial<Mail.InviteMessage> = {}): Mail.InviteMessage => ({
  _tag: "Invite",
  to: "grace@acme-logistics.com",
  accountName: "Acme Logistics LLC",
  invitedBy: "ada@acme-logistics.com",
  link: Redacted.make("https://api.example/portal/invite/?token=inv123"),
  expiresAt: T0,
  ...over
})

const reset = (link = "https://api.example/portal/reset/?token=rst456"): Mail.PasswordResetMessage => ({
  _tag: "PasswordReset",
  to: "ada@acme-logistics.com",
  link: Redacted.make(link),
  expiresAt: T0
})

const disabled = (over: Partial<Mail.WebhookDisabledMessage> = {}): Mail.WebhookDisabledMessage => ({
  _tag: "WebhookDisabled",
  to: "ada@acme-logistics.com",
  endpointId: "ep_01J0000000000000000000000",
  url: "https://hooks.acme.example/waybill",
  reason: "failing",
  ...over
})

/** The element with `id`: its tag's attributes and its text content (no nested elements). */
const byId = (html: string, id: string) => {
  const m = new RegExp(`<([a-z]+)([^>]*\\sid="${id}"[^>]*)>([^<]*)<`).exec(html)
  if (m === null) throw new Error(`no element #${id}`)
  return { tag: m[1]!, attributes: m[2]!, text: m[3]! }
}

const hrefOf = (attributes: string) => /\shref="([^"]*)"/.exec(attributes)?.[1]

/** Undoes the escaping of a text node or attribute value. */
const unescape = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")

/**
 * The document's skeleton: each tag's name and attribute names in order. Throws when a `<` starts
 * anything but a well-formed tag whose attribute values are double-quoted without `"`, `<`, `>`.
 */
const skeleton = (html: string): Array<string> => {
  const out: Array<string> = []
  const tag = /^<(\/?)([a-z][a-z0-9]*)((?:\s+[a-z-]+="[^"<>]*")*)\s*>/
  for (let i = html.indexOf("<"); i !== -1; i = html.indexOf("<", i + 1)) {
    const rest = html.slice(i)
    if (rest.startsWith("<!doctype html>")) continue
    const m = tag.exec(rest)
    if (m === null) throw new Error(`stray markup at ${i}: ${rest.slice(0, 40)}`)
    const names = [...m[3]!.matchAll(/\s+([a-z-]+)="[^"]*"/g)].map((a) => a[1]!)
    out.push(`${m[1]}${m[2]}[${names.join(",")}]`)
  }
  return out
}

describe("Mail.render", () => {
  it("verification: the code and link in both parts, the ids tests and scripts read", () => {
    const r = Mail.render(verification())
    expect(r.to).toBe("ada@acme-logistics.com")
    expect(r.subject).toBe("Verify your e-mail address")
    // The code is the text part's first run of six digits (what people and e2e helpers read).
    expect(/\b(\d{6})\b/.exec(r.text)?.[1]).toBe("042917")
    expect(r.text).toContain("https://api.example/api/v1/accountsetup/verify/?token=abc_DEF-1")
    expect(r.text).toContain("valid until 2027-01-15 08:30 UTC and works once")
    expect(r.text).toContain("The link is valid until 2027-01-15 09:00 UTC.")
    expect(byId(r.html, "verify-code").text).toBe("042917")
    const link = byId(r.html, "verify-link")
    expect(link.tag).toBe("a")
    expect(hrefOf(link.attributes)).toBe("https://api.example/api/v1/accountsetup/verify/?token=abc_DEF-1")
    expect(r.html.startsWith("<!doctype html>")).toBe(true)
    expect(r.html).toContain(">Waybill</td>")
  })

  it("invite: who invited, to which account, the link as #invite-link and its end", () => {
    const r = Mail.render(invite())
    expect(r.to).toBe("grace@acme-logistics.com")
    expect(r.subject).toBe("You are invited to Acme Logistics LLC on Waybill")
    expect(r.text).toContain("ada@acme-logistics.com invited you to the Waybill account of Acme Logistics LLC.")
    expect(r.text).toContain("https://api.example/portal/invite/?token=inv123")
    expect(r.text).toContain("valid until 2027-01-15 08:30 UTC and works once")
    expect(hrefOf(byId(r.html, "invite-link").attributes)).toBe("https://api.example/portal/invite/?token=inv123")
    expect(r.html).toContain("<strong>Acme Logistics LLC</strong>")
    expect(r.html).toContain("ada@acme-logistics.com</code> invited you")
  })

  it("invite by an operator names no inviter", () => {
    const { invitedBy: _, ...byOperator } = invite()
    const r = Mail.render(byOperator)
    expect(r.text).toContain("You are invited to the Waybill account of Acme Logistics LLC.")
    expect(r.html).not.toContain("invited you")
  })

  it("password reset: the link as #reset-link, its end, and that other sessions end", () => {
    const r = Mail.render(reset())
    expect(r.subject).toBe("Reset your Waybill password")
    expect(r.text).toContain("https://api.example/portal/reset/?token=rst456")
    expect(r.text).toContain("signs you out everywhere")
    expect(hrefOf(byId(r.html, "reset-link").attributes)).toBe("https://api.example/portal/reset/?token=rst456")
  })

  it("webhook endpoint disabled: which endpoint, its URL and why, in both parts", () => {
    const gone = Mail.render(disabled({ reason: "gone" }))
    expect(gone.subject).toBe("A webhook endpoint was disabled")
    expect(gone.text).toContain("ep_01J0000000000000000000000")
    expect(gone.text).toContain("(https://hooks.acme.example/waybill) because it answered 410 Gone")
    expect(gone.html).toContain("410 Gone")
    expect(Mail.render(disabled()).text).toContain("failed for 5 days")
  })

  it("escapes what users give: names, addresses and URLs stay text", () => {
    const evil = `<script>alert("x")</script>&'`
    const r = Mail.render(invite({ accountName: evil, invitedBy: `"><img src=x onerror=alert(1)>` }))
    expect(r.html).not.toContain("<script>")
    expect(r.html).not.toContain("<img")
    expect(r.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;")
    const w = Mail.render(disabled({ url: `https://x.example/"onmouseover="alert(1)` }))
    expect(w.html).not.toContain(`"onmouseover`)
  })

  it("a link that is not http(s) never becomes a live href", () => {
    const r = Mail.render(reset("javascript:alert(document.cookie)"))
    expect(hrefOf(byId(r.html, "reset-link").attributes)).toBe("about:invalid")
  })

  it("line breaks in names cannot add lines or headers", () => {
    const r = Mail.render(invite({ accountName: "Acme\r\nBcc: victim@example.com" }))
    expect(r.subject).toBe("You are invited to Acme Bcc: victim@example.com on Waybill")
    expect(r.subject).not.toMatch(/[\r\n]/)
    expect(r.text.split("\n")[0]).toContain("Acme Bcc: victim@example.com")
  })

  it("property: arbitrary strings in every field stay inside their text node or attribute", () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom("<", ">", '"', "'", "&", "=", " ", "/", "a", "\n", "\u2028", "\u0000") }),
      fc.constantFrom(`"><script>alert(1)</script>`, "javascript:alert(1)", "&amp;", "</td></tr></table>")
    )
    const link = fc.oneof(
      text,
      text.map((s) => `https://x.example/?token=${s}`)
    )
    const time = fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) })
    const message: fc.Arbitrary<Mail.MailMessage> = fc.oneof(
      fc.record({
        _tag: fc.constant("Verification" as const),
        to: text,
        code: text.map(Redacted.make),
        link: link.map(Redacted.make),
        codeExpiresAt: time,
        linkExpiresAt: time
      }),
      fc.record({
        _tag: fc.constant("WebhookDisabled" as const),
        to: text,
        endpointId: text,
        url: link,
        reason: fc.constantFrom("gone" as const, "failing" as const)
      }),
      fc.record(
        {
          _tag: fc.constant("Invite" as const),
          to: text,
          accountName: text,
          invitedBy: text,
          link: link.map(Redacted.make),
          expiresAt: time
        },
        { requiredKeys: ["_tag", "to", "accountName", "link", "expiresAt"] }
      ),
      fc.record({
        _tag: fc.constant("PasswordReset" as const),
        to: text,
        link: link.map(Redacted.make),
        expiresAt: time
      })
    )
    /** The same message with every string field made harmless: its markup is the reference. */
    const plain = (m: Mail.MailMessage): Mail.MailMessage => {
      const x = "x"
      switch (m._tag) {
        case "Verification":
          return { ...m, code: Redacted.make(x), link: Redacted.make(x) }
        case "WebhookDisabled":
          return { ...m, endpointId: x, url: x }
        case "Invite":
          return {
            ...m,
            accountName: x,
            link: Redacted.make(x),
            ...(m.invitedBy === undefined ? {} : { invitedBy: x })
          }
        case "PasswordReset":
          return { ...m, link: Redacted.make(x) }
      }
    }
    fc.assert(
      fc.property(message, (m) => {
        const r = Mail.render(m)
        expect(skeleton(r.html).join("\n")).toEqual(skeleton(Mail.render(plain(m)).html).join("\n"))
        expect(r.subject).not.toMatch(/[\r\n]/)
        // Links keep their exact value in the href (or are dead), never a broken-out attribute.
        const id = { Verification: "verify-link", Invite: "invite-link", PasswordReset: "reset-link" } as const
        if (m._tag !== "WebhookDisabled") {
          const href = unescape(hrefOf(byId(r.html, id[m._tag]).attributes) ?? "")
          const given = Redacted.value(m.link).trim()
          expect(href).toBe(/^https?:\/\//i.test(given) ? given : "about:invalid")
        }
        if (m._tag === "Verification") expect(unescape(byId(r.html, "verify-code").text)).toBe(Redacted.value(m.code))
      }),
      { numRuns: 300 }
    )
  })
})

describe("Look", () => {
  it("holds the contract's palette and fonts", () => {
    expect(Look.palette).toEqual({
      brand: "#0b5cad",
      brandDark: "#084a8c",
      ink: "#1a1f29",
      muted: "#5b6577",
      surface: "#ffffff",
      background: "#f4f6f9",
      border: "#d8dee8",
      danger: "#b42318",
      success: "#067647",
      warning: "#b54708"
    })
    expect(Look.fonts.sans).toBe(`system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif`)
    expect(Look.fonts.mono).toBe("ui-monospace, SFMono-Regular, Menlo, Consolas, monospace")
  })

  it("html escapes strings and numbers and keeps Html values", () => {
    const inner = Look.markup`<b>${"<i>"}</b>`
    expect(Look.markup`<p title="${`"'`}">${inner}${[inner, inner]}${3}${undefined}</p>`.value).toBe(
      `<p title="&quot;&#39;"><b>&lt;i&gt;</b><b>&lt;i&gt;</b><b>&lt;i&gt;</b>3</p>`
    )
  })

  it("mailHtml: a table layout with inline styles only, no stylesheet, no script, no remote resource", () => {
    const out = Look.mailHtml({ title: "T <1>", preheader: "pre & header", body: Look.paragraph(Look.markup`body`) })
    expect(out).toContain("<title>T &lt;1&gt;</title>")
    expect(out).toContain("pre &amp; header")
    expect(out).toContain('<table role="presentation"')
    expect(out).not.toMatch(/<style|<link|<script|\sclass=|src=|url\(/i)
    expect(skeleton(out).length).toBeGreaterThan(10)
  })

  it("page: a whole document with the page stylesheet, a viewport, a heading", () => {
    const out = Look.page({ title: "Hello <you>", body: Look.markup`<p>hi</p>` })
    expect(out).toContain(`<style>${Look.pageCss}</style>`)
    expect(out).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(out).toContain("<h1>Hello &lt;you&gt;</h1>")
    expect(out).toContain('<html lang="en">')
    expect(Look.pageCss).not.toMatch(/url\(|@import|<\//)
  })
})
