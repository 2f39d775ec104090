/**
 * @module Purge
 *
 * The loop of every periodic cleanup: delete in bounded statements, so that a large backlog never
 * holds the database's write lock (SQLite) or a long transaction (PostgreSQL) for one huge delete.
 */
import * as Effect from "effect/Effect"

/**
 * Calls `deleteBatch(size)` until it deletes fewer than `size` rows; answers how many it deleted
 * in all.
 */
export const deleteInBatches = <E, R>(
  size: number,
  deleteBatch: (limit: number) => Effect.Effect<number, E, R>
): Effect.Effect<number, E, R> => {
  const loop = (total: number): Effect.Effect<number, E, R> =>
    Effect.flatMap(deleteBatch(size), (n) => (n < size ? Effect.succeed(total + n) : loop(total + n)))
  return loop(0)
}
