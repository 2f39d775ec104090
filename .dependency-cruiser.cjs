/**
 * dependency-cruiser rules for the Waybill workspace (`pnpm deps:check`).
 *
 * Dependency direction (docs: ARCHITECTURE.md): examples -> adapters -> core, http -> core,
 * adapters/http-node -> http. Adapters never import each other; only examples compose adapters.
 *
 * Workspace packages are linked by pnpm as node_modules symlinks whose package.json `exports`
 * map the `waybill-source` condition to `./src/index.ts` (the condition is listed first below).
 * With `preserveSymlinks: false` an import of `@waybill/core` resolves
 * to its real path `packages/core/src/index.ts`, so the path-based rules below see through package
 * names. NodeNext relative imports are written `./Foo.js`; dependency-cruiser maps them to `./Foo.ts`.
 */
const fs = require("node:fs")
const path = require("node:path")

/** Directory names under adapters/ (each is published as `@waybill/<dir>`), read at cruise time. */
const adapterDirs = (() => {
  try {
    return fs
      .readdirSync(path.join(__dirname, "adapters"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
  } catch {
    return []
  }
})()
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * An adapter reached by its package name when that name did not resolve (not declared in the
 * importer's package.json, so pnpm made no link). Declared links resolve to `adapters/<dir>/...`.
 */
const adapterPackageName =
  adapterDirs.length > 0 ? `^@waybill/(${adapterDirs.map(escapeRegExp).join("|")})(/|$)` : "^$.^"

/** Any module file inside the installed `effect` package (pnpm real path or a plain node_modules path). */
const effect = "(^|/)node_modules/effect/"

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycles make module initialisation order fragile and Layers hard to reason about.",
      from: {},
      to: { circular: true }
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment:
        "The import does not resolve: a typo, a missing file, or a package missing from this " +
        "package's package.json (pnpm links only declared dependencies).",
      from: {},
      to: { couldNotResolve: true }
    },
    {
      name: "core-only-effect",
      severity: "error",
      comment:
        "@waybill/core is the pure domain: it may import its own modules and `effect` only. " +
        "No other npm package and no Node built-in; capabilities come in through ports.",
      from: { path: "^packages/core/src/" },
      to: { pathNot: ["^packages/core/", effect] }
    },
    {
      name: "adapters-no-cross",
      severity: "error",
      comment:
        "Adapters never import each other (by relative path or by @waybill/<adapter>); only " +
        "examples/* or a host composes concrete adapters.",
      from: { path: "^adapters/([^/]+)/" },
      to: { path: ["^adapters/[^/]+/", adapterPackageName], pathNot: ["^adapters/$1/", "^@waybill/$1(/|$)"] }
    },
    {
      name: "no-adapter-in-core-or-http",
      severity: "error",
      comment: "Library packages (core, http, testkit) may not depend on concrete adapters.",
      from: { path: "^packages/" },
      to: { path: ["^adapters/", adapterPackageName] }
    },
    {
      name: "http-only-core",
      severity: "error",
      comment:
        "@waybill/http is framework-free: it may import its own modules, `effect` and @waybill/core " +
        "(through the package entry, not core's internals).",
      from: { path: "^packages/http/src/" },
      to: { pathNot: ["^packages/http/", "^packages/core/src/index\\.ts$", effect] }
    },
    {
      name: "client-portable",
      severity: "error",
      comment:
        "@waybill/client runs in Node, Deno, Bun and browsers: its sources import each other and " +
        "openapi-fetch only (no Node built-in, no other package).",
      from: { path: "^packages/client/src/" },
      to: { pathNot: ["^packages/client/src/", "(^|/)node_modules/openapi-fetch/"] }
    },
    {
      name: "core-folders-through-index",
      severity: "error",
      comment:
        "Core is grouped by capability (shared, access, geo, shipments, booking, documents, " +
        "provisioning, webhooks). A folder reaches another only through that folder's index.ts, " +
        "so each capability decides what it exposes.",
      from: { path: "^packages/core/src/([^/]+)/" },
      to: {
        path: "^packages/core/src/[^/]+/",
        pathNot: ["^packages/core/src/$1/", "^packages/core/src/[^/]+/index\\.ts$"]
      }
    },
    {
      name: "core-floor-shared",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `shared/` may use only the floors below it.",
      from: { path: "^packages/core/src/shared/" },
      to: { path: "^packages/core/src/(access|geo|shipments|booking|documents|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-access",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `access/` may use only the floors below it.",
      from: { path: "^packages/core/src/access/" },
      to: { path: "^packages/core/src/(geo|shipments|booking|documents|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-geo",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `geo/` may use only the floors below it.",
      from: { path: "^packages/core/src/geo/" },
      to: { path: "^packages/core/src/(access|shipments|booking|documents|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-shipments",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `shipments/` may use only the floors below it.",
      from: { path: "^packages/core/src/shipments/" },
      to: { path: "^packages/core/src/(booking|documents|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-booking",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `booking/` may use only the floors below it.",
      from: { path: "^packages/core/src/booking/" },
      to: { path: "^packages/core/src/(documents|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-documents",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `documents/` may use only the floors below it.",
      from: { path: "^packages/core/src/documents/" },
      to: { path: "^packages/core/src/(booking|provisioning|webhooks)/" }
    },
    {
      name: "core-floor-provisioning",
      severity: "error",
      comment:
        "Core's floors, bottom up: shared -> access, geo -> shipments -> booking, documents, provisioning -> webhooks. `provisioning/` may use only the floors below it.",
      from: { path: "^packages/core/src/provisioning/" },
      to: { path: "^packages/core/src/(booking|documents|webhooks)/" }
    }
  ],

  options: {
    // Only each workspace package's src/, test/ and bench/: no dist/, coverage/ or per-package tool
    // configs (tsup.config.ts). Anchored to the workspace folders on purpose: npm packages resolve to
    // `node_modules/.../dist/...`, and a bare "dist/" pattern would drop them (and the rules about them).
    exclude: {
      path: "^(packages|adapters|examples)/[^/]+/(?!(src|test|bench)(/|$))"
    },
    // Keep npm packages as leaves (so rules still see `effect`, `kysely`, node built-ins),
    // but do not cruise into them. Workspace links resolve to real paths outside node_modules.
    doNotFollow: { path: ["(^|/)node_modules/"] },

    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    preserveSymlinks: false,
    combinedDependencies: false,
    moduleSystems: ["es6", "cjs"],
    detectJSDocImports: false,

    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["waybill-source", "import", "require", "node", "default"],
      extensions: [".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".mjs", ".cjs", ".json"]
    },

    reporterOptions: {
      text: { highlightFocused: true }
    }
  }
}
