import { defineProject } from "vitest/config"

/** Property tests run thousands of cases; under parallel load they need more than vitest's 5 s. */
export default defineProject({
  test: {
    name: "@waybill/core",
    testTimeout: 60_000
  }
})
