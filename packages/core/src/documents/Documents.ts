/**
 * @module Documents
 *
 * Order documents (interface 2.4, 4.2, 4.3, 7.2, 7.3, 8): the metadata lookup that issues
 * download tickets, the download that re-checks everything a ticket was issued on, and the
 * operator programs that add, hide, unhide, remove and replace documents, add signatures, start
 * a new order version and set the invoice number. One program each serves the library, the
 * `/ops/v1` API and the CLI.
 *
 * Lookups see only orders of accounts the credential may read (its own and linked accounts);
 * an unknown order and another customer's give the same `NoRecordsFound`, so tracking numbers,
 * references and invoice numbers cannot be probed.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApiKeyRecord, KeyMode, Principal, ClientIp } from "../access/index.js"
import { AccountStore, Credentials, IpBlocklist as IpBlocks, Abuse, Admission } from "../access/index.js"
import { BlobStore, type OpenBlob } from "./BlobStore.js"
import {
  deleteInBatches,
  WaybillConfig,
  type DocumentLimits,
  Entropy,
  Page,
  Tracing,
  Transactor,
  Ulid
} from "../shared/index.js"
import {
  type ContentType,
  type DocumentRecord,
  isImage,
  type ListedDocument,
  type ListedOrder,
  type OrderListing,
  type OrderRecord,
  type Rotation,
  ROTATIONS,
  sniffContentType,
  visible,
  DocumentStore,
  type LookupField,
  EventOutbox,
  ShipmentNotFound
} from "../shipments/index.js"
import { ImageTransform } from "./ImageTransform.js"
import type { KeyRing } from "../shared/index.js"
import * as Ticket from "./Ticket.js"

// ---------------------------------------------------------------------------------------------
// Errors

/** The lookup is missing, malformed or over a limit (HTTP 400 with this message). */
export class InvalidLookup extends Schema.TaggedError<InvalidLookup>()("InvalidLookup", {
  message: Schema.String
}) {}

/** No authorized order matched: the same answer for unknown and for other customers' orders. */
export class NoRecordsFound extends Schema.TaggedError<NoRecordsFound>()("NoRecordsFound", {}) {}

/** The ticket is malformed, forged, expired, or its key is no longer the one it was issued to (403). */
export class TicketRejected extends Schema.TaggedError<TicketRejected>()("TicketRejected", {
  reason: Schema.Literal("invalid", "expired", "key")
}) {}

/** The document is gone for this credential: hidden, removed, replaced, not current, or not owned (404). */
export class DocumentUnavailable extends Schema.TaggedError<DocumentUnavailable>()("DocumentUnavailable", {
  reason: Schema.Literal("missing", "owner", "not-current", "file-missing")
}) {}

/** The host provided no `BlobStore` (or no `ImageTransform` for a rotated image). */
export class DocumentsNotConfigured extends Schema.TaggedError<DocumentsNotConfigured>()("DocumentsNotConfigured", {
  message: Schema.String
}) {}

/** No document has this id (operators). */
export class DocumentNotFound extends Schema.TaggedError<DocumentNotFound>()("DocumentNotFound", {
  id: Schema.String
}) {}

