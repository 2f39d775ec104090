/**
 * @module headers
 *
 * The security fields on every answer of the portal. The pages run no script at all, so the
 * policy has no `script-src` (it falls back to `default-src 'none'`); styles come from the
 * package's own stylesheet only, never inline.
 */

/** The Content-Security-Policy of every answer. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'"
].join("; ")

/** The fields every answer carries (pages, assets, redirects, errors). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin"
}

/** Pages may hold account data: never stored by the browser or a proxy. */
export const PAGE_CACHE_CONTROL = "no-store"

/** Assets are named by their content's hash: cached for a year and never revalidated. */
export const ASSET_CACHE_CONTROL = "public, max-age=31536000, immutable"
