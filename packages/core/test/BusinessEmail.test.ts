import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as BusinessEmail from "../src/provisioning/BusinessEmail.js"
import * as PasswordPolicy from "../src/access/PasswordPolicy.js"

describe("BusinessEmail", () => {
  it.each([
    "ada@gmail.com",
    "ada@GMAIL.COM",
    "ada@gmail.com.",
    "ada@mail.gmail.com",
    "ada@Sub.Yahoo.Co.Uk",
    "ada@mailinator.com",
    "ada@x.y.guerrillamail.com",
    "ada@ＧＭＡＩＬ.com"
  ])("refuses free-mail and disposable %s", (address) => {
    expect(BusinessEmail.check(address)).toEqual({ _tag: "Refused", problem: "free-mail" })
  })

  it.each(["", "ada", "@acme.com", "ada@", "ada@localhost", "ada@127.0.0.1", "a..b@acme.com", "ada@acme..com"])(
    "refuses malformed %s",
    (address) => {
      expect(BusinessEmail.check(address)).toEqual({ _tag: "Refused", problem: "malformed" })
    }
  )

  it("accepts business domains in canonical form, IDN as punycode", () => {
    expect(BusinessEmail.check("Ada.Lopez@Acme-Logistics.COM.")).toEqual({
      _tag: "Ok",
      email: {
        address: "Ada.Lopez@acme-logistics.com",
        domain: "acme-logistics.com",
        key: "ada.lopez@acme-logistics.com"
      }
    })
    const idn = BusinessEmail.check("ada@bücher.de")
    expect(idn._tag === "Ok" && idn.email.domain).toBe("xn--bcher-kva.de")
    // A look-alike of gmail.com is a different (punycode) domain, not gmail.com itself.
    const lookalike = BusinessEmail.check("ada@gmаil.com")
    expect(lookalike._tag === "Ok" && lookalike.email.domain.startsWith("xn--")).toBe(true)
  })

  it("the allow-list overrides the pinned list", () => {
    expect(BusinessEmail.check("ops@team.fastmail.com", ["fastmail.com"])._tag).toBe("Ok")
  })
})

describe("BusinessEmail.addressKey: one mailbox whatever the case", () => {
  it("lowercases the whole address; the address itself stays as typed", () => {
    const ada = BusinessEmail.normalise(" Ada.Lopez@Acme-Logistics.COM ")!
    expect(ada.address).toBe("Ada.Lopez@acme-logistics.com")
    expect(ada.key).toBe("ada.lopez@acme-logistics.com")
    expect(BusinessEmail.normalise("ada.lopez@acme-logistics.com")!.key).toBe(ada.key)
    expect(BusinessEmail.normalise("ADA.LOPEZ@ACME-LOGISTICS.COM.")!.key).toBe(ada.key)
    // A stored address of any age compares by the same key.
    expect(BusinessEmail.addressKey("Ada.Lopez@acme-logistics.com")).toBe(ada.key)
    expect(BusinessEmail.sameAddress("Ada@x-corp.com", "aDA@x-corp.com")).toBe(true)
    expect(BusinessEmail.sameAddress("ada@x-corp.com", "ada2@x-corp.com")).toBe(false)
  })

  it.prop(
    "addresses that differ only in case have one key; each keeps its local part as typed",
    [fc.stringMatching(/^[A-Za-z0-9_%+-]{1,20}$/), fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.[a-z]{2,6}$/)],
    ([local, domain]) => {
      const flip = (s: string) =>
        [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join("")
      const email = BusinessEmail.normalise(`${local}@${domain}`)!
      const flipped = BusinessEmail.normalise(`${flip(local)}@${flip(domain)}`)!
      expect(flipped.key).toBe(email.key)
      expect(flipped.address).toBe(`${flip(local)}@${domain}`)
      expect(BusinessEmail.sameAddress(email.address, flipped.address)).toBe(true)
    }
  )
})

describe("BusinessEmail.registrableDomain: the domain a per-domain budget counts", () => {
  it.each([
    ["acme.com", "acme.com"],
    ["a1.acme.com", "acme.com"],
    ["x.y.a2.acme.com", "acme.com"],
    ["acme.io", "acme.io"],
    ["eu.acme.de", "acme.de"],
    ["acme.co.uk", "acme.co.uk"],
    ["mail.acme.co.uk", "acme.co.uk"],
    ["shop.eu.acme.com.au", "acme.com.au"],
    ["lab.tokyo-u.ac.jp", "tokyo-u.ac.jp"],
    ["mx.acme.or.jp", "acme.or.jp"],
    ["x.acme.gob.mx", "acme.gob.mx"],
    ["team.acme.com.co", "acme.com.co"],
    ["co.uk", "co.uk"],
    // Only a two-letter (country) TLD has these second levels: a generic TLD keeps two labels.
    ["a.co.example", "co.example"],
    ["a.net.com", "net.com"],
    // Unknown second levels group more, never less: the limit gets stricter, not looser.
    ["x.acme.k12.tx.us", "tx.us"],
    ["a.acme.xn--p1ai", "acme.xn--p1ai"]
  ])("%s -> %s", (domain, registrable) => {
    expect(BusinessEmail.registrableDomain(domain)).toBe(registrable)
  })

  const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/)
  const domainArb = fc
    .tuple(fc.array(label, { minLength: 1, maxLength: 4 }), fc.constantFrom("com", "uk", "jp", "io", "de", "co"))
    .map(([labels, tld]) => [...labels, tld].join("."))

  it.prop("is a suffix of the domain with two or three labels, and stable", [domainArb], ([domain]) => {
    const r = BusinessEmail.registrableDomain(domain)
    expect(domain === r || domain.endsWith(`.${r}`)).toBe(true)
    expect(r.split(".").length).toBeGreaterThanOrEqual(Math.min(2, domain.split(".").length))
    expect(r.split(".").length).toBeLessThanOrEqual(3)
    expect(BusinessEmail.registrableDomain(r)).toBe(r)
  })

  it.prop(
    "a subdomain of a name with three or more labels never gets a budget of its own",
    [domainArb, label],
    ([domain, sub]) => {
      if (domain.split(".").length < 3) return
      expect(BusinessEmail.registrableDomain(`${sub}.${domain}`)).toBe(BusinessEmail.registrableDomain(domain))
    }
  )
})

describe("PasswordPolicy", () => {
  it("length 15..128, common and repetitive passwords refused", () => {
    expect(PasswordPolicy.check("short-password")).toBe("too-short")
    expect(PasswordPolicy.check("x".repeat(129) + "y")).toBe("too-long")
    expect(PasswordPolicy.check("passwordpassword")).toBe("common")
    expect(PasswordPolicy.check("aaaaaaaaaaaaaaaaaaaa")).toBe("common")
    expect(PasswordPolicy.check("correct horse battery staple")).toBeUndefined()
    expect(PasswordPolicy.check("ada.lopez-is-great-2026", { email: "ada.lopez@acme.com" })).toBe("contains-email")
  })
})