/** An operator's document input is unusable (format, type, rotation, batch, size). */
export class InvalidDocument extends Schema.TaggedError<InvalidDocument>()("InvalidDocument", {
  message: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Lookup parameters (pure)

/** Every value of each lookup parameter as received (form and query together). */
export interface LookupParams {
  readonly control_no: ReadonlyArray<string>
  readonly search_field: ReadonlyArray<string>
  readonly search_value: ReadonlyArray<string>
  readonly id: ReadonlyArray<string>
}

/** A lookup ready for the store: which field, which exact values (in request order, distinct). */
export interface Lookup {
  readonly field: LookupField
  readonly values: ReadonlyArray<string>
}

const SEARCH_FIELDS = ["control_no", "customer_reference", "invoice_no"] as const

/**
 * Applies the interface's lookup rules: precedence search_value, then id, then control_no; a
 * comma always separates values (never part of one); limits on values, characters and
 * reference length. Empty parameters count as absent; a parameter given twice is refused.
 */
export const parseLookup = (params: LookupParams, limits: DocumentLimits): Either.Either<Lookup, InvalidLookup> => {
  const bad = (message: string) => Either.left(new InvalidLookup({ message }))
  const one: Partial<Record<keyof LookupParams, string>> = {}
  for (const name of ["search_value", "id", "control_no", "search_field"] as const) {
    const present = params[name].filter((v) => v !== "")
    if (present.length > 1) return bad(`The parameter ${name} was given more than once.`)
    if (present.length === 1) one[name] = present[0]!
  }
  let field: LookupField | undefined
  if (one.search_field !== undefined) {
    const f = SEARCH_FIELDS.find((s) => s === one.search_field)
    if (f === undefined) return bad(`search_field must be one of ${SEARCH_FIELDS.join(", ")}.`)
    field = f
  }
  let raw: string
  if (one.search_value !== undefined) {
    if (field === undefined) return bad(`search_field is required with search_value (${SEARCH_FIELDS.join(", ")}).`)
    raw = one.search_value
  } else if (one.id !== undefined) {
    raw = one.id
    field ??= "any"
  } else if (one.control_no !== undefined) {
    raw = one.control_no
    field = "control_no"
  } else {
    return bad("A lookup is required: control_no, search_field with search_value, or id.")
  }
  if (raw.length > limits.maxSearchChars) return bad(`The lookup is longer than ${limits.maxSearchChars} characters.`)
  const values = raw
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
  if (values.length === 0) return bad("A lookup is required: control_no, search_field with search_value, or id.")
  if (values.length > limits.maxLookupValues)
    return bad(`At most ${limits.maxLookupValues} values may be looked up at once.`)
  if (field !== "control_no" && values.some((v) => v.length > limits.maxReferenceLength))
    return bad(`Customer references and invoice numbers are at most ${limits.maxReferenceLength} characters.`)
  return Either.right({ field, values: [...new Set(values)] })
}

/**
 * Where in the request an order matched first (orders are answered in request order): a
 * function of the order, built once per lookup so sorting 100 orders does not rescan the 100
 * values at every comparison.
 */
const matchIndexOf = (lookup: Lookup): ((order: ListedOrder) => number) => {
  const first = new Map<string, number>()
  lookup.values.forEach((v, i) => {
    if (!first.has(v)) first.set(v, i)
  })
  const at = (value: string): number => first.get(value) ?? lookup.values.length
  return (order) =>
    lookup.field === "control_no"
      ? at(order.trackNo)
      : lookup.field === "customer_reference"
        ? at(order.reference)
        : lookup.field === "invoice_no"
          ? at(order.invoice)
          : Math.min(at(order.trackNo), at(order.reference), at(order.invoice))
}

/** The orders a lookup found, in request order (ties by tracking number). */
export const inRequestOrder = (lookup: Lookup, found: ReadonlyArray<OrderListing>): Array<OrderListing> => {
  const matchIndex = matchIndexOf(lookup)
  const ranks = found.map((listing) => matchIndex(listing.order))
  return found
    .map((_, i) => i)
    .sort((a, b) => ranks[a]! - ranks[b]! || (found[a]!.order.trackNo < found[b]!.order.trackNo ? -1 : 1))
    .map((i) => found[i]!)
}

// ---------------------------------------------------------------------------------------------
// Metadata lookup

export interface LookupInput {
  /** The resolved client address (abuse counting). */
  readonly client: Option.Option<ClientIp.Address>
  /** The authenticated and admitted caller (see `Admission.admit`). */
  readonly principal: Principal
  readonly params: LookupParams
}

/** One document with the ticket that downloads it. */
export interface IssuedDocument {
  readonly document: ListedDocument
  readonly ticket: string
}

export interface OrderDocuments {
  readonly order: ListedOrder
  readonly documents: ReadonlyArray<IssuedDocument>
}

/**
 * Tickets for `documents` (in that order), bound to `key` and its account and dying
 * `documents.ticketTtlMinutes` from now: their grant is stored first, so each ticket works from
 * the moment it is handed out, on any host of the database. No documents, no grant.
 */
const issueTickets = Effect.fnUntraced(function* (
  customerNo: string,
  key: Pick<ApiKeyRecord, "id" | "mode" | "generation">,
  documents: ReadonlyArray<{ readonly id: string; readonly version: number }>
) {
  const limits = (yield* WaybillConfig).documents
  const expiresAt = (yield* Clock.currentTimeMillis) + limits.ticketTtlMinutes * 60_000
  if (documents.length === 0) return { expiresAt, tickets: [] }
  const { grants, tickets } = yield* Ticket.issue(
    { customerNo, keyId: key.id, keyMode: key.mode, keyGeneration: key.generation, expiresAt },
    documents
  )
  const store = yield* DocumentStore
  for (const grant of grants) yield* store.insertGrant(grant)
  return { expiresAt, tickets }
})

/**
 * The documents metadata lookup (interface 4.2): lookup rules, the authorized orders with their
 * current documents in one read (at most the configured number, else `InvalidLookup`), the
 * visible documents, and a ticket for each. Production and test keys both read their accounts'
 * real documents.
 */
export const lookup = (input: LookupInput) => Tracing.traced("Documents.lookup")(lookupProgram(input))

const lookupProgram = Effect.fnUntraced(function* (input: LookupInput) {
  const limits = (yield* WaybillConfig).documents
  const parsed = parseLookup(input.params, limits)
  if (Either.isLeft(parsed)) return yield* parsed.left
  const query = parsed.right
  const principal = input.principal
  const customers = yield* Credentials.readableAccounts(principal)
  const found = yield* (yield* DocumentStore).lookupOrders({
    field: query.field,
    values: query.values,
    customers,
    limit: limits.maxMatchingOrders + 1
  })
  if (found.length === 0) return yield* Effect.zipRight(Abuse.recordMiss(input.client), new NoRecordsFound())
  if (found.length > limits.maxMatchingOrders)
    return yield* new InvalidLookup({
      message: `More than ${limits.maxMatchingOrders} orders match; narrow the lookup.`
    })
  // What customers see of each order, and a ticket for each of those documents, in answer order.
  const listed = inRequestOrder(query, found)
  const shown = listed.map((listing) => visible(listing.order, listing.documents))
  const { tickets } = yield* issueTickets(principal.account.customerNo, principal.key, shown.flat())
  let next = 0
  const orders = listed.map(
    (listing, i): OrderDocuments => ({
      order: listing.order,
      documents: shown[i]!.map((document) => ({ document, ticket: tickets[next++]! }))
    })
  )
  return { principal, orders }
})

/** At most this many expired grants are deleted per statement by {@link purgeExpiredGrants}. */
export const GRANT_PURGE_BATCH = 1000

/**
 * How long after its expiry a grant is deleted: a host whose clock runs ahead of the one that
 * issued a link never deletes the grant while the issuer still counts the link as live.
 */
export const GRANT_PURGE_GRACE_MS = 60_000

/**
 * Deletes the grants of links that expired (a minute ago or earlier: {@link GRANT_PURGE_GRACE_MS}),
 * in statements of at most {@link GRANT_PURGE_BATCH}; answers how many. Nothing depends on it for
 * correctness (an expired link is refused whether its grant is there or not); it keeps the table
 * at about a quarter of an hour of lookups.
 */
export const purgeExpiredGrants = Effect.gen(function* () {
  const store = yield* DocumentStore
  const before = (yield* Clock.currentTimeMillis) - GRANT_PURGE_GRACE_MS
  return yield* deleteInBatches(GRANT_PURGE_BATCH, (limit) => store.deleteExpiredGrants(before, limit))
})

// ---------------------------------------------------------------------------------------------
// Links for a person of the account (the portal)

/** Where the API serves a ticket's file: `${downloadPath}?ticket=...` (relative to the API's origin). */
export const downloadPath = "/api/v1/order/docs/download/"

/** One visible document of an order with a ticket that downloads it through the API. */
export interface DocumentLink {
  readonly document: DocumentRecord
  readonly ticket: string
  /** `downloadPath` with the ticket in the query, ready to prefix with the API's origin. */
  readonly path: string
}

/** The links of one order, and the key they were issued under. */
export interface DocumentLinks {
  /**
   * Which of the account's keys the tickets are bound to: the live key while it is active, else
   * the test key while that one is; null when neither is (no links then: a download checks the
   * key, so a ticket without an active key could never open).
   */
  readonly keyMode: KeyMode | null
  /** When every ticket of the answer dies at the latest (epoch ms), null without links. */
  readonly expiresAt: number | null
  readonly links: ReadonlyArray<DocumentLink>
}

/**
 * Download links for the visible documents of one of the account's orders, for a signed-in
 * person of the account (`viewer` is the portal's `Viewer`, or anything with its customer
 * number). The tickets are the API's: issued the same way, for the same time
 * (`documents.ticketTtlMinutes`), bound to one document version and to the account's live key
 * generation (the test key's while the live key is not active), and checked by the same
 * `download`: regenerating or disabling that key kills every link issued under it at once, a
 * new document version kills the link to the old one, and the account's IP allowlist applies
 * to the download. Only the account's own orders (linked child accounts are not included): an
 * unknown order and another account's are both `ShipmentNotFound`.
 */
export const linksFor = Effect.fn("Documents.linksFor")(function* (
  viewer: { readonly customerNo: string },
  trackNo: string
) {
  const store = yield* DocumentStore
  const order = yield* store.findOrder(trackNo)
  if (Option.isNone(order) || order.value.customerNo !== viewer.customerNo)
    return yield* new ShipmentNotFound({ trackNo })
  return yield* linksOf(viewer, visible(order.value, yield* store.listCurrent([trackNo])))
})

/**
 * {@link linksFor} for documents already read as the account's visible ones (a shipment's page
 * has them from `Shipments.detail`, which checked the shipment is the viewer's): the same
 * tickets, without reading the order and its documents a second time.
 */
export const linksOf = Effect.fn("Documents.linksOf")(function* (
  viewer: { readonly customerNo: string },
  documents: ReadonlyArray<DocumentRecord>
) {
  const customerNo = viewer.customerNo
  const accounts = yield* AccountStore
  const account = yield* accounts.findAccount(customerNo)
  let key: ApiKeyRecord | undefined
  for (const mode of ["live", "test"] as const) {
    const found = yield* accounts.findKey(customerNo, mode)
    if (Option.isSome(found) && found.value.status === "active") {
      key = found.value
      break
    }
  }
  if (Option.isNone(account) || key === undefined || documents.length === 0)
    return { keyMode: key?.mode ?? null, expiresAt: null, links: [] } satisfies DocumentLinks
  const { expiresAt, tickets } = yield* issueTickets(customerNo, key, documents)
  return {
    keyMode: key.mode,
    expiresAt,
    links: documents.map((document, i) => ({
      document,
      ticket: tickets[i]!,
      path: `${downloadPath}?ticket=${tickets[i]!}`
    }))
  } satisfies DocumentLinks
})

// ---------------------------------------------------------------------------------------------
// Download

export interface DownloadInput {
  readonly client: Option.Option<ClientIp.Address>
  /** Every `ticket` value received; anything but exactly one is an invalid ticket. */
  readonly ticket: ReadonlyArray<string>
  /** HEAD: the same answer without opening the file (a rotated image is turned only if it never was). */
  readonly head: boolean
}

/** A file ready to send: its type and exact length, and its bytes unless `head`. */
export interface Download {
  readonly document: DocumentRecord
  readonly contentType: ContentType
  readonly size: number
  /** Undefined for HEAD. */
  readonly body: OpenBlob["body"] | undefined
}

const requireService = <I, S>(tag: Context.Tag<I, S>, what: string) =>
  Effect.flatMap(Effect.serviceOption(tag), (o) =>
    Option.isSome(o)
      ? Effect.succeed(o.value)
      : Effect.fail(new DocumentsNotConfigured({ message: `no ${what} is configured` }))
  )

/** Whether the principal's account (or an account linked to it) owns the order now. */
const ownsNow = (customerNo: string, order: OrderRecord) =>
  order.customerNo === customerNo
    ? Effect.succeed(true)
    : Effect.map(
        Effect.flatMap(AccountStore, (s) => s.linkedChildren(customerNo)),
        (children) => children.includes(order.customerNo)
      )

/**
 * A rotated image: its rendition (the file turned by the saved rotation), made once and kept in
 * the BlobStore beside the original, so later downloads stream it like any file and a HEAD only
 * reads its length. A blob's bytes never change, so a new document version with a new file gets
 * a new rendition, and one that only changed visibility keeps the old one. Two first downloads
 * at once may both make it; they store the same bytes.
 */
const downloadRotated = Effect.fnUntraced(function* (
  blobs: Context.Tag.Service<BlobStore>,
  document: DocumentRecord,
  rotation: Exclude<Rotation, 0>,
  head: boolean
) {
  const variant = `rotate-${rotation}`
  const kept = blobs.renditionKey(document.blobKey, variant)
  const file = (size: number, body: Download["body"]): Download => ({
    document,
    contentType: document.contentType,
    size,
    body
  })
  if (head) {
    const size = yield* blobs.stat(kept)
    if (Option.isSome(size)) return file(size.value, undefined)
  } else {
    const opened = yield* blobs.open(kept)
    if (Option.isSome(opened)) return file(opened.value.size, opened.value.body)
  }
  const images = yield* requireService(ImageTransform, "ImageTransform")
  const bytes = yield* blobs.read(document.blobKey)
  if (Option.isNone(bytes)) return yield* new DocumentUnavailable({ reason: "file-missing" })
  const rotated = yield* images.rotate(
    bytes.value,
    rotation,
    document.contentType as Exclude<ContentType, "application/pdf">
  )
  // The turned file is in hand: a failure to keep it costs the next download another turn, not this one.
  yield* blobs
    .putRendition(document.blobKey, variant, rotated)
    .pipe(Effect.catchAll((e) => Effect.logWarning(`documents: could not keep the ${variant} rendition`, e)))
  return file(rotated.byteLength, head ? undefined : rotated)
})

/**
 * The download (interface 4.3): the ticket must open and be unexpired; its key must still be
 * active at the same generation; the document must still be owned by the key's account (or one
 * linked to it), be shown to customers, and be at the sealed version. Then the file, with its
 * saved rotation applied to images (made once, then kept: {@link downloadRotated}).
 */
export const download = (input: DownloadInput) => Tracing.traced("Documents.download")(downloadProgram(input))

const downloadProgram = Effect.fnUntraced(function* (input: DownloadInput) {
  yield* IpBlocks.check(input.client)
  if (input.ticket.length !== 1) return yield* new TicketRejected({ reason: "invalid" })
  const now = yield* Clock.currentTimeMillis
  const lifetimeMs = (yield* WaybillConfig).documents.ticketTtlMinutes * 60_000
  const claims = yield* Ticket.open(input.ticket[0]!, { now, lifetimeMs })
  if (Option.isNone(claims)) return yield* new TicketRejected({ reason: "invalid" })
  if (!Ticket.isLive(claims.value, now)) return yield* new TicketRejected({ reason: "expired" })
  const c = claims.value

  // The key of the ticket's slot and its account, in one lookup.
  const slot = yield* Effect.flatMap(AccountStore, (s) => s.findSlotWithAccount(c.customerNo, c.keyMode))
  // The whole credential (status, id and generation) is checked before anything about the
  // document, so a link whose key was rotated or disabled learns nothing about later changes.
  if (
    Option.isNone(slot) ||
    slot.value.key.status !== "active" ||
    slot.value.key.id !== c.keyId ||
    slot.value.key.generation !== c.keyGeneration
  )
    return yield* new TicketRejected({ reason: "key" })
  const key = slot.value.key
  // The credential's account rules still apply: a ticket used from outside the account's IP
  // allowlist is lost access (403), like the metadata lookup that issued it.
  if (!Admission.allowlisted(slot.value.account, input.client)) return yield* new TicketRejected({ reason: "key" })

  // The document's order and that order's current documents, in one lookup.
  const found = yield* Effect.flatMap(DocumentStore, (s) => s.findDownload(c.documentId))
  if (Option.isNone(found)) return yield* new DocumentUnavailable({ reason: "missing" })
  const order = found.value.order
  if (!(yield* ownsNow(c.customerNo, order))) return yield* new DocumentUnavailable({ reason: "owner" })
  const current = visible(order, found.value.current).find((d) => d.id === c.documentId)
  if (current === undefined) return yield* new DocumentUnavailable({ reason: "not-current" })
  if (
    !Ticket.matches(c, {
      keyId: key.id,
      keyGeneration: key.generation,
      documentId: current.id,
      documentVersion: current.version
    })
  ) {
    // A key generation mismatch is lost access (403); a document version mismatch is a gone link (404).
    return yield* c.keyGeneration !== key.generation
      ? new TicketRejected({ reason: "key" })
      : new DocumentUnavailable({ reason: "not-current" })
  }

  const blobs = yield* requireService(BlobStore, "BlobStore")
  if (current.rotation !== 0 && isImage(current.contentType))
    return yield* downloadRotated(blobs, current, current.rotation, input.head)
  if (input.head) {
    const size = yield* blobs.stat(current.blobKey)
    if (Option.isNone(size)) return yield* new DocumentUnavailable({ reason: "file-missing" })
    return { document: current, contentType: current.contentType, size: size.value, body: undefined } satisfies Download
  }
  const opened = yield* blobs.open(current.blobKey)
  if (Option.isNone(opened)) return yield* new DocumentUnavailable({ reason: "file-missing" })
  return {
    document: current,
    contentType: current.contentType,
    size: opened.value.size,
    body: opened.value.body
  } satisfies Download
})

// ---------------------------------------------------------------------------------------------
// Operators

const TYPE = /^[a-z0-9][a-z0-9-]{0,31}$/
const MAX_SOURCE_ID = 100

const loadOrder = (trackNo: string) =>
  Effect.flatMap(DocumentStore, (s) => s.findOrder(trackNo)).pipe(
    Effect.flatMap(
      Option.match({ onNone: () => Effect.fail(new ShipmentNotFound({ trackNo })), onSome: Effect.succeed })
    )
  )

const loadDocument = (id: string) =>
  Effect.flatMap(DocumentStore, (s) => s.findDocument(id)).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(new DocumentNotFound({ id })), onSome: Effect.succeed }))
  )

