/**
 * The library packages as npm users get them. Every non-private workspace package is packed with
 * `pnpm pack` (which turns `workspace:^` and `catalog:` ranges into real versions, as
 * `changeset publish` does), then:
 *
 * - each tarball's manifest names only files the tarball holds, has no workspace-only ranges,
 *   and carries what a registry page needs (README, LICENSE, repository, engines);
 * - publint and arethetypeswrong, both offline against the tarball bytes, find nothing;
 * - the tarballs are installed with `npm install` into a scratch project (better-sqlite3 compiles
 *   there), where a plain ESM script (`import`) and a plain CommonJS script (`require`) load every
 *   entry point and book a shipment through the handler over SQLite.
 *
 * The packages are packed from their `dist/`; `pnpm build` runs first when a built file is
 * missing or older than a source file (CI builds before testing).
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { promisify } from "node:util"
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sampleShipment } from "../examples/http-host/src/sample.js"
import {
  ensureBuilt,
  type Library,
  libraries,
  type Manifest,
  namedFiles,
  plainEnv,
  repoDir,
  workspaceSection
} from "./workspace.js"

const exec = promisify(execFile)

interface Packed extends Library {
  readonly tarball: string
  /** The tarball unpacked: the folder holding its `package.json`. */
  readonly root: string
  readonly packed: Manifest
}

/** The catalog's version of a dependency, so the scratch project installs what the workspace tests. */
const catalogVersion = (name: string): string => {
  for (const line of workspaceSection("catalog")) {
    const match = /^"?([^":]+)"?:\s*(.+)$/.exec(line)
    if (match?.[1] === name) return match[2]!.trim()
  }
  throw new Error(`${name} is not in the catalog`)
}

