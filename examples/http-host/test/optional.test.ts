/**
 * What the host loads late (the PostgreSQL driver, the Prometheus page) fails as clearly as an
 * import at start-up would: a missing package is named with the reason it is needed.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { openDatabase } from "../src/host.js"
import { prometheusPage } from "../src/observability.js"
import { loadOptional, once } from "../src/optional.js"

/** A package name no registry holds, imported through a variable so nothing resolves it ahead of time. */
const missing = "@waybill/no-such-package-for-this-test"

describe("loadOptional", () => {
  it("names the purpose, the package and how to install it when the package is missing", async () => {
    const failed = loadOptional("PostgreSQL (--database-url)", "pg", () => import(missing))
    await expect(failed).rejects.toThrow(
      /^PostgreSQL \(--database-url\) needs the package pg, which could not be loaded \(@waybill\/no-such-package-for-this-test is not installed\): install it beside Waybill \(npm install pg\)$/
    )
  })

  it("passes on any other failure as it is, and the module when it loads", async () => {
    const broken = new Error("the package threw while loading")
    await expect(loadOptional("GET /metrics", "x", () => Promise.reject(broken))).rejects.toBe(broken)
    expect(await loadOptional("GET /metrics", "node:path", () => import("node:path"))).toHaveProperty("join")
  })
})

describe("once", () => {
  it("loads once for every caller, and again after a failure", async () => {
    let calls = 0
    const load = once(async () => {
      calls++
      if (calls === 1) throw new Error("first load fails")
      return calls
    })
    await expect(load()).rejects.toThrow("first load fails")
    expect(await Promise.all([load(), load()])).toEqual([2, 2])
    expect(await load()).toBe(2)
    expect(calls).toBe(2)
  })
})

describe("prometheusPage", () => {
  it("loads the adapter with the first scrape; a scrape that cannot says why on standard error, and the next tries again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waybill-metrics-"))
    const database = await openDatabase(join(dir, "waybill.db"))
    const written = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
    try {
      let loads = 0
      const page = prometheusPage(database.engine, undefined, () => {
        loads++
        return loads === 1
          ? loadOptional("GET /metrics", "@waybill/metrics-prometheus", () => import(missing))
          : import("@waybill/metrics-prometheus")
      })
      expect(loads).toBe(0)
      await expect(page()).rejects.toThrow(/^GET \/metrics needs the package @waybill\/metrics-prometheus/)
      expect(written).toHaveBeenCalledWith(
        expect.stringMatching(/^waybill: GET \/metrics needs the package @waybill\/metrics-prometheus, .*\n$/)
      )
      const scraped = await page()
      expect(scraped.body).toContain("waybill_webhook_queue_depth 0")
      await page()
      expect(loads).toBe(2)
    } finally {
      written.mockRestore()
      await database.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
