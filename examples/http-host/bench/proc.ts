/**
 * Peak resident memory of a child from Linux's /proc: `VmHWM` ("high water mark") in
 * /proc/<pid>/status is the largest RSS the process has had since it started, so one read at the
 * end of a run covers the whole run without sampling. Elsewhere the child's own
 * `process.resourceUsage().maxRSS` is used instead.
 */
import { readFileSync } from "node:fs"

export interface ProcMemory {
  /** Peak RSS so far, KiB. */
  readonly vmHwmKiB?: number
  /** Current RSS, KiB. */
  readonly vmRssKiB?: number
}

/** Parses the `VmHWM:` and `VmRSS:` lines of a /proc/<pid>/status text (values are in kB). */
export const parseProcStatus = (text: string): ProcMemory => {
  const field = (name: string): number | undefined => {
    const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(text)
    return m === null ? undefined : Number(m[1])
  }
  const vmHwmKiB = field("VmHWM")
  const vmRssKiB = field("VmRSS")
  return { ...(vmHwmKiB === undefined ? {} : { vmHwmKiB }), ...(vmRssKiB === undefined ? {} : { vmRssKiB }) }
}

/** The process's memory as /proc reports it, or undefined where there is no /proc (macOS, Windows). */
export const readProcMemory = (pid: number): ProcMemory | undefined => {
  try {
    return parseProcStatus(readFileSync(`/proc/${pid}/status`, "utf8"))
  } catch {
    return undefined
  }
}

/** Cumulative CPU time of the whole machine, all cores, milliseconds (from /proc/stat's `cpu` line). */
export interface MachineCpu {
  readonly busyMs: number
  readonly idleMs: number
}

/** Clock ticks per second of /proc/stat (USER_HZ); 100 on every mainstream Linux build. */
const USER_HZ = 100

/** Parses the aggregate `cpu` line of /proc/stat; iowait counts as idle, steal as busy. */
export const parseProcStat = (text: string): MachineCpu | undefined => {
  const line = text.split("\n").find((l) => l.startsWith("cpu "))
  if (line === undefined) return undefined
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  const tick = 1000 / USER_HZ
  return { busyMs: (user + nice + system + irq + softirq + steal) * tick, idleMs: (idle + iowait) * tick }
}

export const readMachineCpu = (): MachineCpu | undefined => {
  try {
    return parseProcStat(readFileSync("/proc/stat", "utf8"))
  } catch {
    return undefined
  }
}

/**
 * Parses a /proc/<pid>/stat text into the process's user + system CPU time, milliseconds. The
 * command name (field 2) is in parentheses and may hold spaces, so fields are counted after its
 * closing parenthesis: utime and stime are fields 14 and 15.
 */
export const parseProcessStat = (text: string): number | undefined => {
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ")
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const utime = Number(rest[11])
  const stime = Number(rest[12])
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) * (1000 / USER_HZ) : undefined
}

/** CPU time a process has used so far, milliseconds; undefined when it is gone or there is no /proc. */
export const readProcessCpuMs = (pid: number): number | undefined => {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return undefined
  }
}
