/**
 * ESLint 9 flat config for the whole Waybill workspace (`pnpm lint`).
 *
 * Syntax-only: `@eslint/js` recommended + `typescript-eslint` recommended, without the type-checked
 * rule sets, so a full run stays fast and needs no TypeScript program. Layering between packages
 * (who may import whom) is checked by dependency-cruiser (`pnpm deps:check`); the rules below keep
 * `@waybill/core` free of Node APIs at the source level as a first line of defence.
 */
import js from "@eslint/js"
import { defineConfig, globalIgnores } from "eslint/config"
import { builtinModules } from "node:module"
import tseslint from "typescript-eslint"

/** `effect/Schema` replaced the `@effect/schema` package in effect 3.10; a second copy breaks types. */
const effectSchemaRestriction = {
  paths: [{ name: "@effect/schema", message: "use effect/Schema" }],
  patterns: [{ group: ["@effect/schema/*"], message: "use effect/Schema" }]
}

/**
 * Every Node built-in by its bare name (`fs`, `path`, `crypto`, `fs/promises`, ...), which covers the
 * names listed in ARCHITECTURE.md and any other built-in a future Node adds to `builtinModules`.
 */
const nodeBuiltins = builtinModules.filter((name) => !name.startsWith("_"))
const coreNodeMessage = "@waybill/core is pure: no Node APIs. Take the capability as a port (Context.Tag) instead."

/** Globals that only exist on Node (or in CommonJS) and so have no place in the portable core. */
const coreRestrictedGlobals = ["process", "Buffer", "global", "__dirname", "__filename"].map((name) => ({
  name,
  message: `${coreNodeMessage} Configuration reaches core decoded as WaybillConfig, never from the environment.`
}))

const testFiles = ["**/test/**", "**/*.test.ts", "**/*.test.tsx", "**/*.spec.ts"]

export default defineConfig([
  globalIgnores([
    "**/node_modules/",
    "**/dist/",
    "**/coverage/",
    "**/bench-results/",
    "**/.waybill/",
    "**/.next/",
    "**/next-env.d.ts",
    "**/*.tsbuildinfo",
    "pnpm-lock.yaml"
  ]),

  {
    name: "waybill/files",
    files: ["**/*.{js,mjs,cjs,ts,mts,cts,tsx}"]
  },

  js.configs.recommended,
  tseslint.configs.recommended,

  {
    name: "waybill/all",
    rules: {
      "no-unused-vars": "off",
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          args: "after-used",
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true
        }
      ],
      // Already "error" in the recommended set; stated here because the exceptions below depend on it.
      "@typescript-eslint/no-explicit-any": "error",
      // Effect idiom: `export interface Shipment extends Schema.Schema.Type<typeof Shipment> {}` names a type.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // Effect idiom: `export declare namespace Ticket { ... }` merged with a value of the same name.
      "@typescript-eslint/no-namespace": ["error", { allowDeclarations: true }],
      "no-restricted-imports": ["error", effectSchemaRestriction]
    }
  },

  {
    name: "waybill/core-src",
    files: ["packages/core/src/**"],
    rules: {
      "no-console": "error",
      "no-restricted-globals": ["error", ...coreRestrictedGlobals],
      "no-restricted-properties": [
        "error",
        { object: "globalThis", property: "process", message: coreNodeMessage },
        { object: "globalThis", property: "Buffer", message: coreNodeMessage }
      ],
      // Replaces the workspace-wide entry (flat config does not merge rule options), so it repeats it.
      "no-restricted-imports": [
        "error",
        {
          paths: [
            ...effectSchemaRestriction.paths,
            ...nodeBuiltins.map((name) => ({ name, message: coreNodeMessage }))
          ],
          patterns: [...effectSchemaRestriction.patterns, { group: ["node:*"], message: coreNodeMessage }]
        }
      ]
    }
  },

  {
    name: "waybill/client-src",
    // @waybill/client runs in browsers, Deno and Bun too (imports are checked by dependency-cruiser).
    files: ["packages/client/src/**"],
    rules: {
      "no-restricted-globals": [
        "error",
        ...["process", "Buffer", "global", "__dirname", "__filename", "require"].map((name) => ({
          name,
          message: "@waybill/client is portable: only fetch, crypto, AbortController and setTimeout."
        }))
      ]
    }
  },

  {
    name: "waybill/any-allowed",
    // Tests build partial fakes; storage-kysely holds a host-supplied `Kysely<any>` on purpose.
    files: [...testFiles, "adapters/storage-kysely/**"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off"
    }
  },

  {
    name: "waybill/tests",
    files: testFiles,
    rules: {
      // Not in the recommended set; kept off explicitly so a stricter preset never reaches tests.
      "@typescript-eslint/no-non-null-assertion": "off"
    }
  },

  {
    name: "waybill/commonjs",
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { module: "writable", require: "readonly", __dirname: "readonly", __filename: "readonly" }
    },
    rules: {
      "@typescript-eslint/no-require-imports": "off"
    }
  }
])
