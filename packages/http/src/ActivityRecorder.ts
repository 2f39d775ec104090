/**
 * @module ActivityRecorder
 *
 * Records API calls in the account's activity log (core `ActivityStore`) without putting a
 * write on any request's path: the handler hands each call to {@link ActivityRecorderShape.record},
 * a synchronous push into an in-process buffer, and a flusher writes the buffer in batches,
 * every `flushEveryMs` (250 ms) or as soon as `batchSize` (500) calls wait, whichever comes
 * first, each batch one multi-row insert in one transaction.
 *
 * The buffer is bounded (`capacity`, 10 000 calls): when storage falls behind, further calls
 * are dropped and counted (`waybill_activity_dropped_total{reason="buffer_full"}`) rather than
 * grow memory without bound; a batch that fails to write is logged, counted
 * (`reason="write_failed"`) and not retried, so a database outage cannot pile work up either.
 * The log is a convenience for the account, never a ledger.
 *
 * What is buffered is written when the layer is released: `createHandler(...).dispose()`, which
 * hosts call on graceful shutdown.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { type ActivityEntry, ActivityStore, Metrics, Ulid } from "@waybill/core"

/** How the recorder batches; every field has a default. */
export interface ActivityRecorderOptions {
  /** The longest a recorded call waits before its batch is written, ms (default 250). */
  readonly flushEveryMs?: number
  /** Calls per batch; this many waiting start a write at once (default 500). */
  readonly batchSize?: number
  /** Calls the buffer holds at most; more are dropped and counted (default 10 000). */
  readonly capacity?: number
}

/** One call to record: an activity entry before the recorder gives it an id. */
export type RecordedCall = Omit<ActivityEntry, "id">

/** What the recorder has done since it started. */
export interface ActivityRecorderStats {
  /** Calls waiting in the buffer. */
  readonly buffered: number
  /** Calls written to storage. */
  readonly written: number
  /** Calls dropped because the buffer was full (or the recorder was closed). */
  readonly droppedFull: number
  /** Calls lost with a batch that could not be written. */
  readonly droppedFailed: number
}

export interface ActivityRecorderShape {
  /** Buffers one call; never blocks, never fails (a full buffer drops the call and counts it). */
  readonly record: (call: RecordedCall) => void
  /** Writes everything buffered now and waits for it (tests; the layer's release does it too). */
  readonly flush: () => Promise<void>
  readonly stats: () => ActivityRecorderStats
}

/** The recorder the handler hands calls to; absent or off, nothing is recorded. */
export class ActivityRecorder extends Context.Tag("@waybill/http/ActivityRecorder")<
  ActivityRecorder,
  ActivityRecorderShape
>() {}

/** A recorder with its end: `close` stops taking calls and writes what is buffered. */
export interface RunningRecorder extends ActivityRecorderShape {
  readonly close: () => Promise<void>
}

const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []

const positive = (value: number | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new Error(`activity recorder: ${name} must be a positive integer`)
  return value
}

/** ULIDs of the calls' own times, from one WebCrypto draw per batch (ids are not secrets). */
const withIds = (calls: ReadonlyArray<RecordedCall>): ReadonlyArray<ActivityEntry> => {
  const random = globalThis.crypto.getRandomValues(new Uint8Array(10 * calls.length))
  return calls.map((call, i) => ({ id: Ulid.encode(call.at, random.subarray(i * 10, i * 10 + 10)), ...call }))
}

/**
 * The recorder over `write`, which writes one batch and reports whether it was kept. `write`
 * must not reject (the layer's does not: it logs and counts a failure).
 */
export const makeRecorder = (
  write: (entries: ReadonlyArray<ActivityEntry>) => Promise<boolean>,
  options: ActivityRecorderOptions = {}
): RunningRecorder => {
  const every = positive(options.flushEveryMs, 250, "flushEveryMs")
  const size = positive(options.batchSize, 500, "batchSize")
  const capacity = positive(options.capacity, 10_000, "capacity")
  let buffer: Array<RecordedCall> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  let writing: Promise<void> | undefined
  let closed = false
  let written = 0
  let droppedFull = 0
  let droppedFailed = 0

  // Writes a batch, then goes on while a full batch waits (or, draining, while anything does).
  const pump = async (drain: boolean): Promise<void> => {
    do {
      const batch = buffer.length <= size ? buffer : buffer.slice(0, size)
      buffer = buffer.length <= size ? [] : buffer.slice(size)
      if (batch.length === 0) return
      const kept = await write(withIds(batch)).catch(() => false)
      if (kept) written += batch.length
      else droppedFailed += batch.length
    } while (buffer.length >= size || (drain && buffer.length > 0))
  }

  const start = (drain: boolean): Promise<void> => {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    if (writing !== undefined) {
      // The running pump takes full batches itself; a drain waits for it, then takes the rest.
      return drain ? writing.then(() => start(true)) : writing
    }
    const running = pump(drain).finally(() => {
      writing = undefined
      if (buffer.length > 0 && !closed) arm()
    })
    writing = running
    return running
  }

  const arm = () => {
    if (timer === undefined && writing === undefined) {
      timer = setTimeout(() => {
        timer = undefined
        void start(false)
      }, every)
    }
  }

  return {
    record: (call) => {
      if (closed || buffer.length >= capacity) {
        droppedFull += 1
        Metrics.activityDroppedBy.buffer_full.unsafeUpdate(1, NO_LABELS)
        return
      }
      buffer.push(call)
      if (buffer.length >= size) {
        if (writing === undefined) void start(false)
      } else arm()
    },
    flush: () => start(true),
    stats: () => ({ buffered: buffer.length, written, droppedFull, droppedFailed }),
    close: () => {
      closed = true
      return start(true)
    }
  }
}

/** Records nothing: the layer provides no `ActivityStore`, or recording is off. */
const off: ActivityRecorderShape = {
  record: () => {},
  flush: () => Promise.resolve(),
  stats: () => ({ buffered: 0, written: 0, droppedFull: 0, droppedFailed: 0 })
}

/**
 * The recorder over the `ActivityStore` of the layer it is built on (none: recording is off),
 * or off when `options` is `false`. Releasing the layer writes what is buffered.
 */
export const layer = (options: ActivityRecorderOptions | false = {}): Layer.Layer<ActivityRecorder> =>
  Layer.scoped(
    ActivityRecorder,
    Effect.gen(function* () {
      if (options === false) return off
      const store = yield* Effect.serviceOption(ActivityStore)
      if (Option.isNone(store)) return off
      const runtime = yield* Effect.runtime<never>()
      const append = store.value.append
      const write = (entries: ReadonlyArray<ActivityEntry>) =>
        Runtime.runPromise(runtime)(
          append(entries).pipe(
            Effect.as(true),
            Effect.tap(() => Effect.sync(() => Metrics.activityWritten.unsafeUpdate(entries.length, NO_LABELS))),
            Effect.catchAllCause((cause) =>
              Effect.logWarning("activity: a batch of the activity log could not be written; it is lost", cause).pipe(
                Effect.annotateLogs("entries", entries.length),
                Effect.zipRight(
                  Effect.sync(() => Metrics.activityDroppedBy.write_failed.unsafeUpdate(entries.length, NO_LABELS))
                ),
                Effect.as(false)
              )
            )
          )
        )
      const recorder = makeRecorder(write, options)
      yield* Effect.addFinalizer(() => Effect.promise(() => recorder.close()))
      return recorder
    })
  )
