/**
 * @module DocumentStoreKysely
 *
 * `DocumentStore` over Kysely: order state (`waybill_orders`, created lazily), documents
 * (`waybill_documents`) and download grants (`waybill_ticket_grants`). Orders are read from
 * `waybill_shipments` joined with their state, so a lookup is one indexed query whatever the
 * field, and it brings each order's current documents along.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Insertable, type Selectable, type SqlBool, sql } from "kysely"
import { type Connection, mapResult, type Statement } from "./internal/connection.js"
import {
  type DocumentRecord,
  type DocumentStoreShape,
  type OrderRecord,
  Page,
  StorageError,
  VersionConflict
} from "./internal/core.js"
import { keyset } from "./internal/paging.js"
import type { DocumentsTable, TicketGrantsTable } from "./Tables.js"

/**
 * Which of an order's documents (`d`) are current: every signature, and the attachments of the
 * order's current version (`version`: the column holding it; an order never rebooked has none
 * and is at version 1).
 */
const isCurrent = (version: "o.current_version" | "s.current_version") =>
  sql<SqlBool>`(${sql.ref("d.kind")} = ${"signature"} or ${sql.ref("d.order_version")} = coalesce(${sql.ref(version)}, ${sql.lit(1)}))`

const num = (v: number | string | bigint): number => Number(v)

type LookupField = Parameters<DocumentStoreShape["lookupOrders"]>[0]["field"]
type OrderListing = Effect.Effect.Success<ReturnType<DocumentStoreShape["lookupOrders"]>>[number]
type ListedDocument = OrderListing["documents"][number]
type TicketGrant = Parameters<DocumentStoreShape["insertGrant"]>[0]

/** The `waybill_documents` row of a document. */
const documentRow = (d: DocumentRecord): Insertable<DocumentsTable> => ({
  id: d.id,
  track_no: d.trackNo,
  kind: d.kind,
  order_version: d.orderVersion,
  batch: d.batch,
  page: d.page,
  type: d.type,
  source_id: d.sourceId,
  content_type: d.contentType,
  rotation: d.rotation,
  blob_key: d.blobKey,
  size: d.size,
  version: d.version,
  hidden: d.hidden ? 1 : 0,
  removed: d.removed ? 1 : 0,
  captured_at: d.capturedAt,
  created_at: d.createdAt,
  updated_at: d.updatedAt
})

/** A document from its row; `kind`, `content_type` and `rotation` were written from the same unions. */
const toDocument = (r: Selectable<DocumentsTable>): DocumentRecord => ({
  id: r.id,
  trackNo: r.track_no,
  kind: r.kind as DocumentRecord["kind"],
  orderVersion: num(r.order_version),
  batch: num(r.batch),
  page: num(r.page),
  type: r.type,
  sourceId: r.source_id,
  contentType: r.content_type as DocumentRecord["contentType"],
  rotation: num(r.rotation) as DocumentRecord["rotation"],
  blobKey: r.blob_key,
  size: num(r.size),
  version: num(r.version),
  hidden: num(r.hidden) !== 0,
  removed: num(r.removed) !== 0,
  capturedAt: num(r.captured_at),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at)
})

interface OrderRow {
  readonly track_no: string
  readonly customer_no: string
  readonly livemode: number | string | bigint
  readonly billing_reference: string
  readonly contact: string
  readonly invoice_no: string | null
  readonly current_version: number | string | bigint | null
}

const toOrder = (r: OrderRow): OrderRecord => ({
  trackNo: r.track_no,
  customerNo: r.customer_no,
  livemode: num(r.livemode) !== 0,
  reference: r.billing_reference,
  requestedBy: r.contact,
  invoice: r.invoice_no ?? "",
  currentVersion: r.current_version === null ? 1 : num(r.current_version)
})

const slotCache = new Map<string, ReadonlyArray<string>>()
/** Parameter names `${prefix}0` .. `${prefix}${n - 1}`: one per value of an `in` list. */
const slotNames = (prefix: string, n: number): ReadonlyArray<string> => {
  const key = `${prefix}${n}`
  let names = slotCache.get(key)
  if (names === undefined) {
    names = Array.from({ length: n }, (_, i) => `${prefix}${i}`)
    if (slotCache.size < 1024) slotCache.set(key, names)
  }
  return names
}

