/** Makes request URLs safe to log: credential query parameters are masked (DECISIONS.md). */

const SECRET_PARAMS = new Set(["key", "apikey", "token", "ticket", "validation_key", "verify_code"])

export const safeUrlForLog = (url: URL): string => {
  if (url.search === "") return url.pathname
  const params = new URLSearchParams(url.search)
  const out = new URLSearchParams()
  for (const [k, v] of params) out.append(k, SECRET_PARAMS.has(k.toLowerCase()) ? "***" : v.slice(0, 64))
  return `${url.pathname}?${out.toString()}`
}
