import { defineProject } from "vitest/config"

/**
 * `test/globalSetup.ts` decides once per run which dialects the suites use (it probes the
 * PostgreSQL server when `WAYBILL_TEST_DIALECTS` is not set); see `test/dialects.ts`.
 */
export default defineProject({
  test: {
    name: "@waybill/storage-kysely",
    globalSetup: ["./test/globalSetup.ts"],
    // The contract's property case migrates a fresh database per sample: on PostgreSQL (a new
    // schema each time) a run takes about 5 s, past vitest's default limit on a busy machine.
    testTimeout: 60_000
  }
})