/** Binds `values` to the names of {@link slotNames}. */
const bindSlots = (params: Record<string, unknown>, names: ReadonlyArray<string>, values: ReadonlyArray<unknown>) => {
  for (let i = 0; i < names.length; i++) params[names[i]!] = values[i]
}

/**
 * Statement templates per query shape (a lookup field and the lengths of its `in` lists), at
 * most this many per store: a documents lookup has at most the configured number of values, so
 * the shapes in use are few; past the bound a shape is built through Kysely on every call.
 */
const MAX_SHAPES = 256

/** A lookup's document columns, prefixed so they never clash with the order's. */
const documentColumns = [
  "d.id as d_id",
  "d.kind as d_kind",
  "d.order_version as d_order_version",
  "d.batch as d_batch",
  "d.page as d_page",
  "d.type as d_type",
  "d.source_id as d_source_id",
  "d.version as d_version",
  "d.hidden as d_hidden",
  "d.removed as d_removed",
  "d.captured_at as d_captured_at",
  "d.created_at as d_created_at"
] as const

type DbNumber = number | string | bigint

/** A row of the lookup: an order, and one of its current documents or nulls. */
interface LookupRow {
  readonly track_no: string
  readonly billing_reference: string
  readonly contact: string
  readonly invoice_no: string | null
  readonly current_version: DbNumber | null
  readonly d_id: string | null
  readonly d_kind: string
  readonly d_order_version: DbNumber
  readonly d_batch: DbNumber
  readonly d_page: DbNumber
  readonly d_type: string
  readonly d_source_id: string
  readonly d_version: DbNumber
  readonly d_hidden: DbNumber
  readonly d_removed: DbNumber
  readonly d_captured_at: DbNumber
  readonly d_created_at: DbNumber
}

/** The lookup's rows grouped by order, in the order each order first appears. */
const listingsOf = (rows: ReadonlyArray<LookupRow>): Array<OrderListing> => {
  const byOrder = new Map<
    string,
    { readonly order: OrderListing["order"]; readonly documents: Array<ListedDocument> }
  >()
  for (const r of rows) {
    let listing = byOrder.get(r.track_no)
    if (listing === undefined) {
      listing = {
        order: {
          trackNo: r.track_no,
          reference: r.billing_reference,
          requestedBy: r.contact,
          invoice: r.invoice_no ?? "",
          currentVersion: r.current_version === null ? 1 : num(r.current_version)
        },
        documents: []
      }
      byOrder.set(r.track_no, listing)
    }
    if (r.d_id !== null)
      listing.documents.push({
        id: r.d_id,
        kind: r.d_kind as ListedDocument["kind"],
        orderVersion: num(r.d_order_version),
        batch: num(r.d_batch),
        page: num(r.d_page),
        type: r.d_type,
        sourceId: r.d_source_id,
        version: num(r.d_version),
        hidden: num(r.d_hidden) !== 0,
        removed: num(r.d_removed) !== 0,
        capturedAt: num(r.d_captured_at),
        createdAt: num(r.d_created_at)
      })
  }
  return [...byOrder.values()]
}

/** The `documents` column of a grant: each document's id and version in turn, as JSON. */
const grantDocumentsText = (documents: TicketGrant["documents"]): string => {
  const flat = new Array<string | number>(documents.length * 2)
  for (let i = 0; i < documents.length; i++) {
    flat[2 * i] = documents[i]!.id
    flat[2 * i + 1] = documents[i]!.version
  }
  return JSON.stringify(flat)
}

