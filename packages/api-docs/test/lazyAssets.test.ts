/**
 * The renderer's files (about 2 MB) are found when the page is built but read on their first
 * request, once: a server whose reference page is never opened does not hold them.
 */
import { describe, expect, it, vi } from "vitest"

const reads: Array<string> = []

vi.mock("node:fs/promises", async (original) => {
  const fs = await original<typeof import("node:fs/promises")>()
  return {
    ...fs,
    readFile: (path: string) => {
      reads.push(path)
      return fs.readFile(path)
    }
  }
})

describe("@waybill/api-docs, files read on first use", () => {
  it("reads no file when built, and each asset once however often it is asked for", async () => {
    const { apiDocs } = await import("../src/index.js")
    const docs = apiDocs()
    expect(reads).toEqual([])
    const get = (path: string) => docs.fetch(new Request(`http://localhost/api/v1/docs/${path}`))
    expect((await get("")).status).toBe(200)
    expect(reads).toEqual([])
    const [a, b] = await Promise.all([get("swagger-ui-bundle.js"), get("swagger-ui-bundle.js")])
    expect(await a.text()).toContain("SwaggerUIBundle")
    expect(await b.text()).toContain("SwaggerUIBundle")
    expect((await get("swagger-ui-bundle.js")).status).toBe(200)
    expect(reads.map((path) => path.split("/").pop())).toEqual(["swagger-ui-bundle.js"])
  })
})
