/**
 * Next.js App Router, for real: examples/next-app is built with `next build` and served by
 * `next start` (a child process on a loopback port), and a shipment is booked and its document
 * downloaded through its catch-all route handlers.
 *
 * The build is the slow part (tens of seconds here), so it is skipped when `.next/` already holds
 * a build of the same inputs: the app's own files, and the Waybill code Next bundles into it (the
 * app imports the example host's sources, which bring the packages' `dist/` with them; only
 * `@waybill/http` and the host's package entry are `serverExternalPackages`), so a build made
 * before a change to Waybill is never served again. The server runs with the `tsx` loader because this repository's packages are
 * TypeScript sources; published packages are plain JavaScript.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, expect, it } from "vitest"
import { OPERATOR_TOKEN, waitFor } from "@waybill/example-http-host/test/harness.js"
import { ensureBuilt } from "../../../tools/workspace.js"
import { bookAndDownload } from "./scenario.js"
import { type Programs, programsOver, tempDir } from "./waybill.js"

const appDir = resolve(import.meta.dirname, "../../next-app")
const nextBin = join(appDir, "node_modules/next/dist/bin/next")
const env = {
  ...process.env,
  NEXT_TELEMETRY_DISABLED: "1",
  NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --import tsx`.trim()
}

/** Every file Next bundles from the app (and what decides how), hashed: the build's identity. */
const sourcesHash = (): string => {
  const hash = createHash("sha256")
  const add = (path: string): void => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) add(join(path, name))
    } else hash.update(path.slice(appDir.length)).update("\0").update(readFileSync(path)).update("\0")
  }
  for (const entry of ["app", "src", "next.config.ts", "package.json", "tsconfig.json"]) add(join(appDir, entry))
  // The Waybill code the build bundles: the example host's sources and every package's build.
  const root = resolve(appDir, "../..")
  add(join(root, "examples/http-host/src"))
  for (const group of ["packages", "adapters"]) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const built = join(root, group, name, "dist", "index.js")
      if (existsSync(built)) add(built)
    }
  }
  hash.update(JSON.parse(readFileSync(join(appDir, "node_modules/next/package.json"), "utf8")).version as string)
  return hash.digest("hex")
}

const build = async (): Promise<void> => {
  const stamp = join(appDir, ".next", "waybill-sources.sha256")
  const wanted = sourcesHash()
  if (existsSync(join(appDir, ".next", "BUILD_ID")) && existsSync(stamp) && readFileSync(stamp, "utf8") === wanted)
    return
  await promisify(execFile)(process.execPath, [nextBin, "build"], { cwd: appDir, env, maxBuffer: 16 * 1024 * 1024 })
  writeFileSync(stamp, wanted)
}

/** A loopback port free a moment ago (`next start` takes a port number, not 0). */
const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const probe = createServer()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => done(port))
    })
  })

let dir: string
let programs: Programs & { readonly close: () => Promise<void> }
let server: ChildProcess | undefined
let output = ""
let url: string

beforeAll(async () => {
  // Next resolves Waybill's packages through their `import` condition, to `dist/`.
  await ensureBuilt()
  await build()
  dir = tempDir()
  const dbFile = join(dir, "waybill.db")
  // Migrates the file and writes its secret before the server first opens it.
  programs = await programsOver(dbFile)
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  server = spawn(process.execPath, [nextBin, "start", "-H", "127.0.0.1", "-p", String(port)], {
    cwd: appDir,
    env: {
      ...env,
      WAYBILL_DB: dbFile,
      WAYBILL_OPERATOR_TOKEN: OPERATOR_TOKEN,
      WAYBILL_BASE_URL: url,
      WAYBILL_ALLOW_INSECURE_HTTP: "1"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let exited: number | null | undefined
  server.on("exit", (code) => (exited = code))
  server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  await waitFor(
    "next start to be ready",
    () => {
      if (exited !== undefined) throw new Error(`next start exited (${exited}):\n${output}`)
      return /Ready in/.test(output)
    },
    120_000
  )
})

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const gone = new Promise((done) => server!.once("exit", done))
    server.kill("SIGTERM")
    await gone
  }
  await programs?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

it("books a shipment and downloads its document through a built Next.js app", async () => {
  await bookAndDownload(url, programs, { contentLength: "dropped", clientAddress: "unknown" })
  expect(output).not.toMatch(/Error/)
})
