import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as fc from "effect/FastCheck"
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "../src/shared/index.js"

// Under Node the helpers take Buffer's native path; effect/Encoding is the reference they must match.
describe("base64 helpers", () => {
  it("encode exactly as effect/Encoding does, and decode back (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(16), (bytes, offset) => {
        // A view that does not start at its buffer's first byte (tickets are built from views).
        const view = new Uint8Array(offset + bytes.length)
        view.set(bytes, offset)
        const input = view.subarray(offset)
        expect(encodeBase64Url(input)).toBe(Encoding.encodeBase64Url(bytes))
        expect(encodeBase64(input)).toBe(Encoding.encodeBase64(bytes))
        expect(decodeBase64Url(encodeBase64Url(input))).toEqual(bytes)
        expect(decodeBase64(encodeBase64(input))).toEqual(bytes)
      })
    )
  })

  it("base64url decoding is strict: no padding, no other alphabet, no stray bits (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (text) => {
        const decoded = decodeBase64Url(text)
        if (decoded !== undefined) expect(encodeBase64Url(decoded)).toBe(text)
        const reference = Either.getOrUndefined(Encoding.decodeBase64Url(text))
        if (decoded !== undefined) expect(reference).toEqual(decoded)
      })
    )
    expect(decodeBase64Url("AQ==")).toBeUndefined()
    expect(decodeBase64Url("AR")).toBeUndefined() // stray bits: "AQ" is the one spelling of [1]
    expect(decodeBase64Url("A+8")).toBeUndefined()
    expect(decodeBase64Url("A")).toBeUndefined()
    expect(decodeBase64Url("AQ")).toEqual(new Uint8Array([1]))
    expect(decodeBase64Url("")).toEqual(new Uint8Array([]))
  })
})
