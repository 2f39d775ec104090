/**
 * The workspace's library packages and whether their builds are current: shared by the tests that
 * need built packages (the packaging test, the Next.js app, which resolves Waybill through the
 * packages' `import` conditions to `dist/`).
 */
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"

const exec = promisify(execFile)
export const repoDir = resolve(import.meta.dirname, "..")

export interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly license?: string
  readonly exports?: unknown
  readonly main?: string
  readonly module?: string
  readonly types?: string
  readonly sideEffects?: boolean | ReadonlyArray<string>
  readonly engines?: { readonly node?: string }
  readonly repository?: { readonly url?: string; readonly directory?: string }
  readonly homepage?: string
  readonly bugs?: { readonly url?: string }
  readonly publishConfig?: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
}

export interface Library {
  /** Folder relative to the repository, e.g. `packages/core`. */
  readonly dir: string
  readonly manifest: Manifest
}

/** The lines of one top-level section of pnpm-workspace.yaml (`packages:`, `catalog:`). */
export const workspaceSection = (section: string): Array<string> => {
  const lines = readFileSync(join(repoDir, "pnpm-workspace.yaml"), "utf8").split("\n")
  const start = lines.indexOf(`${section}:`)
  if (start < 0) throw new Error(`pnpm-workspace.yaml has no ${section}: section`)
  const body: Array<string> = []
  for (const line of lines.slice(start + 1)) {
    if (line !== "" && !line.startsWith(" ")) break
    if (line.trim() !== "" && !line.trim().startsWith("#")) body.push(line.trim())
  }
  return body
}

/** Every workspace package that is not private, from the workspace's `dir/*` globs. */
export const libraries = (): Array<Library> =>
  workspaceSection("packages")
    .map((line) => line.replace(/^- /, "").replace(/^["']|["']$/g, ""))
    .flatMap((glob) => {
      if (!glob.endsWith("/*")) throw new Error(`unsupported workspace glob ${glob}`)
      const group = glob.slice(0, -2)
      return readdirSync(join(repoDir, group), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(repoDir, group, entry.name, "package.json")))
        .map((entry) => `${group}/${entry.name}`)
    })
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(join(repoDir, dir, "package.json"), "utf8")) as Manifest
    }))
    .filter((library) => library.manifest.private !== true)

/** Every file path a manifest names for consumers: export targets, main, module, types. */
export const namedFiles = (manifest: Manifest): Array<string> => {
  const targets: Array<string> = []
  const walk = (value: unknown): void => {
    if (typeof value === "string") targets.push(value)
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk)
  }
  walk(manifest.exports)
  for (const field of [manifest.main, manifest.module, manifest.types]) if (field !== undefined) targets.push(field)
  return targets
}

/** The newest modification time of the files under a folder. */
export const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .reduce((latest, entry) => Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs), 0)

/** Whether every built file the manifest names exists and is newer than every source file. */
export const built = ({ dir, manifest }: Library): boolean => {
  const files = namedFiles(manifest)
    .filter((file) => file.startsWith("./dist/"))
    .map((file) => join(repoDir, dir, file))
  if (!files.every((file) => existsSync(file))) return false
  const oldest = Math.min(...files.map((file) => statSync(file).mtimeMs))
  return newest(join(repoDir, dir, "src")) <= oldest
}

/**
 * A child's environment without this test run's source condition and vitest's worker variables:
 * scratch code runs as users' would.
 */
export const plainEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== "NODE_OPTIONS" && !name.startsWith("VITEST"))
  )

/** Runs `pnpm build` when a library's built files are missing or older than its sources (CI builds first). */
export const ensureBuilt = async (found: ReadonlyArray<Library> = libraries()): Promise<void> => {
  if (!found.every(built)) await exec("pnpm", ["build"], { cwd: repoDir, env: plainEnv(), maxBuffer: 64 * 1024 * 1024 })
}
