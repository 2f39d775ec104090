/**
 * @module cookies
 *
 * Reading the `Cookie` field and writing `Set-Cookie` lines. Every cookie of the portal is
 * HttpOnly, SameSite=Lax and Path=/; with HTTPS (the default) it is Secure and its name has the
 * `__Host-` prefix, so no subdomain and no plain-HTTP page can set or shadow it. Plain-HTTP
 * development (`allowInsecureHttp`) drops both.
 */
import * as Redacted from "effect/Redacted"

/** The cookies of a request's `Cookie` field (the first one of a name wins). */
export const parseCookies = (header: string | null): ReadonlyMap<string, string> => {
  const cookies = new Map<string, string>()
  if (header === null) return cookies
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    let value = part.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    if (name !== "" && !cookies.has(name)) cookies.set(name, value)
  }
  return cookies
}

/** How the portal's cookies are named and flagged. */
export interface CookiePolicy {
  /** Plain HTTP: no `Secure`, no `__Host-` prefix (development only). */
  readonly insecure: boolean
}

/** A cookie's full name under the policy: `__Host-<base>`, or `<base>` over plain HTTP. */
export const cookieName = (policy: CookiePolicy, base: string): string => (policy.insecure ? base : `__Host-${base}`)

/** The value characters a cookie may hold without quoting (RFC 6265 cookie-octet, less a few). */
const COOKIE_VALUE = /^[A-Za-z0-9._~+/=-]*$/

/**
 * A `Set-Cookie` line. No `Max-Age` makes a browser-session cookie (the server decides when a
 * session ends); `maxAgeSeconds: 0` deletes the cookie.
 */
export const setCookie = (
  policy: CookiePolicy,
  base: string,
  value: string,
  options: { readonly maxAgeSeconds?: number } = {}
): string => {
  if (!COOKIE_VALUE.test(value)) throw new Error("a cookie value must be plain ASCII without separators")
  return [
    `${cookieName(policy, base)}=${value}`,
    "Path=/",
    ...(options.maxAgeSeconds === undefined ? [] : [`Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`]),
    "HttpOnly",
    "SameSite=Lax",
    ...(policy.insecure ? [] : ["Secure"])
  ].join("; ")
}

/** A `Set-Cookie` line that deletes the cookie. */
export const clearCookie = (policy: CookiePolicy, base: string): string =>
  setCookie(policy, base, "", { maxAgeSeconds: 0 })

/** The session cookie's base name (DECISIONS.md): `__Host-waybill_session` over HTTPS. */
export const SESSION_COOKIE = "waybill_session"

/** The session token of a request, if its cookie holds one. */
export const readSession = (policy: CookiePolicy, cookies: ReadonlyMap<string, string>) => {
  const value = cookies.get(cookieName(policy, SESSION_COOKIE))
  return value === undefined || value === "" ? undefined : Redacted.make(value)
}

/** The `Set-Cookie` line that hands a new session token to the browser. */
export const writeSession = (policy: CookiePolicy, token: Redacted.Redacted<string>): string =>
  setCookie(policy, SESSION_COOKIE, Redacted.value(token))

/** The `Set-Cookie` line that drops the session cookie (sign-out, a session that ended). */
export const dropSession = (policy: CookiePolicy): string => clearCookie(policy, SESSION_COOKIE)