/** Checks a file's size and format; the format comes from the bytes. */
const checkFile = Effect.fnUntraced(function* (bytes: Uint8Array) {
  const limits = (yield* WaybillConfig).documents
  if (bytes.byteLength === 0) return yield* new InvalidDocument({ message: "The file is empty." })
  if (bytes.byteLength > limits.maxFileBytes)
    return yield* new InvalidDocument({ message: `The file is larger than ${limits.maxFileBytes} bytes.` })
  const contentType = sniffContentType(bytes)
  if (contentType === undefined)
    return yield* new InvalidDocument({ message: "The file is not a PDF, JPEG, PNG, GIF or TIFF." })
  return contentType
})

/** Parses a rotation given as text or number (0, 90, 180, 270). */
export const parseRotation = (value: unknown): Either.Either<Rotation, InvalidDocument> => {
  const n = typeof value === "string" && /^\d{1,3}$/.test(value) ? Number(value) : value
  const r = ROTATIONS.find((x) => x === n)
  return r === undefined
    ? Either.left(new InvalidDocument({ message: "rotation must be 0, 90, 180 or 270." }))
    : Either.right(r)
}

/** Appends `document.available` for a document that customers can now fetch. */
const announce = Effect.fnUntraced(function* (
  order: OrderRecord,
  document: DocumentRecord,
  now: number,
  extra: Record<string, unknown> = {}
) {
  const id = yield* Ulid.eventId
  yield* Effect.flatMap(EventOutbox, (o) =>
    o.append({
      id,
      type: "document.available",
      customerNo: order.customerNo,
      trackNo: order.trackNo,
      livemode: order.livemode,
      occurredAt: now,
      data: {
        track_no: order.trackNo,
        document_type: document.type,
        kind: document.kind,
        order_version: document.orderVersion,
        batch: document.batch,
        page: document.page,
        ...extra
      }
    })
  )
})

