/**
 * The activity recorder: calls wait in a bounded buffer and are written in batches, by time or
 * as soon as a batch is full, one write per batch, never more than one write at a time; a full
 * buffer drops and counts; a failed batch is counted and not retried; closing (the layer's
 * release, so the handler's `dispose`) writes what is buffered.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Context from "effect/Context"
import { type ActivityEntry, ActivityStore, type ActivityStoreShape, Metrics, StorageError, Ulid } from "@waybill/core"
import { ActivityRecorder, ActivityRecording, type RecordedCall } from "../src/index.js"

let n = 0
const call = (over: Partial<RecordedCall> = {}): RecordedCall => ({
  at: 1_800_000_000_000 + n,
  customerNo: "1234567",
  method: "POST",
  path: "/api/v1/order/json/",
  keyMode: "live",
  status: 200,
  clientIp: "203.0.113.9",
  requestId: `req-${n++}`,
  ...over
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A write that keeps its batches; `gate` (when set) holds each write until released. */
const recordingWrite = () => {
  const batches: Array<ReadonlyArray<ActivityEntry>> = []
  let active = 0
  let maxActive = 0
  let gate: Promise<void> | undefined
  const write = async (entries: ReadonlyArray<ActivityEntry>) => {
    active += 1
    maxActive = Math.max(maxActive, active)
    if (gate !== undefined) await gate
    batches.push(entries)
    active -= 1
    return true
  }
  return {
    write,
    batches,
    maxActive: () => maxActive,
    hold: () => {
      let release = () => {}
      gate = new Promise<void>((resolve) => {
        release = () => {
          gate = undefined
          resolve()
        }
      })
      return () => release()
    }
  }
}

describe("ActivityRecording.makeRecorder", () => {
  it("writes nothing on record; one batch after flushEveryMs, with ids of the calls' times", async () => {
    const w = recordingWrite()
    const recorder = ActivityRecording.makeRecorder(w.write, { flushEveryMs: 30 })
    const calls = [call(), call({ keyMode: "test", status: 429 }), call({ keyMode: null })]
    for (const c of calls) recorder.record(c)
    expect(w.batches).toHaveLength(0)
    expect(recorder.stats().buffered).toBe(3)
    await sleep(120)
    expect(w.batches).toHaveLength(1)
    const [batch] = w.batches
    expect(batch!.map(({ id: _id, ...rest }) => rest)).toEqual(calls)
    // ULIDs: 26 characters, unique, the first 10 the call's time.
    const ids = batch!.map((e) => e.id)
    expect(new Set(ids).size).toBe(3)
    for (const e of batch!) expect(e.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    batch!.forEach((e, i) => expect(e.id.slice(0, 10)).toBe(Ulid.encode(calls[i]!.at, new Uint8Array(10)).slice(0, 10)))
    expect(recorder.stats()).toEqual({ buffered: 0, written: 3, droppedFull: 0, droppedFailed: 0 })
    await recorder.close()
  })

  it("a full batch is written at once, without waiting for the timer", async () => {
    const w = recordingWrite()
    const recorder = ActivityRecording.makeRecorder(w.write, { flushEveryMs: 60_000, batchSize: 500 })
    for (let i = 0; i < 499; i++) recorder.record(call())
    await sleep(10)
    expect(w.batches).toHaveLength(0)
    recorder.record(call())
    await sleep(10)
    expect(w.batches.map((b) => b.length)).toEqual([500])
    await recorder.close()
  })

  it("one write at a time; what arrives meanwhile goes in the next batches, full ones first", async () => {
    const w = recordingWrite()
    const recorder = ActivityRecording.makeRecorder(w.write, { flushEveryMs: 20, batchSize: 10 })
    const release = w.hold()
    for (let i = 0; i < 10; i++) recorder.record(call())
    await sleep(5)
    // The first batch is being written; 25 more arrive (two full batches and 5).
    for (let i = 0; i < 25; i++) recorder.record(call())
    await sleep(50)
    expect(w.batches).toHaveLength(0)
    release()
    await sleep(100)
    expect(w.batches.map((b) => b.length)).toEqual([10, 10, 10, 5])
    expect(w.maxActive()).toBe(1)
    const order = w.batches.flat().map((e) => e.requestId)
    expect(order).toEqual([...order].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))))
    await recorder.close()
  })

  it("a full buffer drops further calls and counts them, in the stats and the metric", async () => {
    const w = recordingWrite()
    const release = w.hold()
    const before = (await Effect.runPromise(Metric.value(Metrics.activityDroppedBy.buffer_full))).count
    const recorder = ActivityRecording.makeRecorder(w.write, { flushEveryMs: 5, batchSize: 4, capacity: 10 })
    for (let i = 0; i < 4; i++) recorder.record(call()) // a batch, held in its write
    await sleep(5)
    for (let i = 0; i < 13; i++) recorder.record(call()) // 10 fit, 3 dropped
    expect(recorder.stats()).toMatchObject({ buffered: 10, droppedFull: 3 })
    const after = (await Effect.runPromise(Metric.value(Metrics.activityDroppedBy.buffer_full))).count
    expect(after - before).toBe(3)
    release()
    await recorder.close()
    expect(w.batches.flat()).toHaveLength(14)
    expect(recorder.stats()).toEqual({ buffered: 0, written: 14, droppedFull: 3, droppedFailed: 0 })
  })

  it("a failed batch is counted and not retried; later batches are written", async () => {
    let fail = true
    const kept: Array<ActivityEntry> = []
    const recorder = ActivityRecording.makeRecorder(
      async (entries) => {
        if (fail) return false
        kept.push(...entries)
        return true
      },
      { flushEveryMs: 5 }
    )
    recorder.record(call())
    recorder.record(call())
    await recorder.flush()
    fail = false
    recorder.record(call({ requestId: "after" }))
    await recorder.flush()
    expect(kept.map((e) => e.requestId)).toEqual(["after"])
    expect(recorder.stats()).toMatchObject({ written: 1, droppedFailed: 2, buffered: 0 })
    await recorder.close()
  })

  it("close writes everything buffered (several batches) and takes no more calls", async () => {
    const w = recordingWrite()
    const recorder = ActivityRecording.makeRecorder(w.write, { flushEveryMs: 60_000, batchSize: 3 })
    for (let i = 0; i < 7; i++) recorder.record(call())
    await recorder.close()
    expect(w.batches.map((b) => b.length)).toEqual([3, 3, 1])
    recorder.record(call())
    await sleep(10)
    expect(w.batches.flat()).toHaveLength(7)
    expect(recorder.stats()).toMatchObject({ buffered: 0, droppedFull: 1 })
  })

  it("refuses options that are not positive integers", () => {
    expect(() => ActivityRecording.makeRecorder(async () => true, { batchSize: 0 })).toThrow(/batchSize/)
    expect(() => ActivityRecording.makeRecorder(async () => true, { flushEveryMs: 1.5 })).toThrow(/flushEveryMs/)
  })
})

