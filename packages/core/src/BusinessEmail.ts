/**
 * @module BusinessEmail
 *
 * Provisioning accepts business e-mail only (interface 5). The domain is normalised (lowercased,
 * trailing dot stripped, IDN to punycode through the WHATWG URL parser, which every runtime has)
 * and it and each parent domain are checked against the pinned free-mail and disposable list,
 * so `Mail.Yahoo.COM.`, `x.gmail.com` and `gmаil.com` with a Cyrillic `а` are all caught or
 * compared in one canonical form. Pure.
 */
import { FREE_MAIL_DOMAINS } from "./data/freemail.js"

/** An address split into a kept local part and a canonical domain. */
export interface NormalisedEmail {
  /** `local@domain` with the domain canonical; the local part is kept as typed (it may be case-sensitive). */
  readonly address: string
  readonly domain: string
}

export type EmailProblem = "malformed" | "free-mail"

const LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/

/** The canonical ASCII form of a domain, or undefined when it is not a usable host name. */
export const canonicalDomain = (raw: string): string | undefined => {
  const trimmed = raw.trim().toLowerCase().replace(/\.+$/, "")
  if (trimmed === "" || /[\s/\\?#@:[\]%]/.test(trimmed)) return undefined
  let host: string
  try {
    host = new URL(`http://${trimmed}`).hostname
  } catch {
    return undefined
  }
  host = host.replace(/\.+$/, "")
  if (host.length > 253 || !host.includes(".")) return undefined
  const labels = host.split(".")
  if (labels.some((l) => l.length === 0 || l.length > 63 || !/^[a-z0-9-]+$/.test(l))) return undefined
  // An IP literal is not a business domain.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return undefined
  return host
}

/** The domain and each parent that still has a dot: `a.b.gmail.com` -> `a.b.gmail.com`, `b.gmail.com`, `gmail.com`. */
export const parents = (domain: string): ReadonlyArray<string> => {
  const labels = domain.split(".")
  const out: Array<string> = []
  for (let i = 0; i < labels.length - 1; i++) out.push(labels.slice(i).join("."))
  return out
}

/** Parses an address; the domain in canonical form. */
export const normalise = (input: string): NormalisedEmail | undefined => {
  const value = input.trim()
  if (value.length > 254) return undefined
  const at = value.lastIndexOf("@")
  if (at <= 0) return undefined
  const local = value.slice(0, at)
  if (!LOCAL.test(local) || local.startsWith(".") || local.endsWith(".") || local.includes("..")) return undefined
  const domain = canonicalDomain(value.slice(at + 1))
  if (domain === undefined) return undefined
  return { address: `${local}@${domain}`, domain }
}

/**
 * Whether an address is acceptable for provisioning. `allow` lists domains accepted even when
 * the free-mail list names them (exact canonical domains; a parent in `allow` covers subdomains).
 */
export const check = (
  input: string,
  allow: ReadonlyArray<string> = []
):
  | { readonly _tag: "Ok"; readonly email: NormalisedEmail }
  | { readonly _tag: "Refused"; readonly problem: EmailProblem } => {
  const email = normalise(input)
  if (email === undefined) return { _tag: "Refused", problem: "malformed" }
  const chain = parents(email.domain)
  const allowed = new Set(allow.map((d) => canonicalDomain(d)).filter((d): d is string => d !== undefined))
  if (chain.some((d) => allowed.has(d))) return { _tag: "Ok", email }
  if (chain.some((d) => FREE_MAIL_DOMAINS.has(d))) return { _tag: "Refused", problem: "free-mail" }
  return { _tag: "Ok", email }
}
