/**
 * @module next
 *
 * Where to go after signing in: the `next` parameter, when it is a path of the portal on this
 * site. Anything else (another origin, a scheme, `//host`, a backslash, a path outside the base
 * path, control characters) falls back to the portal's start page, so a sign-in link cannot send
 * a user elsewhere (no open redirect).
 */

const DUMMY_ORIGIN = "https://portal.invalid"

/** Whether a string holds a C0 control character or DEL (a browser drops or rewrites them). */
const hasControl = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return true
  }
  return false
}

/** The path and query to go to after sign-in: `next` when it is safe, else `<basePath>/`. */
export const safeNext = (basePath: string, next: string | null | undefined): string => {
  const fallback = `${basePath}/`
  if (next === null || next === undefined || next === "" || next.length > 2048) return fallback
  // Only a path: no scheme, no authority, no backslash (browsers read it as a slash), no controls.
  if (!next.startsWith("/") || next.startsWith("//") || next.includes("\\") || hasControl(next)) return fallback
  let url: URL
  try {
    url = new URL(next, DUMMY_ORIGIN)
  } catch {
    return fallback
  }
  if (url.origin !== DUMMY_ORIGIN) return fallback
  if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return fallback
  return `${url.pathname}${url.search}`
}

/** The sign-in page's URL that comes back to `path` (path and query below the site root). */
export const signInHref = (basePath: string, back: string): string =>
  `${basePath}/signin?next=${encodeURIComponent(back)}`
