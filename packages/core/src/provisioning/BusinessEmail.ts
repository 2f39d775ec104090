/**
 * @module BusinessEmail
 *
 * Provisioning accepts business e-mail only (interface 5). The domain is normalised (lowercased,
 * trailing dot stripped, IDN to punycode through the WHATWG URL parser, which every runtime has)
 * and it and each parent domain are checked against the pinned free-mail and disposable list,
 * so `Mail.Yahoo.COM.`, `x.gmail.com` and `gmаil.com` with a Cyrillic `а` are all caught or
 * compared in one canonical form.
 *
 * Two more forms of an address serve limits and lookups: {@link addressKey} (the whole address
 * lowercased: `Ada@x.com` and `ada@x.com` are one mailbox everywhere addresses are compared)
 * and {@link registrableDomain} (the domain a per-domain budget is counted under, so wildcard
 * subdomains share one). Pure.
 */
import { FREE_MAIL_DOMAINS } from "./data/freemail.js"

/** An address split into a kept local part and a canonical domain. */
export interface NormalisedEmail {
  /**
   * `local@domain` with the domain canonical; the local part is kept as typed. This is the form
   * stored, shown and mailed to; never compare it as is (see {@link key}).
   */
  readonly address: string
  readonly domain: string
  /** {@link addressKey} of the address: the form every comparison, lookup and limit key uses. */
  readonly key: string
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

/**
 * The comparison form of an address: the whole address lowercased. RFC 5321 lets a mail server
 * treat local parts case-sensitively, but practically none does, and treating `Ada@x.com` and
 * `ada@x.com` as two people would give one mailbox two registrations, two accounts and two
 * budgets. Addresses are stored as typed (that is what is shown and mailed to) and compared
 * through this, on both sides: it works on a stored address of any age, whatever its case.
 * Local parts are ASCII ({@link normalise} refuses anything else), so lowercasing is
 * locale-independent.
 */
export const addressKey = (address: string): string => address.trim().toLowerCase()

/** Whether two addresses (typed or stored) name the same mailbox, by {@link addressKey}. */
export const sameAddress = (a: string, b: string): boolean => addressKey(a) === addressKey(b)

/**
 * Second-level labels that country registries (two-letter TLDs) commonly sell names under:
 * `acme.co.uk`, `acme.com.au`, `acme.ac.jp`, `acme.or.jp`, `acme.gob.mx`, `acme.ltd.uk`. Kept
 * short on purpose: each label here gives every name under `<label>.<cc>` its own budget, which
 * also helps whoever owns such a name where the registry sells it to anyone.
 */
const COUNTRY_SECOND_LEVELS: ReadonlySet<string> = new Set([
  "ac",
  "co",
  "com",
  "edu",
  "gob",
  "gov",
  "ltd",
  "mil",
  "ne",
  "net",
  "or",
  "org",
  "plc",
  "sch"
])

/**
 * The registrable domain of a canonical domain, for the per-domain limit: a wildcard DNS entry
 * gives one owner any number of subdomains (`a1.acme.com`, `a2.acme.com`, ...), and a budget per
 * full domain would give each its own. Without a Public Suffix List (none is bundled) the rule is
 * a conservative approximation:
 *
 * - the last three labels when the top-level domain is two letters (a country) and the label
 *   before it is one of a few well-known second levels (`co`, `com`, `org`, `net`, `ac`, `gov`,
 *   `edu`, ...): `mail.acme.co.uk` -> `acme.co.uk`;
 * - otherwise the last two labels: `eu.mail.acme.com` -> `acme.com`, `acme.io` -> `acme.io`.
 *
 * It errs towards grouping: names under a public suffix it does not know (`acme.k12.tx.us`,
 * `shop.myhost.example` where `myhost.example` rents subdomains) share one budget, which can
 * only make the limit stricter for them, never let wildcard subdomains escape it. The other way
 * round, the owner of a name such as `co.xx` in a country whose registry sells it gets a budget
 * per subdomain; the per-address limits and the global e-mail cap still hold them.
 */
export const registrableDomain = (domain: string): string => {
  const labels = domain.split(".")
  if (labels.length <= 2) return domain
  const tld = labels[labels.length - 1]!
  const second = labels[labels.length - 2]!
  const keep = /^[a-z]{2}$/.test(tld) && COUNTRY_SECOND_LEVELS.has(second) ? 3 : 2
  return labels.slice(-keep).join(".")
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
  const address = `${local}@${domain}`
  return { address, domain, key: addressKey(address) }
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
