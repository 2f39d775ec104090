/**
 * What the orchestrator needs from a server under test, whichever it is. A target starts on a
 * loopback port over a fresh SQLite file, hands back the credential its requests must carry,
 * and can count the rows it wrote, so a run can prove every 2xx answer really stored something.
 */
import type { PragmaValues } from "./sqlite.js"

/**
 * `waybill`: the example host. `floor`: the least a server can do for the same request
 * (floor.ts). `ceiling`: Waybill's own statements for it, by hand (ceiling.ts).
 */
export type TargetName = "waybill" | "floor" | "ceiling"

export const TARGET_NAMES: ReadonlyArray<TargetName> = ["waybill", "floor", "ceiling"]

export interface StartOptions {
  /** SQLite file to create; its directory is the target's to use (Waybill puts its secret beside it). */
  readonly dbFile: string
  readonly host: string
  /** 0 for any free port. */
  readonly port: number
  /**
   * A PostgreSQL database to run on instead of the SQLite file (`postgres://...`): the
   * `*-pg` scenarios. The file's directory then only holds local files (the master secret).
   */
  readonly databaseUrl?: string
}

export interface RunningTarget {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string
  /** The SQLite settings in effect (see sqlite.ts), or the PostgreSQL ones (see postgres.ts). */
  readonly pragmas: PragmaValues
  /** Rows written so far, by kind (`shipments`, `events`). */
  readonly rowCounts: () => Promise<Readonly<Record<string, number>>>
  readonly close: () => Promise<void>
}

export type StartTarget = (options: StartOptions) => Promise<RunningTarget>

export const isTargetName = (s: string): s is TargetName => (TARGET_NAMES as ReadonlyArray<string>).includes(s)
