/**
 * The measuring loop the in-process tools share (`inproc.ts`, `inprocDocs.ts`): `concurrency`
 * workers call `once` until `n` calls have started, and the wall time and process CPU time per
 * call are returned in microseconds.
 */
export const measureLoop = async (
  n: number,
  concurrency: number,
  once: () => Promise<void>
): Promise<{ readonly wallUs: number; readonly cpuUs: number }> => {
  let next = 0
  const start = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) await once()
    })
  )
  const used = process.cpuUsage(cpu)
  return { wallUs: Number(process.hrtime.bigint() - start) / 1000 / n, cpuUs: (used.user + used.system) / n }
}
