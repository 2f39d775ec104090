/**
 * @module pretenuring
 *
 * Turns V8's allocation-site pretenuring off for the server process (`serve` calls it).
 *
 * V8 starts allocating the objects of an allocation site (an object or array literal in some
 * function) directly in the old generation once nearly all of them have survived a
 * young-generation collection. On Waybill's request path that decision feeds itself: a request
 * that waits (the group commit's `Effect.async`, any suspended fiber) leaves objects of such
 * sites, born old, pointing at the request's young objects. A young-generation collection keeps
 * whatever an old object points at, whether that old object is still in use or not (only a full
 * collection knows), so the request's objects survive, are promoted, and the sites' objects go on
 * "surviving". Every request's state then passes through the old generation.
 *
 * Measured under the booking (`bench/inproc.ts --concurrency 1`, `node --trace-gc-nvp`): 880 KB
 * promoted per young collection with pretenuring, 45 KB without; a `/healthz` that waits once in
 * `Effect.async` promotes about 1 MB per collection with it and nothing without. The figures, and
 * what the bench shows for CPU and peak RSS, are in `docs/benchmarks.md` (session 13).
 *
 * A process-wide V8 setting belongs to whoever owns the process: a team embedding Waybill in its
 * own server passes `--no-allocation-site-pretenuring` to `node` or calls this at startup
 * (`docs/embedding.md`, "The Node process").
 */
import { setFlagsFromString } from "node:v8"

let applied = false

/**
 * Sets `--no-allocation-site-pretenuring`. Call it before the server takes traffic: sites that V8
 * has already decided to pretenure stay so. Idempotent.
 */
export const disablePretenuring = (): void => {
  if (applied) return
  applied = true
  setFlagsFromString("--no-allocation-site-pretenuring")
}
