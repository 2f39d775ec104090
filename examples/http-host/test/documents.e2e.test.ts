/**
 * Order documents end to end through the real host: metadata lookups (every style, precedence
 * and limit), credentials, authorization, the visibility rules, download tickets (every
 * revocation trigger, expiry on a controlled clock, tampering), HEAD, and saved rotation applied
 * to real images.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Accounts, AccountStore, Documents, EventOutbox, ImageTransform, IpBlocks } from "@waybill/core"
import { ImageSharp } from "@waybill/image-sharp"
import sharp from "sharp"
import { bookOne, postJson, shipment, startHost, type TestAccount, type TestHost, testClock } from "./harness.js"
import { BLUE, decode, near, pdf, RED, twoToneImage } from "./documentFiles.js"

/** The host's clock (harness.ts `testClock`): `time.frozenAt` stops real time, `time.offsetMs` moves it on. */
const { clock, time } = testClock()

let t: TestHost
let a: TestAccount
let b: TestAccount

beforeAll(async () => {
  t = await startHost({ clock })
  a = await t.newAccount("A")
  b = await t.newAccount("B")
})
afterAll(() => t.close())

const DOCS = "/api/v1/order/docs/"

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

const answer = async (response: Response): Promise<Answer> => {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, text, body }
}

/** GET the documents endpoint with query parameters (repeated names allowed). */
const lookup = async (query: Record<string, string | ReadonlyArray<string>>, headers: Record<string, string> = {}) => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) for (const x of [v].flat()) params.append(k, x)
  return answer(await fetch(`${t.url}${DOCS}?${params}`, { headers }))
}

