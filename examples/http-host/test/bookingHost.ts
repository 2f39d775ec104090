/**
 * Starting and awaiting the crash tests' host process (`bookingHostChild.ts`), shared by the
 * booking and Idempotency-Key crash tests.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { resolve } from "node:path"

const hostDir = resolve(import.meta.dirname, "..")

/**
 * Starts the host child on `dbFile` (with an optional crash `mode` of the child); resolves with
 * it and its URL once it listens.
 */
export const startBookingHost = (dbFile: string, mode?: string) =>
  new Promise<{ readonly child: ChildProcess; readonly url: string }>((ready, fail) => {
    const args = ["--import", "tsx", "test/bookingHostChild.ts", dbFile, ...(mode === undefined ? [] : [mode])]
    const child = spawn(process.execPath, args, { cwd: hostDir, stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const m = /ready (\S+)/.exec(out)
      if (m !== null) ready({ child, url: m[1]! })
    })
    child.once("exit", (code, signal) => fail(new Error(`host exited early (${code ?? signal})`)))
  })

/** Resolves once the child has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done()
    else child.once("exit", () => done())
  })
