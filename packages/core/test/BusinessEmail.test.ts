import { describe, expect, it } from "@effect/vitest"
import * as BusinessEmail from "../src/BusinessEmail.js"
import * as PasswordPolicy from "../src/PasswordPolicy.js"

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
      email: { address: "Ada.Lopez@acme-logistics.com", domain: "acme-logistics.com" }
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

describe("PasswordPolicy", () => {
  it("length 15..128, common and repetitive passwords refused", () => {
    expect(PasswordPolicy.check("short-password")).toBe("too-short")
    expect(PasswordPolicy.check("x".repeat(129) + "y")).toBe("too-long")
    expect(PasswordPolicy.check("passwordpassword")).toBe("common")
    expect(PasswordPolicy.check("aaaaaaaaaaaaaaaaaaaa")).toBe("common")
    expect(PasswordPolicy.check("correct horse battery staple")).toBeUndefined()
    expect(PasswordPolicy.check("ada.lopez-is-great-2026", { address: "ada.lopez@acme.com", domain: "acme.com" })).toBe(
      "contains-email"
    )
  })
})