/** POST the documents endpoint with a urlencoded form. */
const lookupForm = async (form: Record<string, string>, query = "") =>
  answer(
    await fetch(`${t.url}${DOCS}${query}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString()
    })
  )

const envelope = (message: string) => JSON.stringify({ data: null, error: { message, exception: null } })
const NO_RECORDS = envelope("No records found.")

/** The one order of a successful lookup. */
const onlyOrder = (r: Answer) => {
  expect(r.status, r.text).toBe(200)
  expect(r.body.error, r.text).toBeNull()
  expect(r.body.data.orders).toHaveLength(1)
  return r.body.data.orders[0]
}

const uriOf = (r: Answer, type: string) => {
  const doc = onlyOrder(r).documents.find((d: { type: string }) => d.type === type)
  expect(doc, `no ${type} document in ${r.text}`).toBeDefined()
  return doc.uri as string
}

const download = async (uri: string, method = "GET") => {
  const response = await fetch(uri, { method })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

const addPdf = (trackNo: string, extra: Partial<Documents.AddDocumentInput> = {}) =>
  t.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf(trackNo), ...extra }))

describe("GET|POST /api/v1/order/docs/ (metadata)", () => {
  it("answers the interface's shape with a uri per document, in batch and page order", async () => {
    const trackNo = await bookOne(t.url, a.liveKey, { BillingReference: "PO-SHAPE-1" })
    await t.run(Documents.setInvoice(trackNo, "INV-SHAPE-1"))
    const bol = await addPdf(trackNo, { sourceId: "BOL-77" })
    const photo = await t.run(
      Documents.addDocument({ trackNo, type: "pickedup-package", bytes: await twoToneImage("png"), sourceId: "P1" })
    )
    await t.run(
      Documents.addDocument({
        trackNo,
        type: "pickedup-package",
        bytes: await twoToneImage("jpeg"),
        batch: photo.batch,
        sourceId: "P2"
      })
    )
    await t.run(Documents.addSignature({ trackNo, name: "Rita Recipient", bytes: await twoToneImage("png") }))

    const r = await lookup({ control_no: trackNo, key: a.liveKey })
    expect(r.headers.get("cache-control")).toBe("no-store")
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const order = onlyOrder(r)
    expect(Object.keys(order)).toEqual(["control_no", "reference", "requested_by", "invoice", "documents"])
    expect(order).toMatchObject({
      control_no: trackNo,
      reference: "PO-SHAPE-1",
      requested_by: "Ada Lopez",
      invoice: "INV-SHAPE-1"
    })
    expect(order.documents.map((d: Record<string, string>) => [d.type, d.page, d.id])).toEqual([
      ["bol", "1", "BOL-77"],
      ["pickedup-package", "1", "P1"],
      ["pickedup-package", "2", "P2"],
      ["signature", "1", "Rita Recipient"]
    ])
    for (const d of order.documents) {
      expect(Object.keys(d)).toEqual(["type", "page", "id", "uri"])
      // Format, key id ("k1"), a zero byte and one AES block, in base64url: 28 characters for every document.
      expect(d.uri).toMatch(new RegExp(`^${t.url}/api/v1/order/docs/download/\\?ticket=[A-Za-z0-9_-]{28}$`))
      // Opaque: neither the document id, the blob key nor the customer number shows through.
      expect(d.uri).not.toContain(bol.id)
      expect(d.uri).not.toContain(bol.blobKey)
      expect(d.uri).not.toContain(a.customerNo)
    }
    // Every lookup mints fresh tickets.
    const again = await lookup({ control_no: trackNo, key: a.liveKey })
    expect(onlyOrder(again).documents[0].uri).not.toBe(order.documents[0].uri)
  })

  it("an authorized order without documents has documents: []", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const order = onlyOrder(await lookup({ control_no: trackNo, key: a.liveKey }))
    expect(order.documents).toEqual([])
    expect(order.invoice).toBe("")
  })

  it("looks up by control_no, customer_reference, invoice_no and legacy id, in request order", async () => {
    const [x, y, z] = [
      await bookOne(t.url, a.liveKey, { BillingReference: "REF-X-1" }),
      await bookOne(t.url, a.liveKey, { BillingReference: "REF-Y-1" }),
      await bookOne(t.url, a.liveKey, { BillingReference: "REF-Z-1" })
    ]
    await t.run(Documents.setInvoice(z, "INV-Z-1"))
    const numbers = (r: Answer) => {
      expect(r.status, r.text).toBe(200)
      expect(r.body.error, r.text).toBeNull()
      return r.body.data.orders.map((o: { control_no: string }) => o.control_no)
    }
    expect(numbers(await lookup({ control_no: `${z},${x}`, key: a.liveKey }))).toEqual([z, x])
    expect(numbers(await lookup({ control_no: ` ${y} ,, ${y}`, key: a.liveKey }))).toEqual([y])
    expect(
      numbers(await lookup({ search_field: "customer_reference", search_value: "REF-Y-1,REF-X-1", key: a.liveKey }))
    ).toEqual([y, x])
    expect(numbers(await lookup({ search_field: "invoice_no", search_value: "INV-Z-1", key: a.liveKey }))).toEqual([z])
    expect(numbers(await lookup({ search_field: "control_no", search_value: x, key: a.liveKey }))).toEqual([x])
    // Legacy id without search_field: order number, customer reference or invoice number.
    expect(numbers(await lookup({ id: `INV-Z-1,REF-Y-1,${x}`, key: a.liveKey }))).toEqual([z, y, x])
    // Legacy id with search_field is search_value under its old name.
    expect(numbers(await lookup({ id: "REF-X-1", search_field: "customer_reference", key: a.liveKey }))).toEqual([x])
    const none = await lookup({ id: "REF-X-1", search_field: "invoice_no", key: a.liveKey })
    expect(none.text).toBe(NO_RECORDS)
    // A comma always separates: no reference can contain one, so a comma never joins two.
    expect((await lookup({ search_field: "customer_reference", search_value: "REF-X,-1", key: a.liveKey })).text).toBe(
      NO_RECORDS
    )
  })

  it("precedence: search_value, then id, then control_no", async () => {
    const [x, y, z] = [
      await bookOne(t.url, a.liveKey, { BillingReference: "PREC-X" }),
      await bookOne(t.url, a.liveKey, { BillingReference: "PREC-Y" }),
      await bookOne(t.url, a.liveKey, { BillingReference: "PREC-Z" })
    ]
    const first = async (q: Record<string, string>) =>
      onlyOrder(await lookup({ ...q, key: a.liveKey })).control_no as string
    expect(
      await first({ search_field: "customer_reference", search_value: "PREC-X", id: "PREC-Y", control_no: z })
    ).toBe(x)
    expect(await first({ id: "PREC-Y", control_no: z })).toBe(y)
    expect(await first({ control_no: z })).toBe(z)
    // The same through a form POST.
    const form = await lookupForm({ id: "PREC-Y", control_no: z, key: a.liveKey })
    expect(onlyOrder(form).control_no).toBe(y)
  })

  it("limits: 100 values, 4,096 characters, 100 matching orders, 23-character references (400, never truncated)", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const filler = (n: number) => Array.from({ length: n }, (_, i) => String(90_000_000 + i))
    const ok100 = await lookup({ control_no: [...filler(99), trackNo].join(","), key: a.liveKey })
    expect(onlyOrder(ok100).control_no).toBe(trackNo)
    const over = await lookup({ control_no: [...filler(100), trackNo].join(","), key: a.liveKey })
    expect([over.status, over.text]).toEqual([400, envelope("At most 100 values may be looked up at once.")])

    const long = `${trackNo},${" ".repeat(4096 - trackNo.length - 1)}`
    expect(long.length).toBe(4096)
    expect(onlyOrder(await lookup({ control_no: long, key: a.liveKey })).control_no).toBe(trackNo)
    const tooLong = await lookup({ control_no: `${long} `, key: a.liveKey })
    expect([tooLong.status, tooLong.text]).toEqual([400, envelope("The lookup is longer than 4096 characters.")])

    const ref23 = "R".repeat(23)
    const withRef = await bookOne(t.url, a.liveKey, { BillingReference: ref23 })
    const found = await lookup({ search_field: "customer_reference", search_value: ref23, key: a.liveKey })
    expect(onlyOrder(found).control_no).toBe(withRef)
    for (const q of [
      { search_field: "customer_reference", search_value: `${ref23}R` },
      { search_field: "invoice_no", search_value: `${ref23}R` },
      { id: `${ref23}R` }
    ]) {
      const r = await lookup({ ...q, key: a.liveKey })
      expect([r.status, r.text]).toEqual([
        400,
        envelope("Customer references and invoice numbers are at most 23 characters.")
      ])
    }

    // 101 orders share one reference: rejected whole; 100 are answered.
    const c = await t.newAccount("Bulk")
    const book = async (n: number) => {
      const r = await postJson(
        `${t.url}/api/v1/order/json/`,
        { data: { shipments: Array.from({ length: n }, () => shipment({ BillingReference: "BULK-REF" })) } },
        { authorization: `Bearer ${c.liveKey}` }
      )
      expect(r.body.data.shipments_with_errors).toBe(0)
    }
    await book(100)
    const hundred = await lookup({ search_field: "customer_reference", search_value: "BULK-REF", key: c.liveKey })
    expect(hundred.body.data.orders).toHaveLength(100)
    await book(1)
    const tooMany = await lookup({ search_field: "customer_reference", search_value: "BULK-REF", key: c.liveKey })
    expect([tooMany.status, tooMany.text]).toEqual([400, envelope("More than 100 orders match; narrow the lookup.")])
  })

  it("answers 400 for a missing lookup, an unsupported search field and repeated parameters", async () => {
    const cases: Array<[Record<string, string | Array<string>>, string]> = [
      [{}, "A lookup is required: control_no, search_field with search_value, or id."],
      [{ control_no: " , ," }, "A lookup is required: control_no, search_field with search_value, or id."],
      [
        { search_field: "tracking", search_value: "1" },
        "search_field must be one of control_no, customer_reference, invoice_no."
      ],
      [
        { search_value: "1" },
        "search_field is required with search_value (control_no, customer_reference, invoice_no)."
      ],
      [{ control_no: ["12345678", "12345679"] }, "The parameter control_no was given more than once."]
    ]
    for (const [q, message] of cases) {
      const r = await lookup({ ...q, key: a.liveKey })
      expect([r.status, r.text], JSON.stringify(q)).toEqual([400, envelope(message)])
      expect(r.headers.get("cache-control")).toBe("no-store")
    }
  })

  it("unknown and unauthorized orders give the same No records found. envelope, byte for byte", async () => {
    const mine = await bookOne(t.url, a.liveKey, { BillingReference: "SECRET-REF" })
    await addPdf(mine)
    const unknown = await lookup({ control_no: "99999999", key: b.liveKey })
    const foreign = await lookup({ control_no: mine, key: b.liveKey })
    const foreignRef = await lookup({ search_field: "customer_reference", search_value: "SECRET-REF", key: b.liveKey })
    for (const r of [unknown, foreign, foreignRef]) {
      expect(r.status).toBe(200)
      expect(r.text).toBe(NO_RECORDS)
      // `date`, the request id and the key's remaining request count (`ratelimit`) change per request; neither
      // says anything about the order. Every other header, and the body, must be identical.
      const same = ([k]: [string, string]) => k !== "date" && k !== "ratelimit" && k !== "x-request-id"
      expect([...r.headers.entries()].filter(same)).toEqual([...unknown.headers.entries()].filter(same))
    }
    // Mixed: only the authorized order is answered, the other is simply absent.
    const theirs = await bookOne(t.url, b.liveKey)
    const mixed = await lookup({ control_no: `${mine},${theirs}`, key: b.liveKey })
    expect(onlyOrder(mixed).control_no).toBe(theirs)
  })

  it("linked accounts: a parent reads its child's documents, not the other way round", async () => {
    const parent = await t.newAccount("Parent")
    const child = await t.newAccount("Child")
    await t.run(Accounts.linkAccounts(parent.customerNo, child.customerNo))
    const childOrder = await bookOne(t.url, child.liveKey)
    const parentOrder = await bookOne(t.url, parent.liveKey)
    await addPdf(childOrder)
    expect(onlyOrder(await lookup({ control_no: childOrder, key: parent.liveKey })).documents).toHaveLength(1)
    expect((await lookup({ control_no: parentOrder, key: child.liveKey })).text).toBe(NO_RECORDS)
  })

  it("credentials: Bearer first, then form key, then query key/apikey/token; test keys read real documents", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    await addPdf(trackNo)
    const ok = (r: Answer) => expect(onlyOrder(r).documents).toHaveLength(1)
    ok(await lookup({ control_no: trackNo }, { authorization: `Bearer ${a.liveKey}` }))
    ok(await lookup({ control_no: trackNo }, { authorization: `Bearer ${a.testKey}` }))
    ok(await lookup({ control_no: trackNo, key: a.testKey }))
    ok(await lookup({ control_no: trackNo, apikey: a.liveKey }))
    ok(await lookup({ control_no: trackNo, token: a.liveKey }))
    ok(await lookupForm({ control_no: trackNo, key: a.liveKey }))
    // The form key wins over a query key; the header wins over both and never falls back.
    ok(await lookupForm({ control_no: trackNo, key: a.liveKey }, `?key=${b.liveKey}`))
    const header = await lookup({ control_no: trackNo, key: a.liveKey }, { authorization: `Bearer ${b.liveKey}` })
    expect(header.text).toBe(NO_RECORDS)
    const badHeader = await lookup({ control_no: trackNo, key: a.liveKey }, { authorization: "Basic abc" })
    expect([badHeader.status, badHeader.text]).toEqual([200, envelope("Access denied.")])
    // key before apikey before token.
    ok(await lookup({ control_no: trackNo, key: a.liveKey, apikey: b.liveKey, token: b.liveKey }))
    ok(await lookup({ control_no: trackNo, apikey: a.liveKey, token: b.liveKey }))

    const missing = await lookup({ control_no: trackNo })
    expect([missing.status, missing.text]).toEqual([200, envelope("You did not provide an access token.")])
    const unknown = await lookup({ control_no: trackNo, key: "wb_live_unknown" })
    expect([unknown.status, unknown.text]).toEqual([200, envelope("Access denied.")])
    const twice = await lookup({ control_no: trackNo, key: [a.liveKey, a.liveKey] })
    expect([twice.status, twice.text]).toEqual([400, envelope("The API key was given more than once.")])

    const d = await t.newAccount("Disabled")
    const dOrder = await bookOne(t.url, d.liveKey)
    await t.run(Accounts.setKeyStatus(d.customerNo, "test", "disabled"))
    const disabled = await lookup({ control_no: dOrder, key: d.testKey })
    expect([disabled.status, disabled.text]).toEqual([200, envelope("Access denied.")])
    expect(onlyOrder(await lookup({ control_no: dOrder, key: d.liveKey })).control_no).toBe(dOrder)
  })

  it("refuses raw JSON bodies (400, as 7.2 allows) and methods other than GET and POST (405)", async () => {
    const json = await answer(
      await fetch(`${t.url}${DOCS}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ control_no: "12345678", key: a.liveKey })
      })
    )
    expect([json.status, json.text]).toEqual([
      400,
      envelope("Send the parameters as a urlencoded form or in the query string.")
    ])
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      const r = await answer(await fetch(`${t.url}${DOCS}?control_no=1&key=${a.liveKey}`, { method }))
      expect(r.status, method).toBe(405)
      expect(r.headers.get("allow")).toBe("GET, POST")
    }
  })

  it("a blocked IP gets 403 on both endpoints", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    await addPdf(trackNo)
    const uri = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "bol")
    await t.run(IpBlocks.block("127.0.0.1", 3_600_000, "test"))
    try {
      const r = await lookup({ control_no: trackNo, key: a.liveKey })
      expect([r.status, r.text]).toEqual([403, envelope("IP address is blocked")])
      const d = await download(uri)
      expect(d.status).toBe(403)
      expect(new TextDecoder().decode(d.bytes)).toBe("IP address is blocked\n")
    } finally {
      await t.run(IpBlocks.unblock("127.0.0.1"))
    }
    expect((await download(uri)).status).toBe(200)
  })
})

