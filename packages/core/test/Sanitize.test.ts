import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import { flag, maxWeightLb, phone, pieces, requiredText, text, weight, zip } from "../src/booking/Sanitize.js"

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe("phone", () => {
  it("keeps the 10 digits of common formats", () => {
    expect(phone("(312) 555-1234")).toEqual(Either.right("3125551234"))
    expect(phone("312.555.1234")).toEqual(Either.right("3125551234"))
    expect(phone(3125551234)).toEqual(Either.right("3125551234"))
  })

  it("drops a leading country code 1", () => {
    expect(phone("+1 (312) 555-1234")).toEqual(Either.right("3125551234"))
    expect(phone("13125551234")).toEqual(Either.right("3125551234"))
  })

  it("rejects other lengths and other country codes", () => {
    expect(phone("555-1234")).toEqual(Either.left("must be a 10-digit phone number"))
    expect(phone("23125551234")).toEqual(Either.left("must be a 10-digit phone number"))
    expect(phone("312555123456")).toEqual(Either.left("must be a 10-digit phone number"))
    expect(phone("call me")).toEqual(Either.left("must be a 10-digit phone number"))
    expect(phone({ n: "3125551234" })).toEqual(Either.left("must be a 10-digit phone number"))
  })

  it("requires a value", () => {
    expect(phone(undefined)).toEqual(Either.left("is required"))
    expect(phone(null)).toEqual(Either.left("is required"))
    expect(phone("")).toEqual(Either.left("is required"))
    expect(phone("   ")).toEqual(Either.left("is required"))
  })

  it("returns the digits of any 10-digit number with arbitrary punctuation (property)", () => {
    const punctuation = fc.oneof(
      fc.constantFrom("", "", "(", ") ", "-", ".", " ", "+", "/", " ext "),
      fc.string({ unit: "binary", maxLength: 3 }).map((s) => s.replace(/\d/g, ""))
    )
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 10, maxLength: 10 }),
        fc.array(punctuation, { minLength: 11, maxLength: 11 }),
        (digits, seps) => {
          const input = seps[0] + digits.map((d, i) => `${d}${seps[i + 1]}`).join("")
          return Either.getOrUndefined(phone(input)) === digits.join("")
        }
      )
    )
  })
})

describe("pieces", () => {
  it("accepts numbers and strings with spaces and units", () => {
    expect(pieces(3)).toEqual(Either.right(3))
    expect(pieces("3")).toEqual(Either.right(3))
    expect(pieces(" 3 ")).toEqual(Either.right(3))
    expect(pieces("3 pcs")).toEqual(Either.right(3))
    expect(pieces("3pieces")).toEqual(Either.right(3))
    expect(pieces("1,200 boxes")).toEqual(Either.right(1200))
  })

  it("rejects non-positive, fractional and non-numeric values", () => {
    for (const bad of [
      3.5,
      "3.5",
      0,
      "0",
      -1,
      "-1",
      "abc",
      "pcs 3",
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      [3],
      "1e3"
    ]) {
      expect(pieces(bad)).toEqual(Either.left("must be a positive whole number"))
    }
  })

  it("requires a value", () => {
    expect(pieces(undefined)).toEqual(Either.left("is required"))
    expect(pieces(" ")).toEqual(Either.left("is required"))
  })

  it("reads any positive integer with a unit back (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom("", " ", "  "),
        fc.constantFrom("", "pc", "pcs", "Pieces", "boxes", "PCS."),
        (n, space, unit) => Either.getOrUndefined(pieces(`${n}${space}${unit}`)) === n
      )
    )
  })

  it("never throws and gives a positive integer or a message (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string({ unit: "binary" }), fc.double()), (input) => {
        const r = pieces(input)
        return Either.isLeft(r) ? typeof r.left === "string" : Number.isSafeInteger(r.right) && r.right > 0
      })
    )
  })
})

