/**
 * One lock per SQLite handle for the synchronous path (`SyncSqlite`): held by the fiber whose
 * transaction is open, and by Kysely-built queries while they run. Every `Connection` over the
 * same handle shares it, so two layers over one database serialize their transactions.
 */
import * as Effect from "effect/Effect"

export interface Lock {
  /** Whether some fiber holds the lock now. */
  readonly locked: boolean
  /** Takes the lock, waiting for it (in arrival order) when it is held. */
  readonly acquire: Effect.Effect<void>
  /** Gives the lock to the next waiter, or frees it. */
  readonly releaseEffect: Effect.Effect<void>
}

const make = (): Lock => {
  let locked = false
  const waiters: Array<() => void> = []
  const release = () => {
    const next = waiters.shift()
    // Handed over: the lock stays held, by the waiter now.
    if (next !== undefined) next()
    else locked = false
  }
  return {
    get locked() {
      return locked
    },
    acquire: Effect.suspend(() => {
      if (!locked) {
        locked = true
        return Effect.void
      }
      return Effect.async<void>((resume) => {
        const waiter = () => resume(Effect.void)
        waiters.push(waiter)
        // Interrupted while waiting: leave the queue (a waiter already handed the lock has
        // resumed, so it is no longer in the queue and cannot be cancelled here).
        return Effect.sync(() => {
          const i = waiters.indexOf(waiter)
          if (i >= 0) waiters.splice(i, 1)
        })
      })
    }),
    releaseEffect: Effect.sync(release)
  }
}

const locks = new WeakMap<object, Lock>()

/** The lock of `handle`, made on first use. */
export const lockOf = (handle: object): Lock => {
  let lock = locks.get(handle)
  if (lock === undefined) {
    lock = make()
    locks.set(handle, lock)
  }
  return lock
}