describe("document rules (interface 2.4)", () => {
  it("hidden and removed documents are excluded; a hidden latest signature does not bring back an older one", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const kept = await addPdf(trackNo, { sourceId: "KEPT" })
    const hidden = await addPdf(trackNo, { sourceId: "HIDDEN" })
    const removed = await addPdf(trackNo, { sourceId: "REMOVED" })
    await t.run(Documents.setVisibility(hidden.id, "hide"))
    await t.run(Documents.setVisibility(removed.id, "remove"))
    const png = await twoToneImage("png")
    await t.run(Documents.addSignature({ trackNo, name: "Old Signer", bytes: png, capturedAt: Date.now() - 60_000 }))
    const latest = await t.run(Documents.addSignature({ trackNo, name: "New Signer", bytes: png }))
    const ids = async () =>
      onlyOrder(await lookup({ control_no: trackNo, key: a.liveKey })).documents.map((d: { id: string }) => d.id)
    expect(await ids()).toEqual(["KEPT", "New Signer"])
    await t.run(Documents.setVisibility(latest.id, "hide"))
    expect(await ids()).toEqual(["KEPT"])
    await t.run(Documents.setVisibility(latest.id, "unhide"))
    expect(await ids()).toEqual(["KEPT", "New Signer"])
    // Removal is for good.
    const again = await t.run(Effect.either(Documents.setVisibility(removed.id, "unhide")))
    expect(again._tag).toBe("Left")
    expect(await ids()).toEqual(["KEPT", "New Signer"])
    expect(kept.kind).toBe("attachment")
  })

  it("a new order version shows only its own batches, plus the latest signature of any version", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    await addPdf(trackNo, { sourceId: "V1-BOL" })
    await t.run(Documents.addSignature({ trackNo, name: "V1 Signer", bytes: await twoToneImage("png") }))
    expect(await t.run(Documents.newOrderVersion(trackNo))).toBe(2)
    const afterBump = onlyOrder(await lookup({ control_no: trackNo, key: a.liveKey }))
    expect(afterBump.documents.map((d: { id: string }) => d.id)).toEqual(["V1 Signer"])
    await addPdf(trackNo, { sourceId: "V2-BOL" })
    const v2 = onlyOrder(await lookup({ control_no: trackNo, key: a.liveKey }))
    expect(v2.documents.map((d: { id: string; page: string }) => [d.id, d.page])).toEqual([
      ["V2-BOL", "1"],
      ["V1 Signer", "1"]
    ])
  })

  it("adding a document appends document.available", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    await addPdf(trackNo)
    const events = await t.run(Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo)))
    expect(events.map((e) => e.type)).toEqual(["shipment.booked", "document.available"])
    expect(events[1]!.data).toMatchObject({ track_no: trackNo, document_type: "bol", batch: 1, page: 1 })
    expect(events[1]!.sequence).toBe(2)
  })
})

