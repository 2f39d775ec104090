import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as Credentials from "../src/access/Credentials.js"
import { constantTimeEqual } from "../src/shared/internal/bytes.js"

const tokenOf = (r: Credentials.Resolution) =>
  r._tag === "Found" ? [Redacted.value(r.token), r.source] : r._tag === "Invalid" ? ["invalid", r.reason] : ["none"]

describe("Credentials precedence", () => {
  it("the Authorization header wins over body credentials", () => {
    expect(tokenOf(Credentials.resolve("Bearer AAA", Credentials.bookingPlaces({ token: "BBB", key: "CCC" })))).toEqual(
      ["AAA", "header"]
    )
  })

  it("without a header: data.token, then data.key", () => {
    expect(tokenOf(Credentials.resolve(null, Credentials.bookingPlaces({ token: "BBB", key: "CCC" })))).toEqual([
      "BBB",
      "body.token"
    ])
    expect(tokenOf(Credentials.resolve(null, Credentials.bookingPlaces({ key: "CCC" })))).toEqual(["CCC", "body.key"])
    expect(tokenOf(Credentials.resolve(null, Credentials.bookingPlaces({ token: "", key: "CCC" })))).toEqual([
      "CCC",
      "body.key"
    ])
    expect(tokenOf(Credentials.resolve(null, Credentials.bookingPlaces({})))).toEqual(["none"])
    expect(tokenOf(Credentials.resolve(null, Credentials.bookingPlaces({ token: 42 })))).toEqual(["none"])
  })

  it("a present header that is not `Bearer <token>` is invalid and never falls back", () => {
    for (const h of [
      "",
      "Bearer",
      "Bearer ",
      "Basic abc",
      "Bearer a b",
      "Bearer  abc",
      "Token abc",
      " Bearer abc",
      "Bearer abc\n"
    ]) {
      expect(tokenOf(Credentials.resolve(h, Credentials.bookingPlaces({ token: "BBB", key: "CCC" })))).toEqual([
        "invalid",
        "malformed-header"
      ])
    }
  })

  it("the scheme is case-insensitive (RFC 7235)", () => {
    expect(tokenOf(Credentials.fromAuthorization("bearer AAA"))).toEqual(["AAA", "header"])
  })

  it("a parameter given twice is invalid (duplicate)", () => {
    expect(tokenOf(Credentials.resolve(null, [{ source: "query.key", values: ["a", "b"] }]))).toEqual([
      "invalid",
      "duplicate"
    ])
  })

  it("property: any header at all decides alone, whatever the body holds", () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string()), fc.option(fc.string()), (header, token, key) => {
        const r = Credentials.resolve(
          header,
          Credentials.bookingPlaces({ token: token ?? undefined, key: key ?? undefined })
        )
        expect(r._tag === "None").toBe(false)
        if (r._tag === "Found") expect(r.source).toBe("header")
      })
    )
  })

  it("property: a resolved token never prints in logs", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{8,40}$/), (t) => {
        const r = Credentials.resolve(`Bearer ${t}`, Credentials.bookingPlaces({}))
        expect(JSON.stringify(r)).not.toContain(t)
      })
    )
  })
})

describe("constantTimeEqual", () => {
  it("agrees with === on arbitrary strings", () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => constantTimeEqual(a, b) === (a === b)))
    fc.assert(fc.property(fc.string(), (a) => constantTimeEqual(a, a)))
  })
})
