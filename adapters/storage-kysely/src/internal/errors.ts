/**
 * Driver error classification. Only unique violations mean something to the domain (a taken
 * tracking number, customer number or key hash: callers retry with a fresh one); every other
 * driver error is an infrastructure failure.
 */

const UNIQUE_CODES: ReadonlySet<unknown> = new Set([
  // better-sqlite3 (extended result codes)
  "SQLITE_CONSTRAINT_UNIQUE",
  "SQLITE_CONSTRAINT_PRIMARYKEY",
  // PostgreSQL unique_violation (pg, postgres.js)
  "23505"
])

/** True when a driver rejected a write because a unique or primary key was already taken. */
export const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" && error !== null && UNIQUE_CODES.has((error as { readonly code?: unknown }).code)
