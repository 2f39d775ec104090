/**
 * Messages between the orchestrator (run.ts) and a server child (child.ts) over the Node IPC
 * channel. The child announces itself once (`ready` or `failed`), then answers numbered
 * requests until `stop`.
 */
import type { PragmaValues } from "./sqlite.js"

export type ChildOp = "usage" | "memory" | "rows" | "profile-start" | "profile-stop" | "stop"

/** CPU time (microseconds) and peak RSS as the child sees itself (`process.resourceUsage`). */
export interface ChildUsage {
  readonly userMicros: number
  readonly systemMicros: number
  readonly maxRssKiB: number
}

/**
 * Where the child's memory is (MiB): the process before it loaded its target (Node and the
 * module loader), now, the V8 heap and its old generation, memory outside the heap, and the
 * peak RSS so far. With the request's `arg` "gc" (and the child started with `--expose-gc`) a
 * full collection runs first, so the heap figures are what is live.
 */
export interface ChildMemory {
  readonly beforeTargetMiB: number
  readonly rssMiB: number
  readonly heapTotalMiB: number
  readonly heapUsedMiB: number
  readonly oldSpaceMiB: number
  readonly externalMiB: number
  readonly maxRssMiB: number
}

export interface ChildOpResult {
  readonly usage: ChildUsage
  readonly memory: ChildMemory
  readonly rows: Readonly<Record<string, number>>
  readonly "profile-start": null
  /** The .cpuprofile file written (its path is the request's `arg`). */
  readonly "profile-stop": string
  readonly stop: null
}

export type ParentMessage = { readonly id: number; readonly op: ChildOp; readonly arg?: string }

export type ChildMessage =
  | { readonly type: "ready"; readonly url: string; readonly apiKey: string; readonly pragmas: PragmaValues }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "reply"; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: "reply"; readonly id: number; readonly ok: false; readonly message: string }
