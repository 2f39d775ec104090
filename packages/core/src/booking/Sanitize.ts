/**
 * @module Sanitize
 *
 * Turns the loosely typed fields of a create-shipments request into clean values. Clients send
 * phones with punctuation, weights with units ("15 lbs"), flags as "y" or `true`, numbers as
 * strings and strings as numbers; the API accepts all of that, and rejects only what cannot be
 * understood. Every validator returns `Either<value, message>` where the message is short and
 * omits the field name (`"is required"`), so the caller can prefix whichever name the client
 * used (`"Phone is required"`). Nothing here throws, whatever the input.
 */
import * as Either from "effect/Either"

/** Message for a required field that is missing, `null` or blank. */
export const requiredMessage = "is required"

/**
 * The heaviest shipment accepted, in pounds. Far above any configured vehicle, it only stops
 * absurd values (typos, overflow) before they reach rating; the vehicle's own limit is the
 * real check (see `Catalog.capacityProblem`).
 */
export const maxWeightLb = 100_000

/** `undefined`, `null`, or a string that is empty once trimmed. */
const isMissing = (input: unknown): boolean =>
  input === undefined || input === null || (typeof input === "string" && input.trim() === "")

/**
 * A decimal number as clients type it: plain (`1200`, `15.5`, `.5`) or with comma thousands
 * separators in groups of three (`1,200`). No sign and no exponent, so `-5` and `1e999` are
 * rejected rather than misread.
 */
const decimal = String.raw`(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+`

/**
 * Pieces are a count, so any word after the number is taken as the counted noun
 * (`3 pcs`, `3pieces`, `3 boxes`).
 */
const piecesPattern = new RegExp(String.raw`^(${decimal})(?:[a-z]+\.?)?$`, "i")

/**
 * Only pound units are stripped from a weight: `15 kg` silently rated as 15 lb would be wrong,
 * so any other unit is an error.
 */
const weightPattern = new RegExp(String.raw`^(${decimal})(?:lbs?\.?|pounds?|#)?$`, "i")

/** The number in a string or number input, `"missing"`, or `"invalid"`. */
const quantity = (input: unknown, pattern: RegExp): number | "missing" | "invalid" => {
  if (isMissing(input)) return "missing"
  if (typeof input === "number") return Number.isFinite(input) ? input : "invalid"
  if (typeof input !== "string") return "invalid"
  const match = pattern.exec(input.replace(/\s+/g, ""))
  if (match === null) return "invalid"
  const n = Number(match[1]!.replace(/,/g, ""))
  return Number.isFinite(n) ? n : "invalid"
}

/**
 * A US phone number as its 10 digits. Everything but digits is dropped, so
 * `(312) 555-1234`, `312.555.1234` and `+1 312 555 1234` are the same number; an 11-digit
 * number with the country code 1 loses it. Numbers are accepted as their decimal digits.
 * Whether the area code exists is not checked: a typical 10-digit shape is the contract.
 */
export const phone = (input: unknown): Either.Either<string, string> => {
  if (isMissing(input)) return Either.left(requiredMessage)
  if (typeof input !== "string" && typeof input !== "number") {
    return Either.left("must be a 10-digit phone number")
  }
  const digits = String(input).replace(/\D/g, "")
  if (digits.length === 10) return Either.right(digits)
  if (digits.length === 11 && digits.startsWith("1")) return Either.right(digits.slice(1))
  return Either.left("must be a 10-digit phone number")
}

/**
 * The total piece count: a positive whole number, from a number or a string with spaces and a
 * unit word (`" 3 pcs "`). `3.0` is 3; `3.5`, `0`, `-1` and `abc` are errors. The vehicle's
 * piece limit is checked later, against the catalog.
 */
export const pieces = (input: unknown): Either.Either<number, string> => {
  const n = quantity(input, piecesPattern)
  if (n === "missing") return Either.left(requiredMessage)
  if (n === "invalid" || !Number.isSafeInteger(n) || n <= 0) {
    return Either.left("must be a positive whole number")
  }
  return Either.right(n)
}

/**
 * The total weight in pounds: a positive finite number, from a number or a string with spaces,
 * comma thousands separators and a pound unit (`"1,200 lb"`, `"15 lbs"`, `"15#"`). Zero,
 * negatives, exponents, other units and anything above {@link maxWeightLb} are errors.
 */
