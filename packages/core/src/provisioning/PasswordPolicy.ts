/**
 * @module PasswordPolicy
 *
 * The provisioning password rule (DECISIONS.md: NIST SP 800-63B-4 for a single factor): 15 to
 * 128 characters (counted as Unicode code points after NFKC), not on a small list of common
 * passwords, not one repeated character, and not containing the e-mail's local part or domain
 * name. No composition rules: length is what resists guessing. Pure.
 */

export type PasswordProblem = "too-short" | "too-long" | "common" | "contains-email"

export const MIN_LENGTH = 15
export const MAX_LENGTH = 128

/** Common passwords of 15 characters or more (shorter ones already fail the length rule). */
const COMMON: ReadonlySet<string> = new Set([
  "123456789012345",
  "1234567890123456",
  "12345678901234567890",
  "passwordpassword",
  "password1234567",
  "password12345678",
  "passwordpassword1",
  "qwertyuiopasdfgh",
  "qwertyuiopasdfghjkl",
  "qwertyuiop123456",
  "1q2w3e4r5t6y7u8i",
  "1qaz2wsx3edc4rfv",
  "zaq12wsxcde34rfv",
  "abcdefghijklmnop",
  "abcdefghijklmnopqrstuvwxyz",
  "iloveyouiloveyou",
  "letmeinletmein1",
  "welcomewelcome1",
  "administrator123",
  "changemechangeme",
  "correcthorsebatterystaple",
  "trustno1trustno1",
  "football12345678",
  "baseball12345678",
  "superman12345678",
  "princessprincess",
  "sunshinesunshine",
  "monkeymonkeymonkey",
  "shadowshadowshadow",
  "masterkeymasterkey",
  "0987654321098765",
  "asdfghjklasdfghjkl",
  "zxcvbnmzxcvbnm12",
  "passw0rdpassw0rd",
  "p@ssw0rdp@ssw0rd",
  "welcome12345678",
  "qwerty1234567890"
])

/** The problem with a password, or undefined when it is acceptable. */
export const check = (password: string, email?: { readonly address: string; readonly domain: string }) => {
  const normal = password.normalize("NFKC")
  const length = [...normal].length
  if (length < MIN_LENGTH) return "too-short" satisfies PasswordProblem
  if (length > MAX_LENGTH) return "too-long" satisfies PasswordProblem
  const lower = normal.toLowerCase()
  if (COMMON.has(lower) || new Set(lower).size <= 2) return "common" satisfies PasswordProblem
  if (email !== undefined) {
    const local = email.address.slice(0, email.address.lastIndexOf("@")).toLowerCase()
    const name = email.domain.split(".")[0] ?? ""
    if ((local.length >= 4 && lower.includes(local)) || (name.length >= 4 && lower === name))
      return "contains-email" satisfies PasswordProblem
  }
  return undefined
}

/** The client-facing explanation of a problem (says what is wanted, never echoes the password). */
export const describe = (problem: PasswordProblem): string => {
  switch (problem) {
    case "too-short":
      return `The password must have at least ${MIN_LENGTH} characters.`
    case "too-long":
      return `The password must have at most ${MAX_LENGTH} characters.`
    case "common":
      return "The password is too common. Choose a longer, less predictable passphrase."
    case "contains-email":
      return "The password must not contain the e-mail address."
  }
}
