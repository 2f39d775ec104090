/**
 * @module presession
 *
 * CSRF protection for the forms sent before there is a session (sign-in; later the invite and
 * reset forms): a double-submit token. The page sets a random token in an HttpOnly cookie
 * (`__Host-waybill_form`) and puts the same token in the form's `csrf` field; a POST is accepted
 * only when both are present and equal (constant time), on top of the Origin check every POST
 * gets. Another site can make a browser send the cookie but cannot read it, and the `__Host-`
 * prefix keeps subdomains from planting one of their own.
 */
import * as Encoding from "effect/Encoding"
import { constantTimeEqual } from "@waybill/core"
import { type CookiePolicy, cookieName, setCookie } from "./cookies.js"

/** The pre-session token cookie's base name. */
export const PRESESSION_COOKIE = "waybill_form"

/** How long a sign-in form stays usable in an open tab (2 hours). */
const PRESESSION_MAX_AGE_SECONDS = 2 * 60 * 60

/** 32 random bytes as base64url: 43 characters. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** A new random token (WebCrypto's CSPRNG). */
const newToken = (): string => Encoding.encodeBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(32)))

/** The request's pre-session token, or undefined when its cookie holds none (or a malformed one). */
export const readPresession = (policy: CookiePolicy, cookies: ReadonlyMap<string, string>): string | undefined => {
  const value = cookies.get(cookieName(policy, PRESESSION_COOKIE))
  return value !== undefined && TOKEN.test(value) ? value : undefined
}

/**
 * The token a public page puts in its forms: the one the browser already holds, else a new one
 * with the `Set-Cookie` line that hands it over.
 */
export const presessionToken = (
  policy: CookiePolicy,
  cookies: ReadonlyMap<string, string>
): { readonly token: string; readonly cookie?: string } => {
  const existing = readPresession(policy, cookies)
  if (existing !== undefined) return { token: existing }
  const token = newToken()
  return { token, cookie: setCookie(policy, PRESESSION_COOKIE, token, { maxAgeSeconds: PRESESSION_MAX_AGE_SECONDS }) }
}

/** Whether a form's `csrf` field equals the token of the request's cookie. */
export const checkPresession = (
  policy: CookiePolicy,
  cookies: ReadonlyMap<string, string>,
  submitted: string | undefined
): boolean => {
  const expected = readPresession(policy, cookies)
  return expected !== undefined && submitted !== undefined && constantTimeEqual(submitted, expected)
}
