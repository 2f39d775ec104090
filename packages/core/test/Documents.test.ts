import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import { defaults } from "../src/shared/Config.js"
import { type DocumentRecord, latestSignature, sniffContentType, visible } from "../src/shipments/Document.js"
import { inRequestOrder, type LookupParams, parseLookup, parseRotation } from "../src/documents/Documents.js"
import type { OrderListing } from "../src/shipments/DocumentStore.js"

const limits = defaults.documents
const none: LookupParams = { control_no: [], search_field: [], search_value: [], id: [] }
const parse = (p: Partial<LookupParams>) => parseLookup({ ...none, ...p }, limits)
const message = (p: Partial<LookupParams>) => {
  const r = parse(p)
  return Either.isLeft(r) ? r.left.message : "ok"
}

let n = 0
const doc = (overrides: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id: `doc_${++n}`,
  trackNo: "12345678",
  kind: "attachment",
  orderVersion: 1,
  batch: 1,
  page: 1,
  type: "bol",
  sourceId: "src",
  contentType: "application/pdf",
  rotation: 0,
  blobKey: "k",
  size: 1,
  version: 1,
  hidden: false,
  removed: false,
  capturedAt: 1000,
  createdAt: 1000,
  updatedAt: 1000,
  ...overrides
})

describe("parseLookup", () => {
  it("precedence: search_value, then id, then control_no", () => {
    expect(parse({ search_field: ["invoice_no"], search_value: ["A"], id: ["B"], control_no: ["C"] })).toEqual(
      Either.right({ field: "invoice_no", values: ["A"] })
    )
    expect(parse({ id: ["B"], control_no: ["C"] })).toEqual(Either.right({ field: "any", values: ["B"] }))
    expect(parse({ id: ["B"], search_field: ["customer_reference"] })).toEqual(
      Either.right({ field: "customer_reference", values: ["B"] })
    )
    expect(parse({ control_no: ["C"], search_field: ["invoice_no"] })).toEqual(
      Either.right({ field: "control_no", values: ["C"] })
    )
  })

  it.prop(
    "a comma always separates; values are trimmed, empty ones dropped, duplicates merged",
    [fc.array(fc.stringMatching(/^[A-Z0-9 -]{0,10}$/), { minLength: 1, maxLength: 20 })],
    ([parts]) => {
      const r = parse({ search_field: ["customer_reference"], search_value: [parts.join(",")] })
      const expected = [...new Set(parts.map((p) => p.trim()).filter((p) => p !== ""))]
      if (expected.length === 0) expect(Either.isLeft(r)).toBe(true)
      else expect(r).toEqual(Either.right({ field: "customer_reference", values: expected }))
    }
  )

  it("limits", () => {
    const values = (k: number) => Array.from({ length: k }, (_, i) => String(10_000_000 + i)).join(",")
    expect(message({ control_no: [values(100)] })).toBe("ok")
    expect(message({ control_no: [values(101)] })).toBe("At most 100 values may be looked up at once.")
    expect(message({ control_no: ["1".padEnd(4096, " ")] })).toBe("ok")
    expect(message({ control_no: ["1".padEnd(4097, " ")] })).toBe("The lookup is longer than 4096 characters.")
    expect(message({ id: ["R".repeat(23)] })).toBe("ok")
    expect(message({ id: ["R".repeat(24)] })).toBe("Customer references and invoice numbers are at most 23 characters.")
    expect(message({ control_no: ["R".repeat(24)] })).toBe("ok")
  })

  it("errors", () => {
    expect(message({})).toBe("A lookup is required: control_no, search_field with search_value, or id.")
    expect(message({ control_no: [""] })).toBe(
      "A lookup is required: control_no, search_field with search_value, or id."
    )
    expect(message({ id: ["1", "2"] })).toBe("The parameter id was given more than once.")
    expect(message({ search_field: ["x"], control_no: ["1"] })).toBe(
      "search_field must be one of control_no, customer_reference, invoice_no."
    )
  })
})