export interface AddDocumentInput {
  readonly trackNo: string
  readonly type: string
  readonly bytes: Uint8Array
  readonly rotation?: Rotation | undefined
  /** Adds to this batch of the current order version; default: a new batch. */
  readonly batch?: number | undefined
  /** The source identifier shown as `id`; default: the document id. */
  readonly sourceId?: string | undefined
}

const newDocument = (
  order: OrderRecord,
  fields: Pick<DocumentRecord, "kind" | "batch" | "page" | "type" | "sourceId" | "contentType" | "rotation">,
  blobKey: string,
  size: number,
  id: string,
  now: number,
  capturedAt: number
): DocumentRecord => ({
  id,
  trackNo: order.trackNo,
  orderVersion: order.currentVersion,
  blobKey,
  size,
  version: 1,
  hidden: false,
  removed: false,
  capturedAt,
  createdAt: now,
  updatedAt: now,
  ...fields
})

/**
 * Before a new file's transaction: the order must exist, the bytes must be a file type we keep,
 * and they are stored first (a failed transaction leaves an unreferenced blob, never a row
 * without its bytes). Answers the blob key, the sniffed type, a new document id and the time.
 */
const storeFile = Effect.fnUntraced(function* (trackNo: string, bytes: Uint8Array) {
  yield* loadOrder(trackNo)
  const contentType = yield* checkFile(bytes)
  const blobs = yield* requireService(BlobStore, "BlobStore")
  const blobKey = yield* blobs.put(bytes)
  const id = `doc_${yield* Ulid.make}`
  const now = yield* Clock.currentTimeMillis
  return { blobKey, contentType, id, now }
})

