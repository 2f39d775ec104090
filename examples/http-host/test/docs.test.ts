/**
 * Keeps docs/ from drifting away from the code: the lifecycle page embeds the diagram the
 * state machine generates, the embedding guide quotes the code embedding.test.ts runs, the
 * operations page names every CLI command and option `pnpm waybill help` lists, and the
 * create-shipments reference names every configured service and vehicle with its aliases.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { Config, Lifecycle, Operations } from "@waybill/core"
import { configTableRows } from "../src/config.js"

const hostDir = resolve(import.meta.dirname, "..")
const docsDir = resolve(import.meta.dirname, "../../../docs")
const doc = (name: string) => readFileSync(resolve(docsDir, name), "utf8")

/** The code between `// #region name` and `// #endregion name`, without its common indentation. */
const region = (source: string, name: string): string => {
  const m = new RegExp(`^[ \\t]*// #region ${name}\\n([\\s\\S]*?)\\n[ \\t]*// #endregion ${name}$`, "m").exec(source)
  if (m === null) throw new Error(`no region ${name}`)
  const lines = m[1]!.split("\n")
  const indent = Math.min(...lines.filter((l) => l.trim() !== "").map((l) => /^ */.exec(l)![0].length))
  return lines.map((l) => l.slice(indent)).join("\n")
}

/** The commands of the USAGE text: `serve`, `account create`, ..., one per shipment action. */
const usageCommands = (usage: string): Array<string> => {
  const section = usage.split("Commands:")[1]!.split("Options for every command:")[0]!
  return section
    .split("\n")
    .filter((line) => /^ {2}[a-z]/.test(line))
    .flatMap((line) => {
      const [command, sub] = line.trim().split(/\s+/)
      if (sub === undefined || !/^[a-z][a-z|-]*$/.test(sub)) return [command!]
      return sub.split("|").map((s) => `${command} ${s}`)
    })
}

describe("docs stay true to the code", () => {
  it("docs/lifecycle.md embeds Lifecycle.stateDiagram verbatim", () => {
    expect(doc("lifecycle.md")).toContain("```mermaid\n" + Lifecycle.stateDiagram + "\n```")
  })

  it("docs/embedding.md quotes the code embedding.test.ts runs", () => {
    const source = readFileSync(resolve(import.meta.dirname, "embedding.test.ts"), "utf8")
    const guide = doc("embedding.md")
    for (const name of ["sample", "programs"]) {
      expect(guide, `region ${name}`).toContain("```ts\n" + region(source, name) + "\n```")
    }
  })

  it("docs/operations.md names every command and option of `pnpm waybill help`", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli.ts", "help"], {
      cwd: hostDir
    })
    const commands = usageCommands(stdout)
    expect(commands).toContain("serve")
    expect(commands).toContain("shipment fail-attempt")
    expect(commands.length).toBeGreaterThanOrEqual(9 + Operations.ActionName.literals.length)
    const page = doc("operations.md")
    for (const command of commands) expect(page, command).toContain(`pnpm waybill ${command}`)
    for (const option of new Set(stdout.match(/--[a-z][a-z-]*/g))) expect(page, option).toContain(option)
  })

  it("docs/operations.md has the settings table of config.ts: every option, its variable, file key and default", () => {
    const page = doc("operations.md")
    const table =
      /<!-- config-table:start[^\n]*-->\n\| flag[^\n]*\n\|---[^\n]*\n([\s\S]*?)\n<!-- config-table:end -->/.exec(page)
    expect(table, "the config-table markers").not.toBeNull()
    expect(table![1]!.split("\n")).toEqual(configTableRows())
  })

  it("docs/operations.md names every operator action of /ops/v1", () => {
    const page = doc("operations.md")
    for (const action of Operations.ActionName.literals) expect(page, action).toContain(`/${action}`)
  })

  it("docs/api/create-shipments.md lists every default service and vehicle with its aliases", () => {
    const page = doc("api/create-shipments.md")
    for (const option of [...Config.defaults.services, ...Config.defaults.vehicles]) {
      for (const name of [option.code, ...option.aliases]) expect(page, name).toContain(`\`${name}\``)
    }
  })
})
