/*
 * Build check: runs the tsup CLI exactly as `pnpm build` does (same config, from the package
 * directory, whose package.json is where tsup learns which imports are dependencies and stay
 * external) but into a scratch directory, so `dist/` is never touched. Then checks what a
 * consumer of the published package gets: ESM, CJS and both declaration files, with `tz-lookup`
 * left a dependency and the ZIP table beside the bundles rather than inlined.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// Under node_modules (git-ignored), so the built files resolve `zipcodes` like a consumer would.
const outDir = path.join(packageDir, "node_modules", ".cache", "geo-us-build-check")
const read = (file: string) => fs.readFileSync(path.join(outDir, file), "utf8")

const tsupCli = (): string => {
  const require = createRequire(import.meta.url)
  const manifest = require.resolve("tsup/package.json")
  const bin = (require(manifest) as { bin: Record<string, string> }).bin["tsup"]
  if (bin === undefined) throw new Error("tsup has no `tsup` bin")
  return path.join(path.dirname(manifest), bin)
}

describe("tsup build", () => {
  it("emits ESM, CJS and declarations with the data packages external", { timeout: 120_000 }, async () => {
    await promisify(execFile)(process.execPath, [tsupCli(), "--out-dir", outDir, "--silent"], { cwd: packageDir })

    for (const file of ["index.js", "index.cjs", "index.d.ts", "index.d.cts"]) {
      expect(fs.existsSync(path.join(outDir, file)), file).toBe(true)
    }

    const esm = read("index.js")
    const cjs = read("index.cjs")
    for (const dep of ["tz-lookup", "@waybill/core"]) {
      expect(esm).toMatch(new RegExp(`from "${dep}"`))
      expect(cjs).toContain(`require("${dep}")`)
    }
    // The ZIP table is read lazily, on the first lookup, in both builds, from the file that
    // the build puts beside them (the `zipcodes` module itself is never loaded at run time).
    expect(esm).toContain('"./us-zips.tsv"')
    expect(cjs).toContain('"./us-zips.tsv"')
    expect(esm).not.toMatch(/require\(["']zipcodes["']\)|from ["']zipcodes["']/)
    expect(cjs).not.toMatch(/require\(["']zipcodes["']\)/)
    expect(read("us-zips.tsv")).toBe(fs.readFileSync(path.join(packageDir, "src", "data", "us-zips.tsv"), "utf8"))
    // The ZIP table is megabytes; the adapter's own code is a few kilobytes.
    expect(esm.length).toBeLessThan(100_000)
    expect(cjs.length).toBeLessThan(100_000)
    expect(esm).not.toContain('"10001":{')
    expect(esm).not.toContain("10001\tNY")

    const dts = read("index.d.ts")
    expect(dts).toContain("declare const layer: Layer.Layer<Geo>")
    expect(dts).toContain("declare const lookupZip: (zip: string) => ZipLocation | undefined")
    expect(dts).toMatch(/export \{[^}]*GeoUs[^}]*\}/)
    // Consumers must not need the ambient declarations in src/vendor.d.ts.
    expect(dts).not.toMatch(/from ['"](zipcodes|tz-lookup)['"]|reference path/)
    expect(read("index.d.cts")).toBe(dts)

    // Load both bundles in plain Node, as consumers would (tsx only so that the workspace's
    // `@waybill/core`, still TypeScript source until it is published, can be imported).
    const run = async (code: string) => {
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "-e", code], { cwd: outDir })
      return JSON.parse(stdout) as unknown
    }
    const probe = `JSON.stringify([m.GeoUs.lookupZip("60601-0001"), m.lookupZip("85001")?.timeZone, typeof m.GeoUs.layer])`
    const expected = [
      expect.objectContaining({ zip: "60601", timeZone: "America/Chicago" }),
      "America/Phoenix",
      "object"
    ]
    expect(await run(`import("./index.js").then((m) => console.log(${probe}))`)).toEqual(expected)
    expect(await run(`const m = require("./index.cjs"); console.log(${probe})`)).toEqual(expected)
  })
})