describe("visible", () => {
  it("current version's visible attachments by batch and page, then the latest signature if visible", () => {
    const a = doc({ batch: 2, page: 1 })
    const b = doc({ batch: 1, page: 2 })
    const c = doc({ batch: 1, page: 1 })
    const old = doc({ orderVersion: 1 })
    const hidden = doc({ orderVersion: 2, hidden: true })
    const s1 = doc({ kind: "signature", type: "signature", orderVersion: 1, capturedAt: 10 })
    const s2 = doc({ kind: "signature", type: "signature", orderVersion: 2, capturedAt: 20 })
    const current = [a, b, c].map((d) => ({ ...d, orderVersion: 2 }))
    expect(visible({ currentVersion: 2 }, [old, hidden, s1, s2, ...current]).map((d) => d.id)).toEqual([
      current[2]!.id,
      current[1]!.id,
      current[0]!.id,
      s2.id
    ])
    const hiddenLatest = { ...s2, hidden: true }
    expect(visible({ currentVersion: 2 }, [s1, hiddenLatest]).map((d) => d.id)).toEqual([])
    expect(latestSignature([s2, s1])?.id).toBe(s2.id)
  })

  it("a removed latest signature hides the signature; an older one does not come back", () => {
    const s1 = doc({ kind: "signature", type: "signature", capturedAt: 10 })
    const s2 = doc({ kind: "signature", type: "signature", capturedAt: 20, removed: true })
    expect(visible({ currentVersion: 1 }, [s1, s2])).toEqual([])
    expect(visible({ currentVersion: 1 }, [s2, s1])).toEqual([])
  })

  it("the latest signature is the latest capture, not the latest upload", () => {
    // Captured last, uploaded first (a driver's device that synced late uploads the older one after).
    const capturedLast = doc({ kind: "signature", type: "signature", capturedAt: 20, createdAt: 100 })
    const capturedFirst = doc({ kind: "signature", type: "signature", capturedAt: 10, createdAt: 200 })
    for (const order of [
      [capturedLast, capturedFirst],
      [capturedFirst, capturedLast]
    ]) {
      expect(latestSignature(order)?.id).toBe(capturedLast.id)
      expect(visible({ currentVersion: 1 }, order).map((d) => d.id)).toEqual([capturedLast.id])
    }
    // Hiding the latest capture shows nothing, even though the other was uploaded later.
    expect(visible({ currentVersion: 1 }, [{ ...capturedLast, hidden: true }, capturedFirst])).toEqual([])
  })

  const docArb = fc.record({
    kind: fc.constantFrom("attachment" as const, "signature" as const),
    orderVersion: fc.integer({ min: 1, max: 3 }),
    batch: fc.integer({ min: 1, max: 3 }),
    page: fc.integer({ min: 1, max: 3 }),
    hidden: fc.boolean(),
    removed: fc.boolean(),
    capturedAt: fc.integer({ min: 0, max: 50 }),
    createdAt: fc.integer({ min: 0, max: 50 })
  })

  it.prop(
    "shows exactly the interface's set: current-version visible attachments, then the latest capture if visible",
    [fc.array(docArb, { maxLength: 12 }), fc.integer({ min: 1, max: 3 })],
    ([specs, currentVersion]) => {
      const docs = specs.map((s) => doc(s))
      const shown = visible({ currentVersion }, docs)
      const ids = new Set(shown.map((d) => d.id))
      const isShown = (d: DocumentRecord) => !d.hidden && !d.removed
      // Every current-version attachment that is neither hidden nor removed, and no other attachment.
      for (const d of docs.filter((d) => d.kind === "attachment"))
        expect(ids.has(d.id), d.id).toBe(d.orderVersion === currentVersion && isShown(d))
      // Attachments by batch, then page; the signature last.
      const attachments = shown.filter((d) => d.kind === "attachment")
      for (let i = 1; i < attachments.length; i++) {
        const [p, q] = [attachments[i - 1]!, attachments[i]!]
        expect(p.batch < q.batch || (p.batch === q.batch && p.page <= q.page)).toBe(true)
      }
      const signatures = shown.filter((d) => d.kind === "signature")
      expect(signatures.length).toBeLessThanOrEqual(1)
      if (signatures.length === 1) expect(shown.at(-1)).toBe(signatures[0])
      // The signature shown, if any, is the one with the latest capture, whatever its order version.
      const all = docs.filter((d) => d.kind === "signature")
      const latestCapture = Math.max(...all.map((d) => d.capturedAt))
      const latest = latestSignature(docs)
      if (all.length > 0) expect(latest?.capturedAt).toBe(latestCapture)
      expect(signatures.map((d) => d.id)).toEqual(latest !== undefined && isShown(latest) ? [latest.id] : [])
    }
  )
})

