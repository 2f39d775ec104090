/**
 * Shared tsup settings: every library package builds ESM + CJS with declarations from
 * `src/index.ts`. `effect` and workspace packages stay external (peer / dependency).
 */
import { defineConfig, type Options } from "tsup"

export const libraryConfig = (overrides: Options = {}) =>
  defineConfig({
    entry: ["src/index.ts"],
    format: ["esm", "cjs"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "node20",
    // import.meta.url in the CJS output (geo-us loads its dataset lazily through createRequire)
    shims: true,
    ...overrides
  })
