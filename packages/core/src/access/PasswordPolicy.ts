/**
 * @module PasswordPolicy
 *
 * The password rule (DECISIONS.md; NIST SP 800-63B-4 for a single factor): a length range
 * (counted as Unicode code points after NFKC), not a common password, not one repeated
 * character or a repeated common word, and not the e-mail address (nor its local part or its
 * domain's name). No composition rules: length is what resists guessing. Pure.
 *
 * Two length ranges are in use: provisioning's (the interface's 15 to 128, the default of
 * {@link check}) and the portal's ({@link PORTAL}: 12 to 256, for passwords set by invite,
 * reset or change). The common list ({@link isCommon}) is generated from a maintained
 * dictionary (`data/commonPasswords.ts`); a password is also common when it is a listed one
 * with digits or symbols around it ("Football2026!").
 */
import { COMMON_PASSWORDS_TEXT } from "./data/commonPasswords.js"

export type PasswordProblem = "too-short" | "too-long" | "common" | "contains-email"

/** Provisioning's range (the interface's): the default of {@link check}. */
export const MIN_LENGTH = 15
export const MAX_LENGTH = 128

/** Length limits of a rule. */
export interface Lengths {
  readonly minLength: number
  readonly maxLength: number
}

/** The portal's range (DECISIONS.md): new passwords set by invite, reset or change. */
export const PORTAL: Lengths = { minLength: 12, maxLength: 256 }

/** Provisioning's range. */
export const PROVISIONING: Lengths = { minLength: MIN_LENGTH, maxLength: MAX_LENGTH }

/** What {@link check} is told besides the password. */
export interface CheckOptions {
  /** The user's e-mail address: the password may not be it or contain it. */
  readonly email?: string
  readonly minLength?: number
  readonly maxLength?: number
}

let common: ReadonlySet<string> | undefined

/** The common list as a set, built on first use (the module loads without the cost). */
const commonSet = (): ReadonlySet<string> => {
  common ??= new Set(COMMON_PASSWORDS_TEXT.split("\n").filter((line) => line !== ""))
  return common
}

/** How many passwords the bundled common list holds. */
export const commonListSize = (): number => commonSet().size

/**
 * Whether a (NFKC, lowercase) password is common: listed; listed once the digits and symbols
 * around it are stripped; one or two distinct characters; or a listed or very short unit
 * repeated ("passwordpassword", "abcabcabcabc").
 */
export const isCommon = (lower: string): boolean => {
  const list = commonSet()
  if (list.has(lower) || new Set(lower).size <= 2) return true
  const core = lower.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, "")
  if (core !== lower && list.has(core)) return true
  const repeated = /^(.+?)\1+$/su.exec(lower)
  if (repeated !== null) {
    const unit = repeated[1]!
    if ([...unit].length <= 4 || list.has(unit)) return true
  }
  return false
}

/** Whether the password is the e-mail, contains it or its local part, or is the domain's name. */
const containsEmail = (lower: string, email: string): boolean => {
  const address = email.trim().normalize("NFKC").toLowerCase()
  const at = address.lastIndexOf("@")
  if (at < 0) return address.length >= 4 && lower.includes(address)
  const local = address.slice(0, at)
  const name = address.slice(at + 1).split(".")[0] ?? ""
  return lower.includes(address) || (local.length >= 4 && lower.includes(local)) || (name.length >= 4 && lower === name)
}

/** The problem with a password, or undefined when it is acceptable. Defaults to provisioning's range. */
export const check = (password: string, options: CheckOptions = {}): PasswordProblem | undefined => {
  const minLength = options.minLength ?? MIN_LENGTH
  const maxLength = options.maxLength ?? MAX_LENGTH
  const normal = password.normalize("NFKC")
  const length = [...normal].length
  if (length < minLength) return "too-short"
  if (length > maxLength) return "too-long"
  const lower = normal.toLowerCase()
  if (isCommon(lower)) return "common"
  if (options.email !== undefined && containsEmail(lower, options.email)) return "contains-email"
  return undefined
}

/**
 * The client-facing explanation of a problem (says what is wanted, never echoes the password),
 * for the range the password was checked against (provisioning's by default).
 */
export const describe = (problem: PasswordProblem, lengths: Partial<Lengths> = {}): string => {
  switch (problem) {
    case "too-short":
      return `The password must have at least ${lengths.minLength ?? MIN_LENGTH} characters.`
    case "too-long":
      return `The password must have at most ${lengths.maxLength ?? MAX_LENGTH} characters.`
    case "common":
      return "The password is too common. Choose a longer, less predictable passphrase."
    case "contains-email":
      return "The password must not contain the e-mail address."
  }
}
