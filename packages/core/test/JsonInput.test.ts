import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as JsonInput from "../src/shared/JsonInput.js"

/** The nesting depth of a JSON value, computed the obvious (recursive) way for small values. */
const depthOf = (v: unknown): number =>
  typeof v !== "object" || v === null ? 0 : 1 + Math.max(0, ...Object.values(v).map(depthOf))

/** `n` levels of arrays and objects (chosen by `shape`) around `inner`, as text, without recursion. */
const nestedText = (n: number, shape: (level: number) => "array" | "object", inner = "1"): string => {
  const open: Array<string> = []
  const close: Array<string> = []
  for (let i = 0; i < n; i++) {
    const array = shape(i) === "array"
    open.push(array ? "[" : '{"k[":')
    close.push(array ? "]" : "}")
  }
  return open.join("") + inner + close.reverse().join("")
}

/** The same nesting as a value, built bottom-up without recursion. */
const nestedValue = (n: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { k: v }
  return v
}

const depth = fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 65, max: 300_000 }))

describe("JsonInput", () => {
  it("property: the text check agrees with the real depth of any JSON value, brackets in strings ignored", () => {
    const value = fc.jsonValue({ maxDepth: 8 })
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 10 }), (v, max) => {
        const text = JSON.stringify(v)
        expect(JsonInput.textExceedsDepth(text, max)).toBe(depthOf(v) > max)
        expect(JsonInput.exceedsDepth(v, max)).toBe(depthOf(v) > max)
      }),
      { numRuns: 500 }
    )
  })

  it("property: any nesting deeper than the limit is refused before parsing, at any depth", () => {
    fc.assert(
      fc.property(depth, fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }), (n, pattern) => {
        const text = nestedText(n, (i) => (pattern[i % pattern.length]! ? "array" : "object"))
        const parsed = JsonInput.parse(text)
        if (n > JsonInput.MAX_DEPTH) expect(parsed).toEqual(Either.left({ _tag: "TooDeep", maxDepth: 32 }))
        else expect(Either.isRight(parsed)).toBe(true)
      }),
      { numRuns: 60 }
    )
  })

  it("refuses 200,000 levels quickly and reports invalid JSON as a syntax error", () => {
    const started = performance.now()
    expect(JsonInput.parse("[".repeat(200_000) + "]".repeat(200_000))).toEqual(
      Either.left({ _tag: "TooDeep", maxDepth: JsonInput.MAX_DEPTH })
    )
    expect(performance.now() - started).toBeLessThan(1000)
    expect(JsonInput.parse("{not json")).toEqual(Either.left({ _tag: "Syntax" }))
    expect(JsonInput.parse('{"a": "[[[[ \\" {{{{"}', 1)).toEqual(Either.right({ a: '[[[[ " {{{{' }))
    // A string ending in an escaped backslash ends at its quote; brackets after it count.
    expect(JsonInput.textExceedsDepth(String.raw`{"a":"x\\","b":[[1]]}`, 2)).toBe(true)
    expect(JsonInput.textExceedsDepth(String.raw`{"a":"x\\\"[[[[","b":[1]}`, 2)).toBe(false)
    expect(JsonInput.textExceedsDepth('{"a":"[[[[[[', 2)).toBe(false) // unterminated: left to JSON.parse
  })

  it("walks values without recursion: deep, wide and cyclic ones", () => {
    expect(JsonInput.exceedsDepth(nestedValue(300_000))).toBe(true)
    expect(JsonInput.exceedsDepth(nestedValue(JsonInput.MAX_DEPTH))).toBe(false)
    expect(JsonInput.exceedsDepth(nestedValue(JsonInput.MAX_DEPTH + 1))).toBe(true)
    expect(JsonInput.exceedsDepth(Array.from({ length: 10_000 }, () => ({ a: [1] })))).toBe(false)
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    expect(JsonInput.exceedsDepth(cyclic)).toBe(true)
  })
})
