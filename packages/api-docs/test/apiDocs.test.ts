/**
 * The reference page: served with its assets from this process (no CDN), under a
 * Content-Security-Policy without `unsafe-inline` or `unsafe-eval`, pointing Swagger UI at the
 * document URL. The example host's e2e test (`apiDocs.e2e.test.ts`) checks it mounted next to
 * the handler.
 */
import { describe, expect, it } from "vitest"
import { apiDocs, contentSecurityPolicy } from "../src/index.js"

const base = "http://localhost"
const get = (docs: ReturnType<typeof apiDocs>, path: string, method = "GET") =>
  docs.fetch(new Request(`${base}${path}`, { method }))

/** The `src` and `href` of a page's scripts, stylesheets and icons. */
const referenced = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)

describe("@waybill/api-docs", () => {
  it("serves the page with a strict CSP and every asset it names, with the right types", async () => {
    const docs = apiDocs()
    const page = await get(docs, "/api/v1/docs/")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const csp = page.headers.get("content-security-policy")!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("unsafe-inline")
    expect(csp).not.toContain("unsafe-eval")
    const html = await page.text()
    // No inline script or style: every script has a src, and there is no <style> element.
    expect(html.match(/<script[^>]*>[^<]+<\/script>/g)).toBeNull()
    expect(html).not.toMatch(/<style|style="/)
    expect(html).toContain('data-spec-url="/api/v1/openapi.json"')

    const refs = referenced(html)
    expect(refs).toEqual(
      expect.arrayContaining(["swagger-ui.css", "swagger-ui-bundle.js", "init.js", "favicon-32x32.png"])
    )
    const types: Record<string, string> = {
      css: "text/css; charset=utf-8",
      js: "text/javascript; charset=utf-8",
      png: "image/png"
    }
    for (const ref of refs) {
      expect(ref, "assets are local").not.toMatch(/^(https?:)?\/\//)
      const asset = await get(docs, `/api/v1/docs/${ref}`)
      expect(asset.status, ref).toBe(200)
      expect(asset.headers.get("content-type"), ref).toBe(types[ref.split(".").pop()!])
      expect((await asset.arrayBuffer()).byteLength, ref).toBeGreaterThan(0)
    }
    const bundle = await (await get(docs, "/api/v1/docs/swagger-ui-bundle.js")).text()
    expect(bundle).toContain("SwaggerUIBundle")
    const init = await (await get(docs, "/api/v1/docs/init.js")).text()
    expect(init).toContain('getAttribute("data-spec-url")')
  })

  it("redirects the bare path to the page, and refuses other paths and methods", async () => {
    const docs = apiDocs()
    const bare = await get(docs, "/api/v1/docs")
    expect(bare.status).toBe(308)
    expect(bare.headers.get("location")).toBe("/api/v1/docs/")
    expect((await get(docs, "/api/v1/docs/package.json")).status).toBe(404)
    expect((await get(docs, "/api/v1/docs/../../etc/passwd")).status).toBe(404)
    const post = await get(docs, "/api/v1/docs/", "POST")
    expect(post.status).toBe(405)
    expect(post.headers.get("allow")).toBe("GET, HEAD")
    const head = await get(docs, "/api/v1/docs/swagger-ui.css", "HEAD")
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
    expect(docs.handles("/api/v1/docs/")).toBe(true)
    expect(docs.handles("/api/v1/docs")).toBe(true)
    expect(docs.handles("/api/v1/docs/init.js")).toBe(true)
    expect(docs.handles("/api/v1/docs/other")).toBe(false)
    expect(docs.handles("/api/v1/order/json/")).toBe(false)
  })

  it("takes its paths from the options, escaping the document URL, and lets the page reach a document elsewhere", async () => {
    const docs = apiDocs({ basePath: "/reference/", specUrl: 'https://api.example.com/spec.json?a=1&b="x"' })
    const page = await get(docs, "/reference/")
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('data-spec-url="https://api.example.com/spec.json?a=1&amp;b=&quot;x&quot;"')
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self' https://api.example.com")
    expect(contentSecurityPolicy("/api/v1/openapi.json")).toContain("connect-src 'self';")
    expect(() => apiDocs({ basePath: "/no-slash" })).toThrow(/basePath/)
  })
})
