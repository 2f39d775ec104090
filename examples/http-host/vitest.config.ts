import { defineProject } from "vitest/config"

/**
 * End-to-end tests start real servers, child processes (the CLI, a killed dispatcher) and SMTP /
 * HTTPS peers on loopback. On a 2-core machine running test files in parallel a CLI call can take
 * seconds, so the limits here only guard against hangs; no test measures time.
 */
export default defineProject({
  test: {
    name: "@waybill/example-http-host",
    // Every /api/v1 answer a test receives through fetch is checked against the OpenAPI document.
    setupFiles: ["./test/setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000
  }
})
