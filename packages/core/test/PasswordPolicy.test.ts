/**
 * The password rule: provisioning's range by default, the portal's on request, the generated
 * common list (thousands of entries) with the variants around it, and the e-mail rule.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as PasswordPolicy from "../src/access/PasswordPolicy.js"

const portal = (password: string, email?: string) =>
  PasswordPolicy.check(password, { ...PasswordPolicy.PORTAL, ...(email === undefined ? {} : { email }) })

describe("PasswordPolicy", () => {
  it("bundles a real common list: thousands of entries, at least 8 characters each", () => {
    expect(PasswordPolicy.commonListSize()).toBeGreaterThan(10_000)
  })

  it("portal passwords: 12 to 256 characters, counted as code points after NFKC", () => {
    expect(portal("eleven char")).toBe("too-short")
    expect(portal("twelve chars")).toBeUndefined()
    expect(portal("z".repeat(255) + "q")).toBe("common")
    expect(portal("ab".repeat(128) + "c")).toBe("too-long")
    // Twelve emoji are twelve characters.
    expect(portal("🚚📦🛻🚛🚐🏷️".repeat(2))).toBeUndefined()
  })

  it("provisioning keeps the interface's 15 to 128 by default", () => {
    expect(PasswordPolicy.check("fourteen chars")).toBe("too-short")
    expect(PasswordPolicy.check("fifteen chars!!")).toBeUndefined()
    expect(PasswordPolicy.check("q".repeat(128) + "z")).toBe("too-long")
  })

  it("refuses listed passwords and the same with digits or symbols around them, in any case", () => {
    for (const p of [
      "baseball1234",
      "Football2026!",
      "!!superman!!",
      "PASSWORD123456",
      "iloveyou2026",
      "qwertyuiop12"
    ]) {
      expect([p, portal(p)]).toEqual([p, "common"])
    }
    for (const p of ["passwordpassword", "abcabcabcabc", "aaaaaaaaaaaaaaaa", "ababababababab"]) {
      expect([p, portal(p)]).toEqual([p, "common"])
    }
    expect(portal("correct horse battery staple")).toBeUndefined()
    expect(portal("correcthorsebatterystaple")).toBe("common")
  })

  it("refuses the e-mail address, its local part, and the domain's name", () => {
    expect(portal("ada.lopez@acme.com", "Ada.Lopez@Acme.com")).toBe("contains-email")
    expect(portal("my name is ada.lopez!", "ada.lopez@acme.com")).toBe("contains-email")
    expect(portal("acmefreight", "ops@acmefreight.com")).toBe("too-short")
    expect(portal("acmefreightco", "ops@acmefreightco.com")).toBe("contains-email")
    expect(portal("a quiet evening in june", "ops@acme.com")).toBeUndefined()
  })

  it("describes each problem with the range it was checked against", () => {
    expect(PasswordPolicy.describe("too-short", PasswordPolicy.PORTAL)).toBe(
      "The password must have at least 12 characters."
    )
    expect(PasswordPolicy.describe("too-long", PasswordPolicy.PORTAL)).toBe(
      "The password must have at most 256 characters."
    )
    expect(PasswordPolicy.describe("too-short")).toBe("The password must have at least 15 characters.")
  })

  it.prop(
    "length alone decides below and above the range",
    { password: fc.string({ unit: "grapheme-ascii", minLength: 0, maxLength: 300 }) },
    ({ password }) => {
      const length = [...password.normalize("NFKC")].length
      const problem = portal(password)
      if (length < 12) expect(problem).toBe("too-short")
      else if (length > 256) expect(problem).toBe("too-long")
      else expect(problem === "too-short" || problem === "too-long").toBe(false)
    }
  )

  it.prop(
    "a password containing the whole e-mail address is never accepted",
    {
      local: fc.stringMatching(/^[a-z][a-z0-9.]{0,15}$/),
      domain: fc.domain(),
      prefix: fc.string({ maxLength: 10 }),
      suffix: fc.string({ maxLength: 10 })
    },
    ({ domain, local, prefix, suffix }) => {
      const email = `${local}@${domain}`
      const password = `${prefix}${email.toUpperCase()}${suffix}`.padEnd(12, "#")
      const problem = portal(password, email)
      expect(problem === undefined).toBe(false)
    }
  )

  it.prop(
    "a listed password with digits appended is refused",
    { digits: fc.stringMatching(/^[0-9]{0,6}$/), pick: fc.integer({ min: 0, max: 400 }) },
    ({ digits, pick }) => {
      const base = ["baseball", "football", "superman", "princess", "sunshine", "whatever", "starwars"][pick % 7]!
      const password = `${base}${digits}`.padEnd(12, "1")
      expect(portal(password)).toBe("common")
    }
  )
})
