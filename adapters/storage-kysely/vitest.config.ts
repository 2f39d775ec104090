import { defineProject } from "vitest/config"

/**
 * `test/globalSetup.ts` decides once per run which dialects the suites use (it probes the
 * PostgreSQL server when `WAYBILL_TEST_DIALECTS` is not set); see `test/dialects.ts`.
 */
export default defineProject({
  test: {
    name: "@waybill/storage-kysely",
    globalSetup: ["./test/globalSetup.ts"]
  }
})
