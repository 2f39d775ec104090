/**
 * Keeps docs/embedding.md's "Frameworks" section true to the code the tests here run: each
 * framework's block is the `// #region` of its file, and the Next.js app's module and config are
 * quoted whole.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { expect, it } from "vitest"

const repoDir = resolve(import.meta.dirname, "../../..")
const read = (path: string) => readFileSync(resolve(repoDir, path), "utf8")
const guide = read("docs/embedding.md")

/** The lines between `// #region name` and `// #endregion name` (the regions here are not indented). */
const region = (path: string, name: string): string => {
  const m = new RegExp(`^// #region ${name}\\n([\\s\\S]*?)\\n// #endregion ${name}$`, "m").exec(read(path))
  if (m === null) throw new Error(`no region ${name} in ${path}`)
  return m[1]!
}

const quoted = (code: string) => "```ts\n" + code.trimEnd() + "\n```"

it.each([
  ["examples/frameworks/src/express.ts", "express"],
  ["examples/frameworks/src/fastify.ts", "fastify"],
  ["examples/frameworks/src/hono.ts", "hono"],
  ["examples/next-app/app/api/v1/[...path]/route.ts", "next-route"]
])("docs/embedding.md quotes the %s region the tests run", (path, name) => {
  expect(guide).toContain(quoted(region(path, name)))
})

it.each(["examples/next-app/src/waybill.ts", "examples/next-app/next.config.ts"])(
  "docs/embedding.md quotes %s whole",
  (path) => {
    expect(guide).toContain(quoted(read(path)))
  }
)

it("the operator route is the API route under another path", () => {
  const api = region("examples/next-app/app/api/v1/[...path]/route.ts", "next-route").split("\n").slice(1)
  const ops = read("examples/next-app/app/ops/v1/[...path]/route.ts").trimEnd().split("\n").slice(1)
  expect(ops).toEqual(api)
})
