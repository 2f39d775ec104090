/**
 * @module router
 *
 * Method + path pattern -> route. Patterns are paths below the portal's base path with `:name`
 * segments (`/shipments/:trackingNo`); a request path matches with or without a final `/`, so
 * the links mailed as `/portal/invite/?token=...` reach the `/invite` route. HEAD is answered as
 * GET.
 */

/** What a route is matched by. */
export interface Routable {
  readonly method: "GET" | "POST"
  /** A path below the base path: `/`, `/signin`, `/shipments/:trackingNo`. */
  readonly path: string
}

export type Match<R extends Routable> =
  | { readonly _tag: "Found"; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

interface Compiled<R extends Routable> {
  readonly route: R
  readonly segments: ReadonlyArray<string>
}

const split = (path: string): Array<string> => path.split("/").filter((s) => s !== "")

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** The params of `segments` against a compiled pattern, or undefined when they do not match. */
const bind = (pattern: ReadonlyArray<string>, segments: ReadonlyArray<string>): Record<string, string> | undefined => {
  if (pattern.length !== segments.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    const s = segments[i]!
    if (p.startsWith(":")) {
      const value = decode(s)
      if (value === undefined || value === "" || value.includes("/")) return undefined
      params[p.slice(1)] = value
    } else if (p !== s) return undefined
  }
  return params
}

/** A matcher over a route table; two routes with the same method and pattern are a startup error. */
export const makeRouter = <R extends Routable>(routes: ReadonlyArray<R>) => {
  const compiled: Array<Compiled<R>> = []
  const seen = new Set<string>()
  for (const route of routes) {
    if (!route.path.startsWith("/")) throw new Error(`portal route ${route.path}: a path starts with /`)
    const key = `${route.method} ${split(route.path).join("/")}`
    if (seen.has(key)) throw new Error(`portal route ${route.method} ${route.path} is declared twice`)
    seen.add(key)
    compiled.push({ route, segments: split(route.path) })
  }
  return (method: string, path: string): Match<R> => {
    const segments = split(path)
    const wanted = method === "HEAD" ? "GET" : method
    const allow = new Set<string>()
    for (const c of compiled) {
      const params = bind(c.segments, segments)
      if (params === undefined) continue
      if (c.route.method === wanted) return { _tag: "Found", route: c.route, params }
      allow.add(c.route.method)
      if (c.route.method === "GET") allow.add("HEAD")
    }
    return allow.size === 0 ? { _tag: "NotFound" } : { _tag: "MethodNotAllowed", allow: [...allow] }
  }
}
