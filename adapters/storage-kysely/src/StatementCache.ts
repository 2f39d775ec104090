/**
 * @module StatementCache
 *
 * Kysely's SQLite driver prepares every statement on every call; preparing costs several times
 * more than running a small indexed query. Wrapping the database handed to `SqliteDialect` with
 * {@link withStatementCache} makes `prepare` return a cached statement for SQL text it has seen
 * (Waybill's queries are few and parameterised, so the cache stays small).
 *
 * The wrapper is driver-agnostic (anything with `prepare` and `close`, such as better-sqlite3's
 * `Database`), so this adapter still does not depend on a SQLite driver. Do not use it with
 * Kysely's `stream()` on SQLite: an iterating statement cannot be reused until it finishes.
 */

/** The part of a SQLite driver Kysely's `SqliteDialect` uses. */
export interface SqliteLike {
  prepare(sql: string): unknown
  close(): unknown
}

const caches = new WeakMap<object, (sql: string) => unknown>()

/**
 * `database.prepare`, memoised by SQL text (least recently used entries beyond `max` are
 * dropped), with one cache per handle: Kysely's path ({@link withStatementCache}) and the
 * synchronous path (`SyncSqlite`) share it, so a statement is prepared once whichever runs it.
 * Both run a statement to completion before the next call, so sharing one is safe.
 */
export const cachedPrepare = <S>(database: { prepare(sql: string): S }, max = 256): ((sql: string) => S) => {
  const existing = caches.get(database)
  if (existing !== undefined) return existing as (sql: string) => S
  const cache = new Map<string, S>()
  const prepare = (sql: string): S => {
    const hit = cache.get(sql)
    if (hit !== undefined) {
      cache.delete(sql)
      cache.set(sql, hit)
      return hit
    }
    const statement = database.prepare(sql)
    cache.set(sql, statement)
    if (cache.size > max) cache.delete(cache.keys().next().value as string)
    return statement
  }
  caches.set(database, prepare)
  return prepare
}

/**
 * The same database, with `prepare` memoised by SQL text ({@link cachedPrepare}). Every other
 * member is the original's.
 */
export const withStatementCache = <D extends SqliteLike>(database: D, max = 256): D => {
  const prepare = cachedPrepare(database, max)
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property === "prepare") return prepare
      const value: unknown = Reflect.get(target, property, receiver)
      return typeof value === "function" ? (value as (...a: Array<unknown>) => unknown).bind(target) : value
    }
  })
}
