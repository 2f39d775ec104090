/**
 * Prints one plain closing line, `Tests: N passed, N failed[, N skipped]`, after the default
 * reporter's output, so any CI can read the outcome without knowing vitest's format.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0
    let failed = unhandledErrors.length
    let skipped = 0
    for (const module of testModules) {
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
    }
    const line = `Tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`
    // Printed at exit so it is the run's closing line, after the default reporter's summary.
    process.once("exit", () => process.stdout.write(`\n${line}\n`))
  }
}