export const weight = (input: unknown): Either.Either<number, string> => {
  const n = quantity(input, weightPattern)
  if (n === "missing") return Either.left(requiredMessage)
  if (n === "invalid" || n <= 0) return Either.left("must be a positive number of pounds")
  if (n > maxWeightLb) return Either.left(`must be at most ${maxWeightLb} lb`)
  return Either.right(n)
}

/** Tab, line feed, vertical tab, form feed, carriage return, NEL: controls that separate words. */
const spacingControls = /[\t\n\v\f\r\u0085]+/g

/** Every other C0/C1 control character, including NUL and DEL. */
const otherControls = /\p{Cc}/gu

/**
 * Any character {@link text}'s replacements act on: a C0/C1 control (the spacing ones included)
 * or, in `u` mode where a valid pair is one code point, a lone surrogate.
 */
const needsCleaning = /[\p{Cc}\uD800-\uDFFF]/u

/** A UTF-16 surrogate without its partner; it cannot be encoded as UTF-8 and breaks storage. */
const loneSurrogates = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * Optional free text, cleaned for storage and display. Strings and finite numbers are kept
 * (as their decimal form); anything else is `""`, because an optional field the client filled
 * with junk is treated as absent rather than failing the booking. Control characters are
 * removed (line breaks and tabs become a space so words stay apart), lone surrogates are
 * dropped, the result is trimmed, then silently truncated to `max` Unicode code points
 * (never splitting a surrogate pair) as the API promises for server-side truncation.
 */
export const text = (input: unknown, max: number): string => {
  const raw =
    typeof input === "string" ? input : typeof input === "number" && Number.isFinite(input) ? String(input) : ""
  // Most input needs no cleaning: one scan for anything the three replacements would touch.
  const cleaned = needsCleaning.test(raw)
    ? raw.replace(loneSurrogates, "").replace(spacingControls, " ").replace(otherControls, "").trim()
    : raw.trim()
  if (!(max > 0)) return ""
  if (cleaned.length <= max) return cleaned
  return Array.from(cleaned).slice(0, Math.floor(max)).join("").trimEnd()
}

/**
 * Required free text: as {@link text}, but empty after cleaning is `"is required"`, so a
 * contact of only spaces or control characters is caught.
 */
export const requiredText = (input: unknown, max: number): Either.Either<string, string> => {
  const s = text(input, max)
  return s === "" ? Either.left(requiredMessage) : Either.right(s)
}

const truthy: ReadonlySet<string> = new Set(["y", "yes", "true", "1"])
const falsy: ReadonlySet<string> = new Set(["n", "no", "false", "0"])

/**
 * A `Y`/`N` flag such as `SignatureReq`. Also accepts `yes`/`no`, `true`/`false`, `1`/`0` in
 * any case, as strings, booleans or numbers. Missing or blank means `false` (the flag is
 * optional and opt-in); anything else is an error rather than a guess, since it decides a fee.
 */
export const flag = (input: unknown): Either.Either<boolean, string> => {
  if (isMissing(input)) return Either.right(false)
  if (typeof input === "boolean") return Either.right(input)
  if (typeof input === "string" || typeof input === "number") {
    const key = String(input).trim().toLowerCase()
    if (truthy.has(key)) return Either.right(true)
    if (falsy.has(key)) return Either.right(false)
  }
  return Either.left("must be Y or N")
}

/**
 * A US ZIP code as its 5 digits: `12345` or ZIP+4 `12345-6789` (the +4 is dropped, since the
 * centroid lookup is by 5-digit ZIP). A number is accepted only if it already has five digits:
 * `501` is not padded to `00501`, because a number has lost the leading zeros and padding
 * would guess. Missing or blank is `"is required"`.
 */
export const zip = (input: unknown): Either.Either<string, string> => {
  if (isMissing(input)) return Either.left(requiredMessage)
  const s =
    typeof input === "string" ? input.trim() : typeof input === "number" && Number.isInteger(input) ? String(input) : ""
  const match = /^(\d{5})(?:-\d{4})?$/.exec(s)
  return match === null ? Either.left("must be a 5-digit ZIP code") : Either.right(match[1]!)
}
