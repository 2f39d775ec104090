/**
 * In-process CPU profiling for a server child, limited to the measured window (start-up and
 * module loading stay out of it). The children run TypeScript through tsx, whose output puts
 * many functions on one generated line; every call frame is therefore mapped back to its `.ts`
 * source position through Node's source-map cache (tsx enables source maps) before the profile
 * is written, so bench/profile.ts and Chrome DevTools show real files and lines.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { findSourceMap } from "node:module"
import { fileURLToPath } from "node:url"

export interface Profiler {
  readonly stop: (file: string) => Promise<string>
}

interface Frame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

/**
 * A name for an anonymous function from the source line it starts on (`export const plan = (`
 * -> `plan`, `insert: (s) =>` -> `insert`), else the line itself, shortened, in angle brackets.
 */
export const nameFromSourceLine = (line: string): string => {
  const text = line.trim()
  const named = /(?:const|let|function\*?|class)\s+([A-Za-z0-9_$]+)/.exec(text) ?? /^([A-Za-z0-9_$]+)\s*[:(]/.exec(text)
  return named?.[1] ?? `<${text.length > 48 ? `${text.slice(0, 45)}...` : text}>`
}

const sourceLines = new Map<string, ReadonlyArray<string> | undefined>()

/**
 * The original source of `url`, split in lines: from the source map when it embeds the source,
 * else from disk (tsx's maps do not embed it; the file is read once, right after the window).
 */
const linesOf = (
  map: NonNullable<ReturnType<typeof findSourceMap>>,
  url: string
): ReadonlyArray<string> | undefined => {
  if (!sourceLines.has(url)) {
    const index = map.payload.sources.indexOf(url)
    let content = index < 0 ? undefined : map.payload.sourcesContent?.[index]
    if (typeof content !== "string" && url.startsWith("file://")) {
      try {
        content = readFileSync(fileURLToPath(url), "utf8")
      } catch {
        content = undefined
      }
    }
    sourceLines.set(url, typeof content === "string" ? content.split("\n") : undefined)
  }
  return sourceLines.get(url)
}

/**
 * Rewrites a frame in place to its original source position, when a source map knows it, and
 * names anonymous functions (Effect.gen bodies, arrow functions) after their source line.
 */
const remap = (frame: Frame): void => {
  if (!frame.url.startsWith("file://")) return
  let map: ReturnType<typeof findSourceMap>
  try {
    map = findSourceMap(fileURLToPath(frame.url))
  } catch {
    return
  }
  if (map === undefined) return
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber)
  if (!("originalSource" in entry) || entry.originalSource === undefined) return
  frame.url = entry.originalSource
  frame.lineNumber = entry.originalLine
  frame.columnNumber = entry.originalColumn
  if (frame.functionName === "" || frame.functionName === "__name") {
    const line = linesOf(map, entry.originalSource)?.[entry.originalLine]
    if (line !== undefined && line.trim() !== "") frame.functionName = nameFromSourceLine(line)
  }
}

/** Starts sampling (1 ms interval, like `--cpu-prof`). */
export const startProfiler = async (): Promise<Profiler> => {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 1000 })
  await session.post("Profiler.start")
  return {
    stop: async (file) => {
      const { profile } = await session.post("Profiler.stop")
      session.disconnect()
      for (const node of profile.nodes) remap(node.callFrame as Frame)
      writeFileSync(file, JSON.stringify(profile))
      return file
    }
  }
}
