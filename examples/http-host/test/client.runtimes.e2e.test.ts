/**
 * `@waybill/client` outside Node: its built package, run by Bun and by Deno (both from the npm
 * registry, devDependencies of `@waybill/client`), books against the real example host, replays a
 * booking with its Idempotency-Key, tracks it, and gets a typed refusal for a bad key
 * (`packages/client/scripts/runtime-smoke.mjs`). The client uses only fetch, crypto and URL; this
 * proves it in two runtimes that are not Node. (Browsers share those APIs; no browser runs here.)
 */
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt } from "../../../tools/workspace.js"
import { sampleShipment } from "../src/sample.js"
import { startHost, type TestAccount, type TestHost } from "./harness.js"

const clientDir = resolve(import.meta.dirname, "../../../packages/client")
const smoke = join(clientDir, "scripts/runtime-smoke.mjs")
const bin = (name: string) => join(clientDir, "node_modules/.bin", name)

let t: TestHost
let a: TestAccount

beforeAll(async () => {
  // The runtimes load the client's dist/ (CI builds before testing).
  if (!existsSync(join(clientDir, "dist/index.js"))) await ensureBuilt()
  t = await startHost()
  a = await t.newAccount("Runtime user")
}, 300_000)
afterAll(() => t.close())

const runtimes: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["bun", ["run", smoke]],
  ["deno", ["run", "--allow-net", "--allow-read", "--allow-env", smoke]]
]

describe("@waybill/client in other runtimes", () => {
  it.each(runtimes)(
    "%s: books, replays with the same Idempotency-Key, tracks, and refuses a bad key",
    async (name, args) => {
      const { stdout } = await promisify(execFile)(
        bin(name),
        [...args, t.url, a.liveKey, JSON.stringify(sampleShipment())],
        {
          cwd: clientDir,
          env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
          timeout: 60_000
        }
      )
      const out = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
        trackNo: string
        replayed: string
        tracked: string
        refused: { tag: string; status: number }
      }
      expect(out.trackNo).toMatch(/^\d{8}$/)
      expect(out.replayed).toBe(out.trackNo)
      expect(out.tracked).toBe(out.trackNo)
      expect(out.refused).toEqual({ tag: "WaybillApiError", status: 401 })
    },
    90_000
  )
})
