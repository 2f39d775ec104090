/**
 * @module JsonInput
 *
 * Untrusted JSON, bounded in depth. `JSON.parse` itself is iterative and happily builds a
 * value nested 100,000 levels deep from a 200 KB body; almost everything that walks such a
 * value afterwards recurses: `String()` of an array, `JSON.stringify`, Schema's error
 * formatters, `util.inspect` in a log line. Each of those overflows the stack, and the
 * `RangeError` turned into `500 Internal error.`.
 *
 * So nesting is limited where JSON enters: {@link parse} counts the brackets of the text in
 * one loop (no recursion, no allocation) and refuses a text nested deeper than the limit
 * before `JSON.parse` builds anything, so no deep structure ever exists in memory. Values
 * that reach core without passing through text (an embedder calling a use case directly) are
 * checked by {@link exceedsDepth}, again with an explicit stack.
 *
 * The limit, {@link MAX_DEPTH}, is far above every body the interface defines (a booking with
 * a multi-stop route nests 5 levels: body, `data`, `shipments`, shipment, stop) and far below
 * any stack.
 */
import * as Either from "effect/Either"

/** Deepest nesting of arrays and objects accepted in a request body (`[]` is depth 1). */
export const MAX_DEPTH = 32

/** Why a text was refused: not JSON at all, or nested deeper than the limit. */
export type JsonInputError = { readonly _tag: "Syntax" } | { readonly _tag: "TooDeep"; readonly maxDepth: number }

/** The client-facing sentence for a too-deep body; `what` names it ("The body", "The form field data"). */
export const tooDeepMessage = (what: string, maxDepth: number = MAX_DEPTH): string =>
  `${what} nests arrays and objects more than ${maxDepth} levels deep.`

const OPEN_ARRAY = 0x5b // [
const OPEN_OBJECT = 0x7b // {
const CLOSE_ARRAY = 0x5d // ]
const CLOSE_OBJECT = 0x7d // }
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether a JSON text nests arrays and objects deeper than `maxDepth`. Brackets inside strings
 * do not count. For valid JSON the answer is exact; for invalid JSON it is a bound that
 * `JSON.parse` makes irrelevant, since that text is refused either way.
 */
export const textExceedsDepth = (text: string, maxDepth: number = MAX_DEPTH): boolean => {
  let depth = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // Jump over the string with indexOf (about twice as fast as a character loop): its end is
      // the next quote not preceded by an odd number of backslashes.
      for (;;) {
        const end = text.indexOf('"', i + 1)
        if (end < 0) return false // unterminated: not JSON, JSON.parse refuses it
        let k = end - 1
        while (text.charCodeAt(k) === BACKSLASH) k--
        i = end
        if ((end - 1 - k) % 2 === 0) break
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
  return false
}

/**
 * Parses untrusted JSON text, refusing nesting deeper than `maxDepth` before any value is
 * built. Never throws.
 */
export const parse = (text: string, maxDepth: number = MAX_DEPTH): Either.Either<unknown, JsonInputError> => {
  if (textExceedsDepth(text, maxDepth)) return Either.left({ _tag: "TooDeep", maxDepth })
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch {
    return Either.left({ _tag: "Syntax" })
  }
}

/**
 * Whether a value nests arrays and objects deeper than `maxDepth` (a scalar is depth 0).
 * Iterative, and it stops at the first path that goes too deep, so a cyclic value counts as
 * too deep instead of looping. Only own enumerable properties are followed, as JSON does.
 */
export const exceedsDepth = (value: unknown, maxDepth: number = MAX_DEPTH): boolean => {
  const stack: Array<unknown> = [value]
  const depths: Array<number> = [0]
  while (stack.length > 0) {
    const v = stack.pop()
    const d = depths.pop()!
    if (typeof v !== "object" || v === null) continue
    if (d + 1 > maxDepth) return true
    const children: ReadonlyArray<unknown> = Array.isArray(v) ? v : Object.values(v)
    for (const child of children) {
      if (typeof child === "object" && child !== null) {
        stack.push(child)
        depths.push(d + 1)
      }
    }
  }
  return false
}