/** The rows of {@link addDocument}, in its transaction, once the file is stored. */
const insertAttachment = Effect.fnUntraced(function* (
  store: Context.Tag.Service<DocumentStore>,
  input: AddDocumentInput,
  blobKey: string,
  contentType: ContentType,
  id: string,
  now: number
) {
  const order = yield* loadOrder(input.trackNo)
  const current = (yield* store.listAll(order.trackNo)).filter(
    (d) => d.kind === "attachment" && d.orderVersion === order.currentVersion
  )
  const batch = input.batch ?? Math.max(0, ...current.map((d) => d.batch)) + 1
  const page = Math.max(0, ...current.filter((d) => d.batch === batch).map((d) => d.page)) + 1
  const document = newDocument(
    order,
    {
      kind: "attachment",
      batch,
      page,
      type: input.type,
      sourceId: input.sourceId ?? id,
      contentType,
      rotation: input.rotation ?? 0
    },
    blobKey,
    input.bytes.byteLength,
    id,
    now,
    now
  )
  yield* store.insertDocument(document)
  yield* announce(order, document, now)
  return document
})

/**
 * Adds an attachment page to the current order version (a new batch unless `batch` is given)
 * and appends `document.available`, in one transaction. The bytes are stored first.
 */
export const addDocument = Effect.fn("Documents.addDocument")(function* (input: AddDocumentInput) {
  if (!TYPE.test(input.type))
    return yield* new InvalidDocument({ message: "type must be 1 to 32 lowercase letters, digits or '-'." })
  if (input.batch !== undefined && (!Number.isInteger(input.batch) || input.batch < 1 || input.batch > 1_000_000))
    return yield* new InvalidDocument({ message: "batch must be a positive integer." })
  if (input.sourceId !== undefined && (input.sourceId.trim() === "" || input.sourceId.length > MAX_SOURCE_ID))
    return yield* new InvalidDocument({ message: `id must be 1 to ${MAX_SOURCE_ID} characters.` })
  if (input.type === "signature")
    return yield* new InvalidDocument({ message: "Signatures are added with addSignature (signature add)." })
  const { blobKey, contentType, id, now } = yield* storeFile(input.trackNo, input.bytes)
  const store = yield* DocumentStore
  const tx = yield* Transactor
  return yield* tx.withTransaction(insertAttachment(store, input, blobKey, contentType, id, now))
})