describe("GET|HEAD /api/v1/order/docs/download/", () => {
  it("streams the file with its type, length and the safety headers; HEAD gives the headers only", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const bytes = pdf("download")
    await t.run(Documents.addDocument({ trackNo, type: "bol", bytes }))
    const uri = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "bol")
    const got = await download(uri)
    expect(got.status).toBe(200)
    expect(got.bytes).toEqual(bytes)
    const expected = {
      "content-type": "application/pdf",
      "content-length": String(bytes.byteLength),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer"
    }
    for (const [k, v] of Object.entries(expected)) expect(got.headers.get(k), k).toBe(v)
    const head = await download(uri, "HEAD")
    expect(head.status).toBe(200)
    expect(head.bytes.byteLength).toBe(0)
    for (const [k, v] of Object.entries(expected)) expect(head.headers.get(k), k).toBe(v)
    // A link works again until it expires (it is a bearer credential for that one document).
    expect((await download(uri)).status).toBe(200)
  })

  it("applies the saved rotation to images (PNG 90, JPEG 180, GIF 270, TIFF 90)", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const cases = [
      ["png", 90, "image/png"],
      ["jpeg", 180, "image/jpeg"],
      ["gif", 270, "image/gif"],
      ["tiff", 90, "image/tiff"]
    ] as const
    for (const [format, rotation] of cases) {
      await t.run(
        Documents.addDocument({ trackNo, type: `photo-${format}`, bytes: await twoToneImage(format), rotation })
      )
    }
    await t.run(Documents.addDocument({ trackNo, type: "photo-plain", bytes: await twoToneImage("png") }))
    const r = await lookup({ control_no: trackNo, key: a.liveKey })
    for (const [format, rotation, type] of cases) {
      const got = await download(uriOf(r, `photo-${format}`))
      expect(got.status).toBe(200)
      expect(got.headers.get("content-type")).toBe(type)
      expect(got.headers.get("content-length")).toBe(String(got.bytes.byteLength))
      const image = await decode(got.bytes)
      // The original is 40x20, red on the left, blue on the right.
      if (rotation === 180) {
        expect([image.width, image.height]).toEqual([40, 20])
        expect(near(image.at(2, 10), BLUE), format).toBe(true)
        expect(near(image.at(37, 10), RED), format).toBe(true)
      } else {
        expect([image.width, image.height]).toEqual([20, 40])
        // Clockwise 90: the left (red) half ends on top; 270: at the bottom.
        const [top, bottom] = rotation === 90 ? [RED, BLUE] : [BLUE, RED]
        expect(near(image.at(10, 2), top), `${format} top`).toBe(true)
        expect(near(image.at(10, 37), bottom), `${format} bottom`).toBe(true)
      }
      const head = await download(uriOf(r, `photo-${format}`), "HEAD")
      expect(head.headers.get("content-length")).toBe(String(got.bytes.byteLength))
    }
    const plain = await decode((await download(uriOf(r, "photo-plain"))).bytes)
    expect([plain.width, plain.height]).toEqual([40, 20])
    expect(near(plain.at(2, 10), RED)).toBe(true)
  })

  it("turns an image once: later downloads and HEADs reuse the kept rendition; a new file gets a new one", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    // Files are content-addressed, and so are their renditions: bytes of their own (the order
    // in their metadata) so no other test has turned them yet.
    const unique = async (format: "png" | "jpeg") =>
      new Uint8Array(
        await sharp(await twoToneImage(format))
          .withExif({ IFD0: { ImageDescription: `order ${trackNo}` } })
          .toFormat(format)
          .toBuffer()
      )
    const photo = await t.run(
      Documents.addDocument({ trackNo, type: "photo", bytes: await unique("png"), rotation: 90 })
    )
    // The host's sharp transform, counting its calls.
    let turns = 0
    const counting = Layer.succeed(ImageTransform, {
      rotate: (bytes, degrees, contentType) =>
        Effect.zipRight(
          Effect.sync(() => turns++),
          ImageSharp.service.rotate(bytes, degrees, contentType)
        )
    })
    const ticketOf = (uri: string) => new URL(uri).searchParams.get("ticket")!
    const fetchFile = async (uri: string, head = false) => {
      const file = await t.run(
        Documents.download({ client: Option.none(), ticket: [ticketOf(uri)], head }).pipe(Effect.provide(counting))
      )
      const body = file.body
      const bytes =
        body === undefined
          ? undefined
          : body instanceof Uint8Array
            ? body
            : new Uint8Array(await new Response(body).arrayBuffer())
      return { size: file.size, bytes }
    }

    const uri = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "photo")
    const first = await fetchFile(uri)
    expect(turns).toBe(1)
    const second = await fetchFile(uri)
    expect(turns).toBe(1)
    expect(second.bytes).toEqual(first.bytes)
    expect(second.size).toBe(first.bytes!.byteLength)
    expect(await fetchFile(uri, true)).toEqual({ size: first.size, bytes: undefined })
    expect(turns).toBe(1)
    const image = await decode(second.bytes!)
    expect([image.width, image.height]).toEqual([20, 40])
    expect(near(image.at(10, 2), RED)).toBe(true)
    // Through the server too (its own sharp transform): the kept file, with its length.
    const served = await download(uri)
    expect(served.status).toBe(200)
    expect(served.bytes).toEqual(first.bytes)
    expect(served.headers.get("content-length")).toBe(String(first.size))

    // A new document version with another file: a new rendition, made once again.
    await t.run(Documents.replaceDocument(photo.id, await unique("jpeg")))
    const fresh = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "photo")
    const head = await fetchFile(fresh, true)
    expect(turns).toBe(2)
    const replaced = await fetchFile(fresh)
    expect(turns).toBe(2)
    expect(replaced.size).toBe(head.size)
    expect(replaced.bytes).not.toEqual(first.bytes)
    const turned = await decode(replaced.bytes!)
    expect([...replaced.bytes!.subarray(0, 2)]).toEqual([0xff, 0xd8]) // a JPEG, like its new file
    expect([turned.width, turned.height]).toEqual([20, 40])
    expect(near(turned.at(10, 2), RED)).toBe(true)
    expect(near(turned.at(10, 37), BLUE)).toBe(true)
  })

  /** A fresh order with one PDF and its download uri, for one revocation case. */
  const freshLink = async (account: TestAccount = a) => {
    const trackNo = await bookOne(t.url, account.liveKey)
    const doc = await addPdf(trackNo)
    const uri = uriOf(await lookup({ control_no: trackNo, key: account.liveKey }), "bol")
    expect((await download(uri)).status).toBe(200)
    return { trackNo, doc, uri }
  }

  const expectText = async (uri: string, status: number, message: string) => {
    for (const method of ["GET", "HEAD"]) {
      const got = await download(uri, method)
      expect(got.status, method).toBe(status)
      expect(got.headers.get("content-type")).toBe("text/plain; charset=utf-8")
      expect(got.headers.get("cache-control")).toBe("no-store")
      if (method === "GET") expect(new TextDecoder().decode(got.bytes)).toBe(`${message}\n`)
    }
  }
  const REJECTED = "The download link is invalid or has expired. Request fresh links from /api/v1/order/docs/."
  const GONE = "The document is no longer available."

  it("a link used from outside the account's IP allowlist is lost access (403)", async () => {
    const owner = await t.newAccount("Allowlisted")
    const { uri } = await freshLink(owner)
    await t.run(Accounts.updateAccount(owner.customerNo, { ipAllowlist: ["203.0.113.0/24"] }))
    await expectText(uri, 403, REJECTED)
    await t.run(Accounts.updateAccount(owner.customerNo, { ipAllowlist: [] }))
    expect((await download(uri)).status).toBe(200)
  })

  it("hiding, removing, unhiding or replacing the document kills the link for good", async () => {
    const hidden = await freshLink()
    await t.run(Documents.setVisibility(hidden.doc.id, "hide"))
    await expectText(hidden.uri, 404, GONE)
    await t.run(Documents.setVisibility(hidden.doc.id, "unhide"))
    await expectText(hidden.uri, 404, GONE)
    expect((await download(uriOf(await lookup({ control_no: hidden.trackNo, key: a.liveKey }), "bol"))).status).toBe(
      200
    )

    const removed = await freshLink()
    await t.run(Documents.setVisibility(removed.doc.id, "remove"))
    await expectText(removed.uri, 404, GONE)

    const replaced = await freshLink()
    const newer = pdf("replacement")
    await t.run(Documents.replaceDocument(replaced.doc.id, newer))
    await expectText(replaced.uri, 404, GONE)
    const fresh = await download(uriOf(await lookup({ control_no: replaced.trackNo, key: a.liveKey }), "bol"))
    expect(fresh.bytes).toEqual(newer)
  })

  it("a later captured signature kills links to the one it replaced", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    await t.run(Documents.addSignature({ trackNo, name: "First", bytes: pdf("s1"), capturedAt: Date.now() - 60_000 }))
    const first = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "signature")
    expect((await download(first)).status).toBe(200)
    await t.run(Documents.addSignature({ trackNo, name: "Second", bytes: pdf("s2"), capturedAt: Date.now() }))
    // The first signature was not hidden, removed or changed: only the rule says it is no longer shown.
    await expectText(first, 404, GONE)
  })

  it("a disabled key's link is refused even if its generation was not bumped (status is checked too)", async () => {
    const c = await t.newAccount("Status")
    const link = await freshLink(c)
    const key = await t.run(Effect.flatMap(AccountStore, (s) => s.findKey(c.customerNo, "live")))
    if (key._tag === "None") throw new Error("no live key")
    // Written straight to storage (as another tool or an older version might): disabled, same generation.
    await t.run(Effect.flatMap(AccountStore, (s) => s.putKey({ ...key.value, status: "disabled" })))
    await expectText(link.uri, 403, REJECTED)
    await t.run(Effect.flatMap(AccountStore, (s) => s.putKey(key.value)))
    expect((await download(link.uri)).status).toBe(200)
  })

  it("replacing the order version kills links to its attachments", async () => {
    const link = await freshLink()
    await t.run(Documents.newOrderVersion(link.trackNo))
    await expectText(link.uri, 404, GONE)
  })

  it("rotating or disabling the key kills the link for good, even when the key works again", async () => {
    const c = await t.newAccount("Keys")
    const rotated = await freshLink(c)
    const rotation = await t.run(Accounts.rotateKey(c.customerNo, "live"))
    await expectText(rotated.uri, 403, REJECTED)
    const newKey = Redacted.value(rotation.key)
    const fresh = uriOf(await lookup({ control_no: rotated.trackNo, key: newKey }), "bol")
    expect((await download(fresh)).status).toBe(200)

    await t.run(Accounts.setKeyStatus(c.customerNo, "live", "disabled"))
    await expectText(fresh, 403, REJECTED)
    await t.run(Accounts.setKeyStatus(c.customerNo, "live", "active"))
    await expectText(fresh, 403, REJECTED)
    expect((await download(uriOf(await lookup({ control_no: rotated.trackNo, key: newKey }), "bol"))).status).toBe(200)
  })

  it("losing the account link kills a parent's links to the child's documents", async () => {
    const parent = await t.newAccount("P2")
    const child = await t.newAccount("C2")
    await t.run(Accounts.linkAccounts(parent.customerNo, child.customerNo))
    const trackNo = await bookOne(t.url, child.liveKey)
    await addPdf(trackNo)
    const uri = uriOf(await lookup({ control_no: trackNo, key: parent.liveKey }), "bol")
    expect((await download(uri)).status).toBe(200)
    await t.run(Effect.flatMap(AccountStore, (s) => s.unlinkAccount(parent.customerNo, child.customerNo)))
    await expectText(uri, 404, GONE)
  })

  it("expires 15 minutes after issue (controlled clock)", async () => {
    // Time stands still from the issue on, so 14:59 is 14:59 however slow the machine is.
    time.frozenAt = Date.now()
    try {
      const link = await freshLink()
      time.offsetMs = 14 * 60_000 + 59_999
      expect((await download(link.uri)).status).toBe(200)
      time.offsetMs = 15 * 60_000
      await expectText(link.uri, 403, REJECTED)
      time.offsetMs = 0
      expect((await download(link.uri)).status).toBe(200)
    } finally {
      time.offsetMs = 0
      time.frozenAt = undefined
    }
  })

  it("tampered, truncated, extended, missing, repeated and foreign-account tickets are refused", async () => {
    const link = await freshLink()
    const ticket = new URL(link.uri).searchParams.get("ticket")!
    const base = `${t.url}/api/v1/order/docs/download/`
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
    for (const bad of [
      flip(ticket, 0),
      flip(ticket, 5),
      flip(ticket, Math.floor(ticket.length / 2)),
      flip(ticket, ticket.length - 1),
      ticket.slice(0, -1),
      ticket.slice(0, -4),
      ticket.slice(0, 20),
      `${ticket}A`,
      `${ticket}AAAA`,
      "",
      "%00",
      "a".repeat(5000)
    ]) {
      await expectText(`${base}?ticket=${bad}`, 403, REJECTED)
    }
    await expectText(base, 403, REJECTED)
    await expectText(`${base}?ticket=${ticket}&ticket=${ticket}`, 403, REJECTED)

    // Another account's ticket opens only that account's own document, nothing else.
    const theirs = await freshLink(b)
    const got = await download(theirs.uri)
    expect(got.status).toBe(200)
    expect(got.bytes).toEqual(pdf(theirs.trackNo))
    expect((await lookup({ control_no: link.trackNo, key: b.liveKey })).text).toBe(NO_RECORDS)
  })

  /** Removes a document's file from the host's store (`<db>.blobs`, content-addressed). */
  const removeFile = (dir: string, blobKey: string) =>
    rmSync(join(dir, "waybill.db.blobs", blobKey.slice(0, 2), blobKey))

  it("a downloaded file is kept in memory (--blob-cache-mib): later downloads need no file; with 0, each reads it", async () => {
    const kept = await freshLink() // downloaded once
    removeFile(t.dir, kept.doc.blobKey)
    for (const method of ["GET", "HEAD"]) {
      const again = await download(kept.uri, method)
      expect(again.status, method).toBe(200)
      expect(again.headers.get("content-length")).toBe(String(pdf(kept.trackNo).byteLength))
      expect(again.headers.get("cache-control")).toBe("no-store")
      if (method === "GET") expect(again.bytes).toEqual(pdf(kept.trackNo))
    }
    // What may be downloaded is still decided in the database: a hidden document is gone at once.
    await t.run(Documents.setVisibility(kept.doc.id, "hide"))
    await expectText(kept.uri, 404, GONE)

    const bare = await startHost({ clock, blobCacheBytes: 0 })
    try {
      const account = await bare.newAccount("C")
      const trackNo = await bookOne(bare.url, account.liveKey)
      const doc = await bare.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf(trackNo) }))
      const found = await answer(await fetch(`${bare.url}${DOCS}?control_no=${trackNo}&key=${account.liveKey}`))
      const uri = uriOf(found, "bol")
      expect((await download(uri)).status).toBe(200)
      removeFile(bare.dir, doc.blobKey)
      expect((await download(uri)).status).toBe(404)
    } finally {
      await bare.close()
    }
  })

  it("a missing file is 404; other methods are 405 with Allow, in plain text", async () => {
    // Never downloaded, so never kept in memory (the next case): the file is looked for on disk.
    const trackNo = await bookOne(t.url, a.liveKey)
    const doc = await addPdf(trackNo)
    const uri = uriOf(await lookup({ control_no: trackNo, key: a.liveKey }), "bol")
    removeFile(t.dir, doc.blobKey)
    await expectText(uri, 404, GONE)
    for (const method of ["POST", "PUT", "DELETE"]) {
      const r = await fetch(uri, { method })
      expect(r.status).toBe(405)
      expect(r.headers.get("allow")).toBe("GET, HEAD")
      expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8")
      expect(await r.text()).toBe(`Method ${method} is not allowed here; use GET or HEAD.\n`)
    }
  })
})
