/**
 * The lock of a SQLite engine's one connection (`SqliteEngine`): held by the transaction unit
 * whose body is running, by a statement that must not see a unit half done, and by a connection
 * reserved for Kysely's own driver. Units run one at a time on the connection; the batch they
 * form commits when the lock is free (see `SqliteEngine`).
 *
 * A release frees the lock, runs the owner's `onFree` hook (the batch commit waiting for a free
 * lock), and wakes the first waiter, which then takes it if it is still free (and otherwise
 * waits again, at the head of the queue). It does not hand the lock over: a woken fiber only
 * runs once the scheduler gets to it, and a lock held for it meanwhile made every other fiber's
 * statements queue behind it too, a convoy that, once formed under load, never cleared.
 */
import * as Effect from "effect/Effect"

export interface Lock {
  /** Whether some fiber holds the lock now. */
  readonly locked: boolean
  /** Takes the lock, waiting for it when it is held. */
  readonly acquire: Effect.Effect<void>
  /** Takes the lock if it is free, at once; `false` when it is held. */
  readonly tryAcquire: () => boolean
  /** Frees the lock, runs `onFree`, and wakes the first waiter. */
  readonly release: () => void
}

/** A lock; `onFree` runs on every release, before a waiter is woken. */
export const makeLock = (onFree: () => void = () => {}): Lock => {
  let locked = false
  const waiters: Array<() => void> = []
  const wakeNext = () => {
    const next = waiters.shift()
    if (next !== undefined) next()
  }
  /** Sleeps until a release wakes it (first in line when `urgent`: it was woken once and lost the race). */
  const sleep = (urgent: boolean) =>
    Effect.async<void>((resume) => {
      const waiter = () => resume(Effect.void)
      if (urgent) waiters.unshift(waiter)
      else waiters.push(waiter)
      // Interrupted while waiting: leave the queue.
      return Effect.sync(() => {
        const i = waiters.indexOf(waiter)
        if (i >= 0) waiters.splice(i, 1)
      })
    })
  /** Takes the lock if it is free. */
  const tryTake = (): boolean => {
    if (locked) return false
    locked = true
    return true
  }
  const take = (urgent: boolean): Effect.Effect<void> =>
    Effect.suspend(() => (tryTake() ? Effect.void : Effect.flatMap(sleep(urgent), () => take(true))))
  const acquire = Effect.suspend(() =>
    tryTake()
      ? Effect.void
      : // Woken but interrupted before taking the lock: pass the wake-up on, or a free lock could
        // leave the next waiter asleep.
        Effect.onInterrupt(
          Effect.flatMap(sleep(false), () => take(true)),
          () =>
            Effect.sync(() => {
              if (!locked) wakeNext()
            })
        )
  )
  return {
    get locked() {
      return locked
    },
    acquire,
    tryAcquire: tryTake,
    release: () => {
      locked = false
      onFree()
      if (!locked) wakeNext()
    }
  }
}
