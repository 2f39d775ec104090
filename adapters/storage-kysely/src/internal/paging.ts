/**
 * Keyset paging for the stores' list methods (`Page` in core): the rows whose key is below the
 * cursor's, newest first, `limit + 1` of them so the extra row tells whether more follow. A
 * row-value comparison, `(created_at, id) < (?, ?)`, is one range of an index on those columns
 * on both SQLite and PostgreSQL, so a page costs the same at the millionth row as at the first
 * (OFFSET would read and drop every row before the page).
 */
import { type SelectQueryBuilder, sql, type SqlBool } from "kysely"
import type { Page } from "./core.js"

/**
 * Narrows `query` to one page keyed by `columns` (the key's parts in order, the last unique),
 * newest first. `page.startingAfter` holds the values of those columns for the previous page's
 * last row.
 */
export const keyset = <DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: ReadonlyArray<string>,
  page: Page.Request<ReadonlyArray<string | number>>
): SelectQueryBuilder<DB, TB, O> => {
  const refs = columns.map((c) => sql.ref(c))
  let q = query
  if (page.startingAfter !== undefined) {
    const values = page.startingAfter.map((v) => sql.val(v))
    q = q.where(sql<SqlBool>`(${sql.join(refs)}) < (${sql.join(values)})`)
  }
  for (const ref of refs) q = q.orderBy(sql`${ref} desc`)
  return q.limit(page.limit + 1)
}