/** The documents of a grant's `documents` column, or undefined when the text is not what {@link grantDocumentsText} writes. */
const grantDocumentsOf = (text: string): TicketGrant["documents"] | undefined => {
  let flat: unknown
  try {
    flat = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!Array.isArray(flat) || flat.length % 2 !== 0) return undefined
  const documents = new Array<{ readonly id: string; readonly version: number }>(flat.length / 2)
  for (let i = 0; i < documents.length; i++) {
    const id: unknown = flat[2 * i]
    const version: unknown = flat[2 * i + 1]
    if (typeof id !== "string" || typeof version !== "number" || !Number.isSafeInteger(version)) return undefined
    documents[i] = { id, version }
  }
  return documents
}

/** The first 8 hex digits of the ids of grants that expire within the second of `at` (epoch ms). */
const expirySecondHex = (at: number): string =>
  Math.floor(at / 1000)
    .toString(16)
    .padStart(8, "0")

/** `DocumentStore` over Kysely. */
export const makeDocumentStore = (conn: Connection): DocumentStoreShape => {
  const { execute, prepare, rows, write } = conn

  const orders = (c: Connection["db"]) =>
    c
      .selectFrom("waybill_shipments as s")
      .leftJoin("waybill_orders as o", "o.track_no", "s.track_no")
      .select([
        "s.track_no",
        "s.customer_no",
        "s.livemode",
        "s.billing_reference",
        "s.contact",
        "o.invoice_no",
        "o.current_version"
      ])

  type Params = Readonly<Record<string, unknown>>

  /**
   * The lookup's orders with their current documents: one indexed query whatever the field and
   * however many values. The values and the readable accounts are `in` lists; each list length
   * gets its own compiled statement, so a lookup of 100 values is neither 100 queries nor a query
   * rebuilt by Kysely on every call. Only the columns the answer, the visibility rule and the
   * tickets read: each column of a 100-row answer costs about as much as a tenth of the joins.
   *
   * `bounded`: the orders are limited to `limit` (written into the text: a bound LIMIT in a
   * subquery makes SQLite prepare the statement again on every run) in a subquery before their
   * documents are joined. A lookup by tracking numbers finds at most one order per value, so
   * with fewer values than the limit it needs no bound and joins directly.
   */
  const lookupSql = (field: LookupField, customerCount: number, valueCount: number, bounded: number | undefined) => {
    const customerSlots = slotNames("c", customerCount)
    const valueSlots = slotNames("v", valueCount)
    return prepare((c, p: Params) => {
      const customers = customerSlots.map((n) => p[n] as string)
      const values = valueSlots.map((n) => p[n] as string)
      // Exact on the reference, as the interface has it; `lower` lets the account's
      // (customer_no, lower(billing_reference)) index (0016) find the candidates.
      const byReference = (column: "s.billing_reference" | "b.billing_reference") =>
        sql<SqlBool>`(lower(${sql.ref(column)}) in (${sql.join(values.map((v) => sql`lower(${v})`))}) and ${sql.ref(column)} in (${sql.join(values)}))`
      const matching = c
        .selectFrom("waybill_shipments as s")
        .leftJoin("waybill_orders as o", "o.track_no", "s.track_no")
        .where(
          // A reference lookup is the account's index's job. Every other field finds its rows
          // by a key of its own (a tracking number, an invoice number), and the account is only
          // a filter: SQLite without statistics (no ANALYZE) would otherwise walk the account's
          // whole index, 20 to 30 ms instead of 0.3 to 0.5 ms for 100 values in an account of
          // 50,000 shipments. `|| ''` keeps the value and the meaning on both engines and takes
          // the term off that index.
          field === "customer_reference" ? sql.ref("s.customer_no") : sql<string>`${sql.ref("s.customer_no")} || ''`,
          "in",
          customers
        )
        .where((eb) =>
          field === "control_no"
            ? eb("s.track_no", "in", values)
            : field === "customer_reference"
              ? byReference("s.billing_reference")
              : field === "invoice_no"
                ? eb("o.invoice_no", "in", values)
                : // Any of the three: the tracking numbers the three keys find, each by its own
                  // index (an OR of the three would walk the account).
                  eb(
                    "s.track_no",
                    "in",
                    c
                      .selectFrom("waybill_shipments as a")
                      .select("a.track_no")
                      .where("a.track_no", "in", values)
                      .union(
                        c
                          .selectFrom("waybill_shipments as b")
                          .select("b.track_no")
                          .where("b.customer_no", "in", customers)
                          .where(byReference("b.billing_reference"))
                      )
                      .union(
                        c.selectFrom("waybill_orders as i").select("i.track_no").where("i.invoice_no", "in", values)
                      )
                  )
        )
      const orderColumns = [
        "s.track_no",
        "s.billing_reference",
        "s.contact",
        "o.invoice_no",
        "o.current_version"
      ] as const
      if (bounded === undefined)
        return matching
          .leftJoin("waybill_documents as d", (join) =>
            join.onRef("d.track_no", "=", "s.track_no").on(isCurrent("o.current_version"))
          )
          .select(orderColumns)
          .select(documentColumns)
      return c
        .selectFrom(matching.select(orderColumns).orderBy("s.track_no").limit(sql.lit(bounded)).as("s"))
        .leftJoin("waybill_documents as d", (join) =>
          join.onRef("d.track_no", "=", "s.track_no").on(isCurrent("s.current_version"))
        )
        .select(["s.track_no", "s.billing_reference", "s.contact", "s.invoice_no", "s.current_version"])
        .select(documentColumns)
    })
  }

  /** The current documents of some orders (every signature, and the attachments of the current version). */
  const listCurrentSql = (count: number) => {
    const slots = slotNames("t", count)
    return prepare((c, p: Params) =>
      c
        .selectFrom("waybill_documents as d")
        .leftJoin("waybill_orders as o", "o.track_no", "d.track_no")
        .selectAll("d")
        .where(
          "d.track_no",
          "in",
          slots.map((n) => p[n] as string)
        )
        .where(isCurrent("o.current_version"))
    )
  }

  // By order, batch and page, sorted here rather than by the database: SQLite sorts through a
  // temporary b-tree of whole rows, which cost a third of this query for a 100-order lookup.
  const byOrderBatchPage = (a: DocumentRecord, b: DocumentRecord) =>
    (a.trackNo < b.trackNo ? -1 : a.trackNo > b.trackNo ? 1 : 0) ||
    a.batch - b.batch ||
    a.page - b.page ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

  const shapes = new Map<string, (params: Params) => Statement<unknown>>()
  /** The statement of a shape, or undefined once {@link MAX_SHAPES} others are known. */
  const shaped = <R>(key: string, make: () => (params: Params) => Statement<R>) => {
    let statement = shapes.get(key)
    if (statement === undefined) {
      if (shapes.size >= MAX_SHAPES) return undefined
      statement = make()
      shapes.set(key, statement)
    }
    return statement as (params: Params) => Statement<R>
  }

  const findOrderSql = prepare((c, p: { readonly trackNo: string }) => orders(c).where("s.track_no", "=", p.trackNo))

  // The order of document `id` (its columns prefixed `order_`) joined with each of the order's
  // current documents (`isCurrent`); one row with null document columns when it has none.
  const findDownloadSql = prepare((c, p: { readonly id: string }) =>
    c
      .selectFrom("waybill_documents as x")
      .innerJoin("waybill_shipments as s", "s.track_no", "x.track_no")
      .leftJoin("waybill_orders as o", "o.track_no", "s.track_no")
      .leftJoin("waybill_documents as d", (join) =>
        join.onRef("d.track_no", "=", "s.track_no").on(isCurrent("o.current_version"))
      )
      .select([
        "s.track_no as order_track_no",
        "s.customer_no as order_customer_no",
        "s.livemode as order_livemode",
        "s.billing_reference as order_billing_reference",
        "s.contact as order_contact",
        "o.invoice_no as order_invoice_no",
        "o.current_version as order_current_version"
      ])
      .selectAll("d")
      .where("x.id", "=", p.id)
  )
  const findDocumentSql = prepare((c, p: { readonly id: string }) =>
    c.selectFrom("waybill_documents").selectAll().where("id", "=", p.id)
  )

  const insertGrantSql = prepare(
    (
      c,
      p: {
        readonly id: string
        readonly customerNo: string
        readonly keyId: string
        readonly keyMode: string
        readonly keyGeneration: number
        readonly expiresAt: number
        readonly documents: string
      }
    ) =>
      c.insertInto("waybill_ticket_grants").values({
        id: p.id,
        customer_no: p.customerNo,
        key_id: p.keyId,
        key_mode: p.keyMode,
        key_generation: p.keyGeneration,
        expires_at: p.expiresAt,
        documents: p.documents
      })
  )
  const findGrantSql = prepare((c, p: { readonly id: string }) =>
    c
      .selectFrom("waybill_ticket_grants")
      .select(["customer_no", "key_id", "key_mode", "key_generation", "expires_at", "documents"])
      .where("id", "=", p.id)
  )

  const store: DocumentStoreShape = {
    lookupOrders: ({ customers, field, limit, values }) => {
      if (customers.length === 0 || values.length === 0) return Effect.succeed([])
      const bounded = field === "control_no" && values.length < limit ? undefined : limit
      const make = () => lookupSql(field, customers.length, values.length, bounded)
      const statement = shaped(`lookup|${field}|${customers.length}|${values.length}|${bounded}`, make) ?? make()
      const params: Record<string, unknown> = {}
      bindSlots(params, slotNames("c", customers.length), customers)
      bindSlots(params, slotNames("v", values.length), values)
      return mapResult(execute("orders.lookup", statement(params)), (r) => listingsOf(r.rows as Array<LookupRow>))
    },

    findOrder: (trackNo) =>
      execute("orders.find-one", findOrderSql({ trackNo })).pipe(
        Effect.map((r) => Option.map(Option.fromNullable(r.rows[0]), toOrder))
      ),

    listCurrent: (trackNos) => {
      if (trackNos.length === 0) return Effect.succeed([])
      const make = () => listCurrentSql(trackNos.length)
      const statement = shaped(`current|${trackNos.length}`, make) ?? make()
      const params: Record<string, unknown> = {}
      bindSlots(params, slotNames("t", trackNos.length), trackNos)
      return execute("documents.list-current", statement(params)).pipe(
        Effect.map((r) => (r.rows as Array<Selectable<DocumentsTable>>).map(toDocument).sort(byOrderBatchPage))
      )
    },

    findDownload: (id) =>
      execute("documents.find-download", findDownloadSql({ id })).pipe(
        Effect.map((r) => {
          const rows = r.rows as Array<Record<string, unknown>>
          const first = rows[0]
          if (first === undefined) return Option.none()
          const order = toOrder({
            track_no: first["order_track_no"] as string,
            customer_no: first["order_customer_no"] as string,
            livemode: first["order_livemode"] as OrderRow["livemode"],
            billing_reference: first["order_billing_reference"] as string,
            contact: first["order_contact"] as string,
            invoice_no: first["order_invoice_no"] as string | null,
            current_version: first["order_current_version"] as OrderRow["current_version"]
          })
          const current = rows
            .filter((row) => row["id"] !== null)
            .map((row) => toDocument(row as unknown as Selectable<DocumentsTable>))
            .sort(byOrderBatchPage)
          return Option.some({ order, current })
        })
      ),

    listAll: (trackNo) =>
      rows("documents.list-all", (c) =>
        c
          .selectFrom("waybill_documents")
          .selectAll()
          .where("track_no", "=", trackNo)
          .orderBy("kind")
          .orderBy("order_version")
          .orderBy("batch")
          .orderBy("page")
          .orderBy("created_at")
      ).pipe(Effect.map((rows) => rows.map(toDocument))),

    // An order's documents are few (its pages, versions and signatures): no index beyond the
    // track_no one; the page's sort is over one order's rows.
    listPage: (trackNo, page) =>
      rows("documents.list-page", (c) =>
        keyset(
          c.selectFrom("waybill_documents").selectAll().where("track_no", "=", trackNo),
          ["created_at", "id"],
          page
        )
      ).pipe(Effect.map((rows) => Page.sliceOf(rows.map(toDocument), page.limit))),

    findDocument: (id) =>
      execute("documents.find", findDocumentSql({ id })).pipe(
        Effect.map((r) => Option.map(Option.fromNullable(r.rows[0]), toDocument))
      ),

    insertDocument: (document) =>
      write("documents.insert", (c) => c.insertInto("waybill_documents").values(documentRow(document))).pipe(
        Effect.asVoid
      ),

    updateDocument: (document, expectedVersion) => {
      const { id, ...fields } = documentRow(document)
      return write("documents.update", (c) =>
        c.updateTable("waybill_documents").set(fields).where("id", "=", id).where("version", "=", expectedVersion)
      ).pipe(
        Effect.flatMap((r) => (r === 1 ? Effect.void : Effect.fail(new VersionConflict({ trackNo: document.trackNo }))))
      )
    },

    // One statement, so the compare and the set are one atomic step on every database (a
    // select-then-write transaction is only serialised on SQLite; under PostgreSQL's READ
    // COMMITTED two callers would both read the old version and both "win"). From the implicit
    // version 1 the row may not exist yet: an upsert whose update only applies while the stored
    // version is still 1; a later version needs the row, so a plain conditional update.
    setOrderVersion: (trackNo, expectedVersion, version) =>
      write("orders.set-version", (c) =>
        expectedVersion === 1
          ? c
              .insertInto("waybill_orders")
              .values({ track_no: trackNo, current_version: version, invoice_no: "" })
              .onConflict((oc) =>
                oc
                  .column("track_no")
                  .doUpdateSet({ current_version: version })
                  .where("waybill_orders.current_version", "=", expectedVersion)
              )
          : c
              .updateTable("waybill_orders")
              .set({ current_version: version })
              .where("track_no", "=", trackNo)
              .where("current_version", "=", expectedVersion)
      ).pipe(
        Effect.flatMap((changed) => (changed === 1 ? Effect.void : Effect.fail(new VersionConflict({ trackNo }))))
      ),

    setInvoice: (trackNo, invoice) =>
      write("orders.set-invoice", (c) =>
        c
          .insertInto("waybill_orders")
          .values({ track_no: trackNo, current_version: 1, invoice_no: invoice })
          .onConflict((oc) => oc.column("track_no").doUpdateSet({ invoice_no: invoice }))
      ).pipe(Effect.asVoid),

    insertGrant: (grant) =>
      mapResult(
        execute(
          "grants.insert",
          insertGrantSql({
            id: grant.id,
            customerNo: grant.customerNo,
            keyId: grant.keyId,
            keyMode: grant.keyMode,
            keyGeneration: grant.keyGeneration,
            expiresAt: grant.expiresAt,
            documents: grantDocumentsText(grant.documents)
          })
        ),
        () => undefined
      ),

    findGrant: (id) =>
      Effect.flatMap(execute("grants.find", findGrantSql({ id })), (r) => {
        const row = r.rows[0] as Selectable<TicketGrantsTable> | undefined
        if (row === undefined) return Effect.succeed(Option.none())
        const documents = grantDocumentsOf(row.documents)
        if (documents === undefined || (row.key_mode !== "live" && row.key_mode !== "test"))
          return Effect.fail(new StorageError({ operation: "grants.find", cause: `grant ${id} is malformed` }))
        return Effect.succeed(
          Option.some<TicketGrant>({
            id,
            customerNo: row.customer_no,
            keyId: row.key_id,
            keyMode: row.key_mode,
            keyGeneration: num(row.key_generation),
            expiresAt: num(row.expires_at),
            documents
          })
        )
      }),

    // By a range of the primary key (ids start with the expiry second), then exactly by the
    // expiry: a grant is never deleted before it has expired, whatever the ids' collation.
    deleteExpiredGrants: (before, limit) =>
      write("grants.delete-expired", (c) =>
        c
          .deleteFrom("waybill_ticket_grants")
          .where("id", "in", (eb) =>
            eb
              .selectFrom("waybill_ticket_grants as g")
              .select("g.id")
              .where("g.id", "<", expirySecondHex(before))
              .where("g.expires_at", "<=", before)
              .limit(limit)
          )
      )
  }

  return store
}
