import { defineConfig } from "vitest/config"

/**
 * One test run over every package; each folder below is its own vitest project. The summary
 * reporter adds a plain `Tests: N passed, N failed` line for CI.
 */
export default defineConfig({
  test: {
    projects: ["packages/*", "adapters/*", "examples/*"],
    reporters: ["default", "./tools/summary-reporter.ts"]
  }
})