/** The package names of its `exports` subpaths: `@waybill/testkit`, `@waybill/testkit/webhook-receiver`. */
const entryPoints = (manifest: Manifest): Array<string> =>
  Object.keys((manifest.exports ?? { ".": null }) as Record<string, unknown>)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => (subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`))

/**
 * node-gyp compiles against the running Node's own headers when they are installed beside it
 * (`<prefix>/include/node`), instead of downloading them; an explicit setting wins.
 */
const nodeHeaders = (): Record<string, string> => {
  const prefix = dirname(dirname(process.execPath))
  const configured = Object.keys(process.env).some((name) => name.toLowerCase() === "npm_config_nodedir")
  return configured || !existsSync(join(prefix, "include", "node", "node.h")) ? {} : { npm_config_nodedir: prefix }
}

/**
 * Packages for test files only: they import vitest, which loads only inside a vitest run and
 * refuses `require()`, so they ship ESM alone and are loaded by a vitest run in the scratch project.
 */
const testOnly = (manifest: Manifest): boolean => manifest.peerDependencies?.["vitest"] !== undefined

/**
 * The scenario both scripts run, as plain JavaScript over the loaded modules: SQLite storage,
 * an account and its test key from the public API, one POST /api/v1/order/json/. It prints what
 * it saw as one JSON line; the test judges it.
 */
const scenario = `
async function book(lib, dbFile, resolved) {
  const { Database, Effect, Layer, Redacted, core, http, storage, geo } = lib
  const sqlite = new Database(dbFile)
  const engine = storage.sqliteEngine(sqlite)
  await Effect.runPromise(storage.migrate(engine))
  const secret = (purpose) => [
    { id: purpose + "-v1", material: Redacted.make(crypto.getRandomValues(new Uint8Array(32))) }
  ]
  const keyRing = core.KeyRing.fromSecrets({
    "api-key": secret("api-key"),
    ticket: secret("ticket"),
    otp: secret("otp"),
    webhook: secret("webhook")
  })
  const layer = Layer.mergeAll(
    storage.StorageKysely.layer(engine),
    geo.GeoUs.layer,
    core.Entropy.webCrypto,
    core.WaybillConfig.layer(),
    keyRing
  )
  const waybill = http.createHandler(layer, { operatorToken: Redacted.make("packaging-operator-token-0123") })
  const account = await Effect.runPromise(core.Accounts.createAccount({ name: "Acme" }).pipe(Effect.provide(layer)))
  const post = (key) =>
    waybill.handler(
      new Request("http://127.0.0.1/api/v1/order/json/", {
        method: "POST",
        headers: { authorization: "Bearer " + key, "content-type": "application/json" },
        body: JSON.stringify({ data: { jsonstrn: "packed-1", shipments: [${JSON.stringify(sampleShipment())}] } })
      }),
      { remoteAddress: "127.0.0.1" }
    )
  const booked = await post(Redacted.value(account.testKey))
  const refused = await post("wrong")
  const answer = {
    resolved,
    booked: { status: booked.status, body: await booked.json() },
    refused: { status: refused.status, body: await refused.json() }
  }
  await waybill.dispose()
  await engine.close()
  process.stdout.write(JSON.stringify(answer) + "\\n")
}
`

/** The ESM script: a static `import` of every entry point of every package. */
const esmScript = (entries: ReadonlyArray<string>): string =>
  [
    `import Database from "better-sqlite3"`,
    `import * as Effect from "effect/Effect"`,
    `import * as Layer from "effect/Layer"`,
    `import * as Redacted from "effect/Redacted"`,
    ...entries.map((entry, i) => `import * as m${i} from ${JSON.stringify(entry)}`),
    `const modules = { ${entries.map((entry, i) => `${JSON.stringify(entry)}: m${i}`).join(", ")} }`,
    scenario,
    `const exported = Object.fromEntries(Object.entries(modules).map(([name, m]) => [name, Object.keys(m).length]))`,
    `const resolved = Object.fromEntries(Object.keys(modules).map((name) => [name, import.meta.resolve(name)]))`,
    `const lib = { Database, Effect, Layer, Redacted, core: m${entries.indexOf("@waybill/core")}, http: m${entries.indexOf("@waybill/http")}, storage: m${entries.indexOf("@waybill/storage-kysely")}, geo: m${entries.indexOf("@waybill/geo-us")} }`,
    `await book(lib, "esm.db", { exported, resolved })`
  ].join("\n")

/** The CommonJS script: `require` of every entry point of every package. */
const cjsScript = (entries: ReadonlyArray<string>): string =>
  [
    `"use strict"`,
    `const Database = require("better-sqlite3")`,
    `const Effect = require("effect/Effect")`,
    `const Layer = require("effect/Layer")`,
    `const Redacted = require("effect/Redacted")`,
    `const names = ${JSON.stringify(entries)}`,
    `const modules = Object.fromEntries(names.map((name) => [name, require(name)]))`,
    scenario,
    `const exported = Object.fromEntries(Object.entries(modules).map(([name, m]) => [name, Object.keys(m).length]))`,
    `const resolved = Object.fromEntries(names.map((name) => [name, require.resolve(name)]))`,
    `const lib = { Database, Effect, Layer, Redacted, core: modules["@waybill/core"], http: modules["@waybill/http"], storage: modules["@waybill/storage-kysely"], geo: modules["@waybill/geo-us"] }`,
    `book(lib, "cjs.db", { exported, resolved }).catch((error) => { console.error(error); process.exitCode = 1 })`
  ].join("\n")

/** A test file for the scratch project's vitest: every test-only entry point, and one real suite. */
const vitestFile = (entries: ReadonlyArray<string>): string =>
  [
    `import { Entropy } from "@waybill/core"`,
    `import { entropyContract } from "@waybill/testkit"`,
    `import { expect, it } from "vitest"`,
    `entropyContract("webCrypto from the installed @waybill/core", Entropy.webCrypto)`,
    ...entries.map(
      (entry) =>
        `it(${JSON.stringify(`${entry} loads and exports something`)}, async () => {\n` +
        `  expect(Object.keys(await import(${JSON.stringify(entry)})).length).toBeGreaterThan(0)\n})`
    )
  ].join("\n")

interface Answer {
  readonly resolved: { readonly exported: Record<string, number>; readonly resolved: Record<string, string> }
  readonly booked: { readonly status: number; readonly body: any }
  readonly refused: { readonly status: number; readonly body: any }
}

const scratch = mkdtempSync(join(tmpdir(), "waybill-packaging-"))
const packages: Array<Packed> = []

beforeAll(async () => {
  const found = libraries()
  await ensureBuilt(found)

  const tarballs = join(scratch, "tarballs")
  mkdirSync(tarballs)
  for (const library of found) {
    const { stdout } = await exec("pnpm", ["pack", "--pack-destination", tarballs], {
      cwd: join(repoDir, library.dir),
      env: plainEnv()
    })
    const tarball = stdout.trim().split("\n").at(-1)!.trim()
    const root = join(scratch, "unpacked", library.manifest.name)
    mkdirSync(root, { recursive: true })
    await exec("tar", ["-xzf", tarball, "-C", root])
    const packed = JSON.parse(readFileSync(join(root, "package", "package.json"), "utf8")) as Manifest
    packages.push({ ...library, tarball, root: join(root, "package"), packed })
  }
}, 600_000)

// The scratch project's node_modules is large; removing it takes a while on a busy machine.
afterAll(() => rm(scratch, { recursive: true, force: true }), 300_000)

describe("the published packages", () => {
  it("are the workspace's non-private packages, core, http and storage among them", () => {
    const names = packages.map((p) => p.manifest.name)
    expect(names).toEqual(expect.arrayContaining(["@waybill/core", "@waybill/http", "@waybill/storage-kysely"]))
    expect(names).not.toContain("@waybill/example-http-host")
  })

  it("name only files their tarball holds, and ship a README and the license", () => {
    for (const { packed, root } of packages) {
      const missing = [...namedFiles(packed), "./README.md", "./LICENSE"].filter(
        (file) => !existsSync(join(root, file))
      )
      expect({ name: packed.name, missing }).toEqual({ name: packed.name, missing: [] })
    }
  })

  it("keep the exports map in the package itself: publishing rewrites nothing but ranges", () => {
    for (const { manifest, packed } of packages) {
      expect(packed.exports, packed.name).toEqual(manifest.exports)
      expect([packed.main, packed.module, packed.types], packed.name).toEqual([
        manifest.main,
        manifest.module,
        manifest.types
      ])
      const exportsMap = manifest.exports as Record<string, Record<string, unknown>>
      for (const [subpath, target] of Object.entries(exportsMap)) {
        if (subpath === "./package.json") continue
        const conditions = testOnly(manifest) ? ["waybill-source", "import"] : ["waybill-source", "import", "require"]
        expect(Object.keys(target), `${packed.name} ${subpath}`).toEqual(conditions)
      }
      expect(Object.keys(manifest.publishConfig ?? {}), packed.name).toEqual(["access"])
    }
  })

  it("carry registry metadata: license, repository folder, homepage, bugs, engines, sideEffects", () => {
    for (const { dir, packed } of packages) {
      expect(packed.license, packed.name).toBe("MIT")
      expect(packed.repository?.directory, packed.name).toBe(dir)
      expect(packed.repository?.url, packed.name).toMatch(/^git\+https:\/\/.+\.git$/)
      expect(packed.homepage, packed.name).toMatch(/^https:\/\//)
      expect(packed.bugs?.url, packed.name).toMatch(/^https:\/\//)
      expect(packed.engines?.node, packed.name).toBe(">=20.19")
      expect(packed.sideEffects, packed.name).toBeDefined()
    }
  })

  it("share one version (the changesets fixed group in .changeset/config.json)", () => {
    const versions = Object.fromEntries(packages.map((p) => [p.manifest.name, p.manifest.version]))
    const core = versions["@waybill/core"]
    expect(versions).toEqual(Object.fromEntries(Object.keys(versions).map((name) => [name, core])))
  })

  it("depend on each other with caret ranges of the current versions, nothing workspace-only", () => {
    const versions = new Map(packages.map((p) => [p.manifest.name, p.manifest.version]))
    for (const { packed } of packages) {
      const ranges = { ...packed.dependencies, ...packed.peerDependencies, ...packed.optionalDependencies }
      for (const [name, range] of Object.entries(ranges)) {
        expect(range, `${packed.name} -> ${name}`).not.toMatch(/^(workspace|catalog|file|link):/)
        const version = versions.get(name)
        if (version !== undefined) expect(range, `${packed.name} -> ${name}`).toBe(`^${version}`)
      }
    }
  })

  it("pass publint (errors, warnings and suggestions)", async () => {
    for (const { packed, tarball } of packages) {
      const bytes = readFileSync(tarball)
      const result = await publint({
        pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer },
        level: "suggestion",
        strict: true
      })
      const messages = result.messages.map(
        (message) => `${message.type}: ${formatMessage(message, result.pkg) ?? message.code}`
      )
      expect({ name: packed.name, messages }).toEqual({ name: packed.name, messages: [] })
    }
  }, 120_000)

  // arethetypeswrong's `node16` profile (its `esm-only` one for test-only packages): node10
  // resolution predates `exports`, and every supported Node (>= 20.19) and TypeScript resolves them.
  it("resolve their types for node16 (CJS and ESM) and bundlers (arethetypeswrong)", async () => {
    for (const { manifest, packed, tarball } of packages) {
      const ignored = new Set(testOnly(manifest) ? ["node10", "node16-cjs"] : ["node10"])
      const result = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarball))))
      const problems =
        "problems" in result
          ? result.problems
              .filter((problem) => !("resolutionKind" in problem) || !ignored.has(problem.resolutionKind))
              .map((problem) => JSON.stringify(problem))
          : ["not checked"]
      expect({ name: packed.name, problems }).toEqual({ name: packed.name, problems: [] })
    }
  }, 300_000)

  describe("installed with npm into a new project", () => {
    const project = join(scratch, "project")
    const entries = (): Array<string> =>
      packages.filter((p) => !testOnly(p.manifest)).flatMap((p) => entryPoints(p.manifest))
    const testEntries = (): Array<string> =>
      packages.filter((p) => testOnly(p.manifest)).flatMap((p) => entryPoints(p.manifest))

    beforeAll(async () => {
      mkdirSync(project)
      const dependencies: Record<string, string> = Object.fromEntries(
        packages.map((p) => [p.manifest.name, `file:${relative(project, p.tarball)}`])
      )
      // Each package's own ranges on its siblings resolve to the tarballs too, never to the registry.
      const overrides = Object.fromEntries(packages.map((p) => [p.manifest.name, `$${p.manifest.name}`]))
      for (const name of ["effect", "kysely", "better-sqlite3"]) dependencies[name] = catalogVersion(name)
      writeFileSync(
        join(project, "package.json"),
        JSON.stringify(
          { name: "waybill-packaging-scratch", version: "1.0.0", private: true, dependencies, overrides },
          null,
          2
        )
      )
      // npm's own cache is reused; better-sqlite3 compiles from source (its prebuilt download is blocked here).
      await exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
        cwd: project,
        env: { ...plainEnv(), ...nodeHeaders() },
        maxBuffer: 64 * 1024 * 1024
      })
      writeFileSync(join(project, "book.mjs"), esmScript(entries()))
      writeFileSync(join(project, "book.cjs"), cjsScript(entries()))
      writeFileSync(join(project, "testkit.test.mjs"), vitestFile(testEntries()))
    }, 900_000)

    const run = async (script: string): Promise<Answer> => {
      const { stdout } = await exec(process.execPath, [script], { cwd: project, env: plainEnv() })
      return JSON.parse(stdout.trim().split("\n").at(-1)!) as Answer
    }

    const expectBooked = (answer: Answer) => {
      expect(answer.booked.status).toBe(200)
      expect(answer.booked.body.error).toBeNull()
      expect(answer.booked.body.data.jsonstrn).toBe("packed-1")
      expect(answer.booked.body.data.shipments[0].result).toBe("success")
      expect(answer.booked.body.data.shipments[0].track_no).toMatch(/^[1-9]\d{7}$/)
      expect(answer.refused.status).toBe(401)
      expect(answer.refused.body.data).toBeNull()
      expect(typeof answer.refused.body.error.message).toBe("string")
      // Every entry point loaded and exports something.
      expect(Object.keys(answer.resolved.exported).sort()).toEqual(entries().sort())
      for (const [entry, count] of Object.entries(answer.resolved.exported)) expect(count, entry).toBeGreaterThan(0)
    }

    it("import (ESM): every entry point loads dist/*.js, and a booking succeeds", async () => {
      const answer = await run("book.mjs")
      expectBooked(answer)
      for (const [entry, file] of Object.entries(answer.resolved.resolved)) {
        expect(file, entry).toMatch(/\/node_modules\/@waybill\/[^/]+\/dist\/[^/]+\.js$/)
      }
    }, 120_000)

    it("require (CommonJS): every entry point loads dist/*.cjs, and a booking succeeds", async () => {
      const answer = await run("book.cjs")
      expectBooked(answer)
      for (const [entry, file] of Object.entries(answer.resolved.resolved)) {
        expect(file, entry).toMatch(/\/node_modules\/@waybill\/[^/]+\/dist\/[^/]+\.cjs$/)
      }
    }, 120_000)

    it("test-only packages load in a vitest run, and testkit's entropy suite passes on core", async () => {
      const vitest = join(project, "node_modules", "vitest", "vitest.mjs")
      const { stdout } = await exec(process.execPath, [vitest, "run", "--reporter=json"], {
        cwd: project,
        env: plainEnv(),
        maxBuffer: 16 * 1024 * 1024
      })
      const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as {
        numPassedTests: number
        numFailedTests: number
        testResults: Array<{ assertionResults: Array<{ fullName: string; status: string }> }>
      }
      const results = report.testResults.flatMap((file) => file.assertionResults)
      expect(results.filter((result) => result.status !== "passed")).toEqual([])
      expect(results.map((result) => result.fullName)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^Entropy contract: webCrypto from the installed @waybill\/core /),
          ...testEntries().map((entry) => `${entry} loads and exports something`)
        ])
      )
    }, 300_000)
  })
})