export interface AddSignatureInput {
  readonly trackNo: string
  /** The recipient's name, shown as the signature's `id`. */
  readonly name: string
  readonly bytes: Uint8Array
  /** When it was captured (epoch ms); default now. The latest capture is the one shown. */
  readonly capturedAt?: number | undefined
}

/** The rows of {@link addSignature}, in its transaction, once the file is stored. */
const insertSignature = Effect.fnUntraced(function* (
  store: Context.Tag.Service<DocumentStore>,
  input: AddSignatureInput,
  name: string,
  blobKey: string,
  contentType: ContentType,
  id: string,
  now: number
) {
  const order = yield* loadOrder(input.trackNo)
  const document = newDocument(
    order,
    { kind: "signature", batch: 0, page: 1, type: "signature", sourceId: name, contentType, rotation: 0 },
    blobKey,
    input.bytes.byteLength,
    id,
    now,
    input.capturedAt ?? now
  )
  yield* store.insertDocument(document)
  yield* announce(order, document, now)
  return document
})

/** Adds a signature (it becomes the latest if captured last) and appends `document.available`. */
export const addSignature = Effect.fn("Documents.addSignature")(function* (input: AddSignatureInput) {
  const name = input.name.trim()
  if (name === "" || name.length > MAX_SOURCE_ID)
    return yield* new InvalidDocument({ message: `The recipient name must be 1 to ${MAX_SOURCE_ID} characters.` })
  const { blobKey, contentType, id, now } = yield* storeFile(input.trackNo, input.bytes)
  const store = yield* DocumentStore
  const tx = yield* Transactor
  return yield* tx.withTransaction(insertSignature(store, input, name, blobKey, contentType, id, now))
})

