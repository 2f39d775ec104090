import { defineProject } from "vitest/config"

/** Property tests run many cases; under parallel load they need more than vitest's 5 s. */
export default defineProject({
  test: {
    name: "@waybill/rate-limit-buffered",
    testTimeout: 60_000
  }
})
