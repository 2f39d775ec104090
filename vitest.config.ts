import { defineConfig } from "vitest/config"

/** One test run over every package; each folder below is its own vitest project. */
export default defineConfig({
  test: {
    projects: ["packages/*", "adapters/*", "examples/*"]
  }
})
