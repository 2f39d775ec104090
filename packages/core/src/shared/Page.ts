/**
 * @module Page
 *
 * Cursor pagination of the lists that can grow (webhook endpoints, deliveries, the delivery
 * log, IP blocks, an order's documents). Every list is ordered newest first by a key that ends
 * in a unique id, e.g. `(created_at, id)`, and read as a keyset: the rows whose key is below
 * the cursor's, `limit + 1` of them, the extra row only telling whether there is more.
 *
 * The cursor (`starting_after`) is an opaque token holding the key of the last item of the
 * previous page, not an id to look up:
 * - it stays valid when that item is deleted, re-keyed or expires between two pages (IP blocks
 *   expire all the time; endpoints can be deleted);
 * - the delivery log has no ids of its own, its key is (time, event, attempt);
 * - a cursor is only a position within the caller's filter: nothing is looked up by it, so a
 *   cursor taken from another account's list selects the caller's own items past that
 *   position and reveals nothing else.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { decodeBase64Url, encodeBase64Url } from "./internal/base64.js"
import { utf8 } from "./internal/bytes.js"

/** A page of 20 items unless the caller asks for another size. */
export const defaultLimit = 20

/** The most items one page holds. */
export const maxLimit = 100

/** Longest cursor accepted; the keys it carries are a time, an id and a small number. */
const maxCursorLength = 512

/** What a caller asks for: a page size, and the cursor of the previous page's last item. */
export interface Query {
  readonly limit: number
  readonly startingAfter?: string | undefined
}

/** What a store is asked for: a page size, and the key the page starts below (newest first). */
export interface Request<K> {
  readonly limit: number
  readonly startingAfter?: K | undefined
}

/** What a store answers: at most `limit` items, and whether more follow. */
export interface Slice<A> {
  readonly items: ReadonlyArray<A>
  readonly hasMore: boolean
}

/** A page for a caller: a slice, and the cursor of its last item when more follow. */
export interface Page<A> extends Slice<A> {
  readonly nextCursor: string | null
}

/** The paging parameters are unusable; `message` is the client-facing sentence. */
export class InvalidPage extends Schema.TaggedError<InvalidPage>()("InvalidPage", {
  message: Schema.String
}) {}

/** The key of most lists: a time (epoch ms) and an id that breaks ties. */
export type TimeKey = readonly [at: number, id: string]

/** How one list is keyed: the key of an item, and the schema of the key inside a cursor. */
export interface Keying<K, A> {
  /** Its encoded side is a JSON array whose shape differs per list (`Schema` is invariant in it). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly schema: Schema.Schema<K, any>
  readonly of: (item: A) => K
}

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/** The schema of a {@link TimeKey} inside a cursor. */
export const TimeKeySchema: Schema.Schema<TimeKey, readonly [number, string]> = Schema.Tuple(Schema.Int, Id)

/** Keys items by `(createdAt, id)`. */
export const byCreation = <A extends { readonly createdAt: number; readonly id: string }>(): Keying<TimeKey, A> => ({
  schema: TimeKeySchema,
  of: (a) => [a.createdAt, a.id]
})

const limitMessage = `limit must be an integer from 1 to ${maxLimit}.`
const cursorMessage = "starting_after is not a cursor of this list (use next_starting_after of the previous page)."

/**
 * Reads `limit` and `starting_after` as they come from a query string or a command line
 * (absent: `null` or `undefined`); an empty or missing `limit` is {@link defaultLimit}.
 */
export const parseQuery = (
  limit: string | null | undefined,
  startingAfter: string | null | undefined
): Either.Either<Query, InvalidPage> => {
  let size = defaultLimit
  if (limit !== null && limit !== undefined && limit !== "") {
    if (!/^\d{1,3}$/.test(limit)) return Either.left(new InvalidPage({ message: limitMessage }))
    size = Number(limit)
    if (size < 1 || size > maxLimit) return Either.left(new InvalidPage({ message: limitMessage }))
  }
  if (startingAfter === null || startingAfter === undefined || startingAfter === "")
    return Either.right({ limit: size })
  if (startingAfter.length > maxCursorLength) return Either.left(new InvalidPage({ message: cursorMessage }))
  return Either.right({ limit: size, startingAfter })
}

/** The cursor that starts the page after `key`. */
export const encodeCursor = <K>(keying: Pick<Keying<K, unknown>, "schema">, key: K): string =>
  encodeBase64Url(utf8(JSON.stringify(Schema.encodeSync(keying.schema)(key))))

/** The key inside a cursor made by {@link encodeCursor} for the same list. */
export const decodeCursor = <K>(
  keying: Pick<Keying<K, unknown>, "schema">,
  cursor: string
): Either.Either<K, InvalidPage> => {
  const invalid = () => new InvalidPage({ message: cursorMessage })
  if (cursor.length > maxCursorLength) return Either.left(invalid())
  const bytes = decodeBase64Url(cursor)
  if (bytes === undefined) return Either.left(invalid())
  let raw: unknown
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return Either.left(invalid())
  }
  return Either.mapLeft(Schema.decodeUnknownEither(keying.schema)(raw), invalid)
}

/**
 * Reads one page: decodes the cursor, asks `fetch` (a store's list method) for the slice, and
 * makes the cursor of the next page from the last item when more follow.
 */
export const read: <K, A, E, R>(
  query: Query,
  keying: Keying<K, A>,
  fetch: (request: Request<K>) => Effect.Effect<Slice<A>, E, R>
) => Effect.Effect<Page<A>, E | InvalidPage, R> = Effect.fnUntraced(function* <K, A, E, R>(
  query: Query,
  keying: Keying<K, A>,
  fetch: (request: Request<K>) => Effect.Effect<Slice<A>, E, R>
) {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > maxLimit) {
    return yield* new InvalidPage({ message: limitMessage })
  }
  const startingAfter = query.startingAfter === undefined ? undefined : yield* decodeCursor(keying, query.startingAfter)
  const slice = yield* fetch({ limit: query.limit, startingAfter })
  const last = slice.items[slice.items.length - 1]
  return {
    items: slice.items,
    hasMore: slice.hasMore,
    nextCursor: slice.hasMore && last !== undefined ? encodeCursor(keying, keying.of(last)) : null
  }
})

/** The first `limit` of `rows` (fetched as `limit + 1`), and whether there were more. */
export const sliceOf = <A>(rows: ReadonlyArray<A>, limit: number): Slice<A> => ({
  items: rows.length > limit ? rows.slice(0, limit) : rows,
  hasMore: rows.length > limit
})