describe("weight", () => {
  it("accepts numbers and strings with units, spaces and thousands separators", () => {
    expect(weight(15)).toEqual(Either.right(15))
    expect(weight("15 lbs")).toEqual(Either.right(15))
    expect(weight("1,200 lb")).toEqual(Either.right(1200))
    expect(weight("15.5")).toEqual(Either.right(15.5))
    expect(weight(" 15.5 LB. ")).toEqual(Either.right(15.5))
    expect(weight("20 pounds")).toEqual(Either.right(20))
    expect(weight("20#")).toEqual(Either.right(20))
    expect(weight(".5")).toEqual(Either.right(0.5))
    expect(weight(maxWeightLb)).toEqual(Either.right(100_000))
  })

  it("rejects zero, negatives, non-finite values and other units", () => {
    for (const bad of [
      0,
      "0",
      -5,
      "-5 lb",
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "1e999",
      "1e3",
      "abc",
      "15 kg",
      "12,00",
      {}
    ]) {
      expect(weight(bad)).toEqual(Either.left("must be a positive number of pounds"))
    }
  })

  it("rejects absurd weights", () => {
    expect(weight(100_000.5)).toEqual(Either.left("must be at most 100000 lb"))
    expect(weight("9".repeat(400))).toEqual(Either.left("must be a positive number of pounds"))
  })

  it("requires a value", () => {
    expect(weight(null)).toEqual(Either.left("is required"))
    expect(weight("")).toEqual(Either.left("is required"))
  })

  it("reads any whole weight written with thousands separators (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: maxWeightLb }),
        fc.constantFrom("", " lb", "lbs", " Pounds"),
        (n, unit) => Either.getOrUndefined(weight(`${n.toLocaleString("en-US")}${unit}`)) === n
      )
    )
  })

  it("never throws and gives a bounded positive number or a message (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string({ unit: "binary" }), fc.double()), (input) => {
        const r = weight(input)
        return Either.isLeft(r)
          ? typeof r.left === "string"
          : Number.isFinite(r.right) && r.right > 0 && r.right <= maxWeightLb
      })
    )
  })
})

describe("text", () => {
  it("trims, removes control characters and keeps words apart", () => {
    expect(text("  Jane Doe \u0000", 50)).toBe("Jane Doe")
    expect(text("Ring bell\r\nLeave at door", 250)).toBe("Ring bell Leave at door")
    expect(text("a\u0007b\u007fc\u009fd", 50)).toBe("abcd")
  })

  it("stringifies numbers and blanks anything else", () => {
    expect(text(42, 10)).toBe("42")
    expect(text(null, 10)).toBe("")
    expect(text(undefined, 10)).toBe("")
    expect(text({ a: 1 }, 10)).toBe("")
    expect(text(true, 10)).toBe("")
    expect(text(Number.NaN, 10)).toBe("")
  })

  it("truncates to code points without splitting a surrogate pair", () => {
    expect(text("abcdef", 3)).toBe("abc")
    expect(text("😀😀😀", 2)).toBe("😀😀")
    expect(text("a😀", 1)).toBe("a")
    expect(text("ab cd", 3)).toBe("ab")
    expect(text("abc", 0)).toBe("")
  })

  it("drops lone surrogates", () => {
    expect(text("a\uD83Db", 10)).toBe("ab")
    expect(text("a\uDE00b", 10)).toBe("ab")
  })

  it("never exceeds max code points, never leaves a lone surrogate or control (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.integer({ min: 0, max: 60 }), (s, max) => {
        const out = text(s, max)
        return Array.from(out).length <= max && !loneSurrogate.test(out) && !/\p{Cc}/u.test(out) && out === out.trim()
      })
    )
  })

  it("keeps clean short text unchanged (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii", maxLength: 40 }), (s) => {
        const clean = s.replace(/\p{Cc}/gu, "").trim()
        return text(clean, 40) === clean
      })
    )
  })
})

describe("requiredText", () => {
  it("is required when empty after cleaning", () => {
    expect(requiredText(" \t\u0000 ", 50)).toEqual(Either.left("is required"))
    expect(requiredText(undefined, 50)).toEqual(Either.left("is required"))
    expect(requiredText(" Jane ", 50)).toEqual(Either.right("Jane"))
  })
})

describe("flag", () => {
  it("accepts Y/N, yes/no, true/false and 1/0 in any case", () => {
    for (const t of ["Y", "y", "yes", "YES", "true", "True", "1", 1, true, " Y "])
      expect(flag(t)).toEqual(Either.right(true))
    for (const f of ["N", "n", "no", "No", "false", "FALSE", "0", 0, false])
      expect(flag(f)).toEqual(Either.right(false))
  })

  it("treats missing as N", () => {
    expect(flag(undefined)).toEqual(Either.right(false))
    expect(flag(null)).toEqual(Either.right(false))
    expect(flag("")).toEqual(Either.right(false))
  })

  it("rejects anything else", () => {
    for (const bad of ["maybe", "2", 2, "ye", {}, []]) expect(flag(bad)).toEqual(Either.left("must be Y or N"))
  })
})

describe("zip", () => {
  it("accepts 5 digits and ZIP+4", () => {
    expect(zip("60601")).toEqual(Either.right("60601"))
    expect(zip(" 60601-1234 ")).toEqual(Either.right("60601"))
    expect(zip("02134")).toEqual(Either.right("02134"))
    expect(zip(60601)).toEqual(Either.right("60601"))
  })

  it("rejects anything else without padding", () => {
    for (const bad of [501, "501", "6060", "606011", "60601-12", "60601 1234", "abcde", 60601.5, {}]) {
      expect(zip(bad)).toEqual(Either.left("must be a 5-digit ZIP code"))
    }
  })

  it("requires a value", () => {
    expect(zip(undefined)).toEqual(Either.left("is required"))
    expect(zip("")).toEqual(Either.left("is required"))
  })
})
