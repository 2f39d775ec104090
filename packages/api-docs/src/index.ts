/**
 * @module @waybill/api-docs
 *
 * The rendered reference page of `/api/v1` at `GET /api/v1/docs/`: Swagger UI (`swagger-ui-dist`,
 * maintained by SmartBear) with every asset served from this process, never from a CDN. The
 * page loads the OpenAPI document the handler serves (`GET /api/v1/openapi.json`).
 *
 * It is a package of its own because it reads the renderer's files from `node_modules` (through
 * `node:fs`), which `@waybill/http` must not do: the handler stays runtime-neutral. A host mounts
 * {@link ApiDocs.fetch} next to the handler for the paths {@link ApiDocs.handles} accepts.
 *
 * The page runs no inline script or style: its one script of its own is a file (`init.js`) that
 * reads the document's URL from a `data-` attribute, so the Content-Security-Policy can be
 * `script-src 'self'; style-src 'self'` without `unsafe-inline` or `unsafe-eval`.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

export interface ApiDocsOptions {
  /** Where the page lives; ends with `/` (default `/api/v1/docs/`). */
  readonly basePath?: string
  /** The OpenAPI document the page loads (default `/api/v1/openapi.json`). */
  readonly specUrl?: string
  /** The page's title (default `Waybill API reference`). */
  readonly title?: string
}

export interface ApiDocs {
  /** Where the page lives (`/api/v1/docs/`). */
  readonly basePath: string
  /** Whether a request path is the page's (the base path with or without its final `/`, or an asset). */
  readonly handles: (pathname: string) => boolean
  /** Answers a request for the page or one of its assets; 404 for anything else, 405 for methods other than GET and HEAD. */
  readonly fetch: (request: Request) => Promise<Response>
}

interface Asset {
  readonly type: string
  /** The bytes, read on the asset's first request and then kept (the renderer's files are about 2 MB). */
  readonly body: () => Promise<Uint8Array | string>
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The page's own script: starts Swagger UI on the document named by the page. */
const INIT_JS = `"use strict";
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`

/** The directory of the installed `swagger-ui-dist`. */
const rendererDir = (): string => dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))

/** The Content-Security-Policy of the page: its own origin only (plus the document's, if elsewhere). */
export const contentSecurityPolicy = (specUrl: string): string => {
  const spec = /^https?:\/\//i.test(specUrl) ? ` ${new URL(specUrl).origin}` : ""
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // Swagger UI's stylesheet draws its icons as data: SVG images.
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${spec}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/**
 * Builds the page. The renderer's files are found here, so a missing `swagger-ui-dist` is a
 * startup error, not a broken page later; each is read on its first request and kept, so a
 * server whose reference page is never opened does not hold them.
 */
export const apiDocs = (options: ApiDocsOptions = {}): ApiDocs => {
  const basePath = options.basePath ?? "/api/v1/docs/"
  if (!basePath.startsWith("/") || !basePath.endsWith("/"))
    throw new Error("apiDocs: basePath must start and end with /")
  const specUrl = options.specUrl ?? "/api/v1/openapi.json"
  const title = options.title ?? "Waybill API reference"
  const dir = rendererDir()
  const file = (name: string): (() => Promise<Uint8Array>) => {
    const path = join(dir, name)
    if (!existsSync(path)) throw new Error(`apiDocs: ${path} is missing (swagger-ui-dist is incomplete)`)
    let read: Promise<Uint8Array> | undefined
    return () =>
      (read ??= readFile(path).then(
        (bytes) => new Uint8Array(bytes),
        (error: unknown) => {
          read = undefined
          throw error
        }
      ))
  }
  const text = (body: string) => () => Promise.resolve(body)
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<link rel="stylesheet" href="swagger-ui.css"><link rel="icon" type="image/png" href="favicon-32x32.png">` +
    `</head><body><div id="swagger-ui" data-spec-url="${escapeHtml(specUrl)}"></div>` +
    `<script src="swagger-ui-bundle.js"></script><script src="init.js"></script></body></html>`
  const assets = new Map<string, Asset>([
    ["", { type: "text/html; charset=utf-8", body: text(html) }],
    ["swagger-ui.css", { type: "text/css; charset=utf-8", body: file("swagger-ui.css") }],
    ["swagger-ui-bundle.js", { type: "text/javascript; charset=utf-8", body: file("swagger-ui-bundle.js") }],
    ["favicon-32x32.png", { type: "image/png", body: file("favicon-32x32.png") }],
    ["init.js", { type: "text/javascript; charset=utf-8", body: text(INIT_JS) }]
  ])
  const csp = contentSecurityPolicy(specUrl)
  const bare = basePath.slice(0, -1)
  const handles = (pathname: string) =>
    pathname === bare || (pathname.startsWith(basePath) && assets.has(pathname.slice(basePath.length)))

  const answer = (status: number, body: string | Uint8Array | null, headers: Record<string, string>) =>
    new Response(body as BodyInit | null, {
      status,
      headers: { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", ...headers }
    })

  const fetch = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url)
    if (request.method !== "GET" && request.method !== "HEAD")
      return answer(405, "Method not allowed.\n", { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
    // Relative asset links need the final slash.
    if (pathname === bare) return answer(308, null, { location: basePath })
    const asset = pathname.startsWith(basePath) ? assets.get(pathname.slice(basePath.length)) : undefined
    if (asset === undefined) return answer(404, "Not found.\n", { "content-type": "text/plain; charset=utf-8" })
    const isPage = asset.type.startsWith("text/html")
    return answer(200, request.method === "HEAD" ? null : await asset.body(), {
      "content-type": asset.type,
      // The page is small and names the assets; the assets change only with the package.
      "cache-control": isPage ? "no-cache" : "public, max-age=86400",
      ...(isPage ? { "content-security-policy": csp, "x-frame-options": "DENY" } : {})
    })
  }
  return { basePath, handles, fetch }
}
