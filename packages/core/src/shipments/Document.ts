/**
 * @module Document
 *
 * Order documents as stored (interface 2.4, DECISIONS.md "Documents and download tickets"), and
 * the pure rules over them: which documents a customer sees, which file formats are accepted, and
 * how the file's bytes say what they are.
 *
 * An order has versions (1 at booking). Attachments belong to one order version and a batch
 * within it, with a one-based page; signatures are kept apart and the latest one is shown
 * whatever the order version. Every document has its own `version`, bumped whenever what a
 * download link points at changes (hidden, unhidden, removed, replaced), so links sealed for an
 * older version stay dead.
 */

/** Attachments come in batches per order version; signatures stand apart. */
export type DocumentKind = "attachment" | "signature"

/** The saved rotation, clockwise degrees, applied on download. */
export type Rotation = 0 | 90 | 180 | 270

/** The rotations an operator may save. */
export const ROTATIONS: ReadonlyArray<Rotation> = [0, 90, 180, 270]

/** The downloadable formats (interface 2.4): PDF, JPEG, PNG, GIF, TIFF. */
export type ContentType = "application/pdf" | "image/jpeg" | "image/png" | "image/gif" | "image/tiff"

/** One document of an order as stored. */
export interface DocumentRecord {
  /** `doc_` + ULID; what operators name a document by. Never shown to customers. */
  readonly id: string
  readonly trackNo: string
  readonly kind: DocumentKind
  /** The order version the attachment belongs to (for a signature: the version at capture). */
  readonly orderVersion: number
  /** Batch within the order version (attachments, from 1); 0 for signatures. */
  readonly batch: number
  /** One-based page within the batch; 1 for signatures. */
  readonly page: number
  /** `bol`, `pickedup-package`, `delivered-package`, `signature`, or another type. */
  readonly type: string
  /** The source identifier returned as `id`; a signature holds the recipient name. */
  readonly sourceId: string
  readonly contentType: ContentType
  readonly rotation: Rotation
  /** Where the bytes are in the `BlobStore`. */
  readonly blobKey: string
  readonly size: number
  /** Bumped on hide, unhide, remove and replace: a link sealed for another version is dead. */
  readonly version: number
  readonly hidden: boolean
  /** Removed documents never come back (unhide does not undo a removal). */
  readonly removed: boolean
  /** Capture time (signatures: the latest capture wins); for attachments the time added. */
  readonly capturedAt: number
  readonly createdAt: number
  readonly updatedAt: number
}

/** An order as the documents endpoint shows it: the shipment's fields plus the order's state. */
export interface OrderRecord {
  /** The order number is the tracking number. */
  readonly trackNo: string
  readonly customerNo: string
  readonly livemode: boolean
  /** The shipment's BillingReference (customer reference). */
  readonly reference: string
  /** The shipment's Contact. */
  readonly requestedBy: string
  /** The invoice number an operator stored, or "". */
  readonly invoice: string
  /** The current order version; 1 until an operator starts a new one. */
  readonly currentVersion: number
}

/** What the visibility rule reads of a document (a lookup lists no more than it needs). */
export type VisibilityFields = Pick<
  DocumentRecord,
  "id" | "kind" | "orderVersion" | "batch" | "page" | "hidden" | "removed" | "capturedAt" | "createdAt"
>

/** Sorts attachments by batch and page; the order customers see them in. */
const byBatchAndPage = (a: VisibilityFields, b: VisibilityFields) =>
  a.batch - b.batch || a.page - b.page || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const isVisible = (d: VisibilityFields) => !d.hidden && !d.removed

/**
 * What a customer sees of one order (interface 2.4 rules): every visible attachment of the
 * current order version, by batch and page, then the latest signature by capture time if it is
 * visible. A hidden or removed latest signature hides the signature altogether; an older one is
 * never shown in its place.
 */
export const visible = <D extends VisibilityFields>(
  order: Pick<OrderRecord, "currentVersion">,
  documents: ReadonlyArray<D>
): Array<D> => {
  const attachments = documents
    .filter((d) => d.kind === "attachment" && d.orderVersion === order.currentVersion && isVisible(d))
    .sort(byBatchAndPage)
  const latest = latestSignature(documents)
  return latest !== undefined && isVisible(latest) ? [...attachments, latest] : attachments
}

/** The signature with the latest capture time (ties: the later created, then the larger id). */
export const latestSignature = <D extends VisibilityFields>(documents: ReadonlyArray<D>): D | undefined => {
  let latest: D | undefined
  for (const d of documents) {
    if (d.kind !== "signature") continue
    if (
      latest === undefined ||
      d.capturedAt > latest.capturedAt ||
      (d.capturedAt === latest.capturedAt &&
        (d.createdAt > latest.createdAt || (d.createdAt === latest.createdAt && d.id > latest.id)))
    )
      latest = d
  }
  return latest
}

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>) =>
  bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b)

/**
 * The format of a file from its first bytes, never from a name or a claimed type, so what is
 * stored and served is what the bytes really are. Anything but the five formats is undefined.
 */
export const sniffContentType = (bytes: Uint8Array): ContentType | undefined => {
  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d])) return "application/pdf" // %PDF-
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (
    startsWith(bytes, [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]) ||
    startsWith(bytes, [0x47, 0x49, 0x46, 0x38, 0x39, 0x61])
  )
    return "image/gif" // GIF87a, GIF89a
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "image/tiff"
  return undefined
}

/** Whether a rotation applies to this format (PDFs are served as stored). */
export const isImage = (contentType: ContentType): boolean => contentType !== "application/pdf"
