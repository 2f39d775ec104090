/**
 * The reference page mounted by the example host next to the handler: `GET /api/v1/docs/`
 * answers the page, its assets answer from this server with their types, and the document the
 * page names is the one the handler serves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openApiDocument } from "@waybill/http"
import { startHost, type TestHost } from "./harness.js"

let h: TestHost
beforeAll(async () => {
  h = await startHost()
})
afterAll(async () => {
  await h.close()
})

describe("GET /api/v1/docs/ (the reference page)", () => {
  it("serves the page and its assets locally, and the page loads the served document", async () => {
    const page = await fetch(`${h.url}/api/v1/docs/`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("content-security-policy")).not.toContain("unsafe-inline")
    const html = await page.text()
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs).toEqual(expect.arrayContaining(["swagger-ui.css", "swagger-ui-bundle.js", "init.js"]))
    for (const ref of refs) {
      const asset = await fetch(new URL(ref, `${h.url}/api/v1/docs/`))
      expect(asset.status, ref).toBe(200)
      const type = asset.headers.get("content-type")
      if (ref.endsWith(".js")) expect(type, ref).toBe("text/javascript; charset=utf-8")
      if (ref.endsWith(".css")) expect(type, ref).toBe("text/css; charset=utf-8")
      await asset.arrayBuffer()
    }

    const specUrl = /data-spec-url="([^"]+)"/.exec(html)![1]!
    expect(specUrl).toBe("/api/v1/openapi.json")
    const spec = await fetch(new URL(specUrl, h.url))
    expect(spec.status).toBe(200)
    expect(spec.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(await spec.json()).toEqual(openApiDocument())
  })

  it("redirects /api/v1/docs to the page; other paths under it stay the handler's (404 envelope)", async () => {
    const bare = await fetch(`${h.url}/api/v1/docs`, { redirect: "manual" })
    expect(bare.status).toBe(308)
    expect(bare.headers.get("location")).toBe("/api/v1/docs/")
    const other = await fetch(`${h.url}/api/v1/docs/nothing-here`)
    expect(other.status).toBe(404)
    expect(await other.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })
  })
})
