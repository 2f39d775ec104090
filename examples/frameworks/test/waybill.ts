/**
 * Waybill as the example host composes it (`openDatabase`, `waybillLayer`, `createHandler`), over
 * a fresh SQLite file, for mounting in each framework under test; plus a way to run core
 * programs (accounts, documents) against the same database.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Accounts } from "@waybill/core"
import { createHandler, type WaybillHandler } from "@waybill/http"
import { type HostServices, openDatabase, waybillLayer } from "@waybill/example-http-host/src/host.js"
import { e2eConfig, OPERATOR_TOKEN } from "@waybill/example-http-host/test/harness.js"

/** Runs core programs against the database a framework's Waybill serves, and makes accounts. */
export interface Programs {
  readonly run: <A, E>(program: Effect.Effect<A, E, HostServices>) => Promise<A>
  /** A new customer account; its live API key. */
  readonly newLiveKey: () => Promise<string>
}

/** {@link Programs} over the example host's database file (another process may serve it). */
export const programsOver = async (dbFile: string): Promise<Programs & { readonly close: () => Promise<void> }> => {
  const database = await openDatabase(dbFile)
  const layer = waybillLayer(database.engine, { dbFile, config: e2eConfig })
  const run = <A, E>(program: Effect.Effect<A, E, HostServices>) =>
    Effect.runPromise(program.pipe(Effect.provide(layer)))
  const newLiveKey = async () => Redacted.value((await run(Accounts.createAccount({ name: "Framework test" }))).liveKey)
  return { run, newLiveKey, close: () => database.close() }
}

/** A temporary directory for one test file's database, blobs and secret. */
export const tempDir = () => mkdtempSync(join(tmpdir(), "waybill-frameworks-"))

export interface WaybillUnderTest extends Programs {
  readonly waybill: WaybillHandler
  readonly close: () => Promise<void>
}

/** The example host's Waybill in this process, ready to mount; plain HTTP allowed for documents. */
export const openWaybill = async (): Promise<WaybillUnderTest> => {
  const dir = tempDir()
  const dbFile = join(dir, "waybill.db")
  const programs = await programsOver(dbFile)
  const served = await openDatabase(dbFile)
  const waybill = createHandler(waybillLayer(served.engine, { dbFile, config: e2eConfig }), {
    operatorToken: Redacted.make(OPERATOR_TOKEN),
    allowInsecureHttp: true
  })
  return {
    ...programs,
    waybill,
    close: async () => {
      await waybill.dispose()
      await served.close()
      await programs.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
