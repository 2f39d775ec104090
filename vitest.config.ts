import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config"

/**
 * The export condition that maps each workspace package to its TypeScript sources. Published
 * `exports` name `dist/` under `import` / `require`; tests run the sources, so nothing needs
 * building first (tsconfig's `customConditions` and dependency-cruiser name it too).
 */
const SOURCE_CONDITION = "waybill-source"

// Processes the tests start (`node --import tsx` children: the CLI, crash tests) inherit it.
if (!(process.env["NODE_OPTIONS"] ?? "").includes(`--conditions=${SOURCE_CONDITION}`)) {
  process.env["NODE_OPTIONS"] = `${process.env["NODE_OPTIONS"] ?? ""} --conditions=${SOURCE_CONDITION}`.trim()
}

/**
 * One project per workspace folder (`packages/*`, `adapters/*`, `examples/*`, and `tools/` for the
 * repository's own checks). Vitest projects do not inherit the root config, so each one is
 * declared here with the source condition, extending the folder's own `vitest.config.ts` if any;
 * a new package is picked up without a config of its own.
 */
const projects = (): Array<TestProjectInlineConfiguration> => {
  const folders = ["packages", "adapters", "examples"].flatMap((group) =>
    readdirSync(group, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(group, entry.name, "package.json")))
      .map((entry) => join(group, entry.name))
  )
  return [...folders, "tools"].map((folder) => {
    const config = join(folder, "vitest.config.ts")
    const name =
      folder === "tools"
        ? "@waybill/tools"
        : (JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name: string }).name
    return {
      ...(existsSync(config) ? { extends: `./${config}` } : {}),
      root: `./${folder}`,
      resolve: { conditions: [SOURCE_CONDITION] },
      ssr: { resolve: { conditions: [SOURCE_CONDITION] } },
      // Projects without a config of their own get 30 s a test, not vitest's 5: property tests
      // doing real I/O take seconds when CI runs every project at once on two cores.
      test: existsSync(config) ? { name } : { name, testTimeout: 30_000 }
    }
  })
}

/**
 * One test run over every package. The summary reporter adds a plain `Tests: N passed, N failed`
 * line for CI.
 */
export default defineConfig({
  test: {
    projects: projects(),
    reporters: ["default", "./tools/summary-reporter.ts"]
  }
})
