import { defineProject } from "vitest/config"

/**
 * Each test file starts a real framework server on loopback (the Next.js one builds the app
 * first). The limits only guard against hangs on a loaded 2-core machine; no test measures time.
 */
export default defineProject({
  test: {
    name: "@waybill/example-frameworks",
    testTimeout: 180_000,
    hookTimeout: 300_000
  }
})