/** What an operator can do to a document's visibility. */
export type VisibilityAction = "hide" | "unhide" | "remove"

/**
 * Hides, unhides or removes a document. Each bumps the document version, so every link issued
 * before stays dead even when the document is shown again. A removed document stays removed.
 */
export const setVisibility = Effect.fn("Documents.setVisibility")(function* (id: string, action: VisibilityAction) {
  const document = yield* loadDocument(id)
  if (document.removed && action !== "remove")
    return yield* new InvalidDocument({ message: "The document was removed; it cannot be changed." })
  const now = yield* Clock.currentTimeMillis
  const updated: DocumentRecord = {
    ...document,
    hidden: action === "hide" ? true : action === "unhide" ? false : document.hidden,
    removed: action === "remove" ? true : document.removed,
    version: document.version + 1,
    updatedAt: now
  }
  yield* Effect.flatMap(DocumentStore, (s) => s.updateDocument(updated, document.version))
  return updated
})

/** The new version of {@link replaceDocument}, in its transaction, once the new file is stored. */
const replaceFile = Effect.fnUntraced(function* (
  document: DocumentRecord,
  contentType: ContentType,
  blobKey: string,
  bytes: Uint8Array,
  now: number
) {
  const order = yield* loadOrder(document.trackNo)
  const updated: DocumentRecord = {
    ...document,
    contentType,
    blobKey,
    size: bytes.byteLength,
    version: document.version + 1,
    updatedAt: now
  }
  yield* Effect.flatMap(DocumentStore, (s) => s.updateDocument(updated, document.version))
  yield* announce(order, updated, now, { replaced: true })
  return updated
})