/** An `ActivityStore` in memory that can be made to fail. */
const memoryStore = () => {
  const rows: Array<ActivityEntry> = []
  const appends: Array<number> = []
  let failing = false
  const store: ActivityStoreShape = {
    append: (entries) =>
      Effect.suspend(() => {
        if (failing) return Effect.fail(new StorageError({ operation: "activity.append", cause: "down" }))
        appends.push(entries.length)
        rows.push(...entries)
        return Effect.void
      }),
    list: () => Effect.succeed({ items: [], hasMore: false }),
    lastUsed: () => Effect.succeed(Option.none()),
    deleteBefore: () => Effect.succeed(0)
  }
  return { store, rows, appends, fail: (on: boolean) => (failing = on) }
}

describe("ActivityRecording.layer", () => {
  it.effect("over the layer's ActivityStore; releasing the layer writes what is buffered", () =>
    Effect.gen(function* () {
      const memory = memoryStore()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        ActivityRecording.layer({ flushEveryMs: 60_000 }).pipe(
          Layer.provide(Layer.succeed(ActivityStore, memory.store))
        ),
        scope
      )
      const recorder = Context.get(context, ActivityRecorder)
      recorder.record(call())
      recorder.record(call())
      expect(memory.rows).toHaveLength(0)
      yield* Scope.close(scope, Exit.void)
      expect(memory.appends).toEqual([2])
    })
  )

  it.effect("a failing store loses the batch, counts it, and the recorder goes on", () => {
    const memory = memoryStore()
    return Effect.gen(function* () {
      const before = (yield* Metric.value(Metrics.activityDroppedBy.write_failed)).count
      const recorder = yield* ActivityRecorder
      memory.fail(true)
      recorder.record(call())
      yield* Effect.promise(() => recorder.flush())
      memory.fail(false)
      recorder.record(call())
      yield* Effect.promise(() => recorder.flush())
      expect(memory.appends).toEqual([1])
      expect((yield* Metric.value(Metrics.activityDroppedBy.write_failed)).count - before).toBe(1)
      expect(recorder.stats()).toMatchObject({ written: 1, droppedFailed: 1 })
    }).pipe(
      Effect.provide(
        ActivityRecording.layer({ flushEveryMs: 60_000 }).pipe(
          Layer.provide(Layer.succeed(ActivityStore, memory.store))
        )
      )
    )
  })

  it.effect("without an ActivityStore, or with `false`, nothing is recorded", () =>
    Effect.gen(function* () {
      const none = yield* ActivityRecorder.pipe(Effect.provide(ActivityRecording.layer()))
      none.record(call())
      const zero = { buffered: 0, written: 0, droppedFull: 0, droppedFailed: 0 }
      // The recorder that records nothing: not even a drop (a closed real one would count one).
      expect(none.stats()).toEqual(zero)
      const memory = memoryStore()
      const off = yield* ActivityRecorder.pipe(
        Effect.provide(ActivityRecording.layer(false).pipe(Layer.provide(Layer.succeed(ActivityStore, memory.store))))
      )
      off.record(call())
      yield* Effect.promise(() => off.flush())
      expect(memory.rows).toHaveLength(0)
      expect(off.stats()).toEqual(zero)
    })
  )
})