describe("inRequestOrder", () => {
  const listing = (trackNo: string, reference: string, invoice: string): OrderListing => ({
    order: { trackNo, reference, requestedBy: "", invoice, currentVersion: 1 },
    documents: []
  })
  const value = fc.constantFrom("A", "B", "C", "D", "E", "F")

  it.prop(
    "orders come in the order of the first value each matched (any of its keys for `any`), ties by tracking number",
    [
      fc.constantFrom("control_no" as const, "customer_reference" as const, "invoice_no" as const, "any" as const),
      fc.uniqueArray(value, { minLength: 1, maxLength: 6 }),
      fc.array(fc.tuple(value, value), { maxLength: 12 })
    ],
    ([field, values, keys]) => {
      const found = keys.map(([reference, invoice], i) =>
        listing(`${values[i % values.length]}${i}`, reference, invoice)
      )
      const sorted = inRequestOrder({ field, values }, found)
      expect([...sorted].sort((a, b) => (a.order.trackNo < b.order.trackNo ? -1 : 1))).toEqual(
        [...found].sort((a, b) => (a.order.trackNo < b.order.trackNo ? -1 : 1))
      )
      const rank = (l: OrderListing) => {
        const at = (v: string) => (values.includes(v) ? values.indexOf(v) : values.length)
        const { invoice, reference, trackNo } = l.order
        return field === "control_no"
          ? at(trackNo)
          : field === "customer_reference"
            ? at(reference)
            : field === "invoice_no"
              ? at(invoice)
              : Math.min(at(trackNo), at(reference), at(invoice))
      }
      for (let i = 1; i < sorted.length; i++) {
        const [a, b] = [sorted[i - 1]!, sorted[i]!]
        expect(rank(a) < rank(b) || (rank(a) === rank(b) && a.order.trackNo < b.order.trackNo)).toBe(true)
      }
    }
  )
})

describe("sniffContentType and parseRotation", () => {
  it("reads the format from the bytes", () => {
    const b = (...x: Array<number>) => new Uint8Array(x)
    expect(sniffContentType(new TextEncoder().encode("%PDF-1.7"))).toBe("application/pdf")
    expect(sniffContentType(b(0xff, 0xd8, 0xff, 0xe0))).toBe("image/jpeg")
    expect(sniffContentType(b(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))).toBe("image/png")
    expect(sniffContentType(new TextEncoder().encode("GIF89a"))).toBe("image/gif")
    expect(sniffContentType(b(0x49, 0x49, 0x2a, 0x00))).toBe("image/tiff")
    expect(sniffContentType(b(0x4d, 0x4d, 0x00, 0x2a))).toBe("image/tiff")
    expect(sniffContentType(new TextEncoder().encode("<html>"))).toBeUndefined()
    expect(sniffContentType(b())).toBeUndefined()
  })

  it("rotations are 0, 90, 180, 270", () => {
    expect(parseRotation("90")).toEqual(Either.right(90))
    expect(parseRotation(270)).toEqual(Either.right(270))
    for (const bad of ["45", "-90", "360", "", "9O", 1]) expect(Either.isLeft(parseRotation(bad))).toBe(true)
  })
})