/**
 * Replaces a document's file (same place, type and rotation; the format may change) and bumps
 * its version, so links to the old file die; appends `document.available` for the new file.
 */
export const replaceDocument = Effect.fn("Documents.replaceDocument")(function* (id: string, bytes: Uint8Array) {
  const document = yield* loadDocument(id)
  if (document.removed)
    return yield* new InvalidDocument({ message: "The document was removed; it cannot be changed." })
  const contentType = yield* checkFile(bytes)
  const blobs = yield* requireService(BlobStore, "BlobStore")
  const blobKey = yield* blobs.put(bytes)
  const tx = yield* Transactor
  const now = yield* Clock.currentTimeMillis
  return yield* tx.withTransaction(replaceFile(document, contentType, blobKey, bytes, now))
})

/**
 * Starts a new order version: the attachments of earlier versions are no longer shown (and their
 * links die); the latest signature stays. Returns the new version.
 */
export const newOrderVersion = Effect.fn("Documents.newOrderVersion")(function* (trackNo: string) {
  const order = yield* loadOrder(trackNo)
  const next = order.currentVersion + 1
  yield* Effect.flatMap(DocumentStore, (s) => s.setOrderVersion(trackNo, order.currentVersion, next))
  return next
})

/** Stores the order's invoice number (what `invoice` shows and `invoice_no` lookups match). */
export const setInvoice = Effect.fn("Documents.setInvoice")(function* (trackNo: string, invoice: string) {
  const value = invoice.trim()
  const limits = (yield* WaybillConfig).documents
  if (value.length > limits.maxReferenceLength || value.includes(","))
    return yield* new InvalidDocument({
      message: `An invoice number has at most ${limits.maxReferenceLength} characters and no comma.`
    })
  yield* loadOrder(trackNo)
  yield* Effect.flatMap(DocumentStore, (s) => s.setInvoice(trackNo, value))
  return yield* loadOrder(trackNo)
})

/** A document and whether customers see it now: what operators are shown. */
export interface OperatorDocument {
  readonly document: DocumentRecord
  readonly shown: boolean
}

/**
 * Whether customers see `document` now: the customer rule (`Document.visible`) over its order's
 * documents, never a shortcut from its own flags, so an attachment of an older order version or
 * a signature a later capture replaced is not marked shown.
 */
export const shownToCustomers = Effect.fn("Documents.shownToCustomers")(function* (document: DocumentRecord) {
  const order = yield* loadOrder(document.trackNo)
  const all = yield* Effect.flatMap(DocumentStore, (s) => s.listCurrent([document.trackNo]))
  return visible(order, all).some((d) => d.id === document.id)
})

/** One document for operators, whether it is shown decided by {@link shownToCustomers}. */
export const forOperator = Effect.fn("Documents.forOperator")(function* (document: DocumentRecord) {
  return { document, shown: yield* shownToCustomers(document) } satisfies OperatorDocument
})

/** How an order's documents are paged for operators: newest first by `(createdAt, id)`. */
export const operatorKeying: Page.Keying<Page.TimeKey, OperatorDocument> = {
  schema: Page.TimeKeySchema,
  of: (d) => [d.document.createdAt, d.document.id]
}

/**
 * A page of an order's documents for operators: every version, newest first, with what
 * customers see marked (decided over the order's current documents, whichever page they are on).
 */
export const listForOperator = Effect.fn("Documents.listForOperator")(function* (trackNo: string, query: Page.Query) {
  const order = yield* loadOrder(trackNo)
  const store = yield* DocumentStore
  const shown = new Set(visible(order, yield* store.listCurrent([trackNo])).map((d) => d.id))
  const page = yield* Page.read(query, operatorKeying, (request) =>
    Effect.map(store.listPage(trackNo, request), (slice) => ({
      items: slice.items.map((d): OperatorDocument => ({ document: d, shown: shown.has(d.id) })),
      hasMore: slice.hasMore
    }))
  )
  return { order, page }
})

/** Everything the documents programs need (BlobStore and ImageTransform are looked up when used). */
export type DocumentsRequirements =
  | DocumentStore
  | AccountStore
  | EventOutbox
  | Transactor
  | Entropy
  | KeyRing
  | WaybillConfig
  | IpBlocks.IpBlocklist
