/**
 * The SQLite settings both bench targets run with. They repeat what `openDatabase` in
 * src/host.ts sets, so the floor pays for the same durability (WAL, `synchronous = NORMAL`) as
 * Waybill; each child reports its effective values and the orchestrator refuses to compare two
 * targets whose settings differ.
 */

/** Applied in this order by the floor; src/host.ts applies the same list to Waybill's database. */
export const PRAGMAS: ReadonlyArray<string> = [
  "journal_mode = WAL",
  "synchronous = NORMAL",
  "busy_timeout = 5000",
  "foreign_keys = ON"
]

/** The pragma names of {@link PRAGMAS}, read back after opening to prove they took effect. */
export const PRAGMA_NAMES: ReadonlyArray<string> = PRAGMAS.map((p) => p.split("=")[0]!.trim())

/** Effective pragma values, by name, as strings (`{ journal_mode: "wal", synchronous: "1", ... }`). */
export type PragmaValues = Readonly<Record<string, string>>

/** The single value of a `PRAGMA name` result (one row, one column), as a string. */
export const pragmaValue = (rows: ReadonlyArray<unknown>): string => {
  const row = rows[0]
  if (typeof row !== "object" || row === null) return "?"
  const value = Object.values(row)[0]
  return String(value)
}
