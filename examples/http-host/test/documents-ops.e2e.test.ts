/**
 * Order documents end to end, the parts around the customer API: HTTPS (the host serving TLS
 * itself, plain HTTP refused, trusted proxies), storage failures (503), and the operator ways
 * in (`/ops/v1` and the CLI) calling the same core programs.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Admission, Booking, Credentials, Documents, EventOutbox } from "@waybill/core"
import { openDatabase, waybillLayer } from "../src/host.js"
import { bookOne, OPERATOR_TOKEN, shipment, startHost, type TestAccount, type TestHost } from "./harness.js"
import { decode, hasOpenssl, httpsFetch, pdf, selfSigned, twoToneImage } from "./documentFiles.js"

const envelope = (message: string) => JSON.stringify({ data: null, error: { message, exception: null } })

describe("HTTPS", () => {
  it.skipIf(!hasOpenssl)("the host serves HTTPS itself (--tls-cert/--tls-key); links point back to it", async () => {
    const tls = selfSigned()
    const t = await startHost({ tls })
    try {
      expect(t.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const a = await t.newAccount()
      const booked = await httpsFetch(`${t.url}/api/v1/order/json/`, tls.cert, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${a.liveKey}` },
        body: JSON.stringify({ data: { shipments: [shipment()] } })
      })
      const trackNo = JSON.parse(booked.body.toString()).data.shipments[0].track_no as string
      const bytes = pdf("tls")
      await t.run(Documents.addDocument({ trackNo, type: "bol", bytes }))
      const r = await httpsFetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}`, tls.cert, {
        headers: { authorization: `Bearer ${a.liveKey}` }
      })
      expect(r.status).toBe(200)
      const uri = JSON.parse(r.body.toString()).data.orders[0].documents[0].uri as string
      expect(uri.startsWith(`${t.url}/api/v1/order/docs/download/?ticket=`)).toBe(true)
      const file = await httpsFetch(uri, tls.cert)
      expect(file.status).toBe(200)
      expect(new Uint8Array(file.body)).toEqual(bytes)
    } finally {
      await t.close()
    }
  })

  it("plain HTTP is refused with 400 unless a trusted proxy says X-Forwarded-Proto: https", async () => {
    const direct = await startHost({ allowInsecureHttp: false })
    const proxied = await startHost({ allowInsecureHttp: false, trustedProxies: ["127.0.0.0/8"] })
    try {
      for (const t of [direct, proxied]) {
        const a = await t.newAccount()
        const trackNo = await bookOne(t.url, a.liveKey)
        const get = (headers: Record<string, string> = {}) =>
          fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`, { headers })
        const plain = await get()
        expect([plain.status, await plain.text()]).toEqual([400, envelope("HTTPS is required.")])
        expect(plain.headers.get("cache-control")).toBe("no-store")
        const claimed = await get({ "x-forwarded-proto": "https" })
        if (t === direct) {
          // Anyone can send the header: only a trusted proxy's is believed.
          expect([claimed.status, await claimed.text()]).toEqual([400, envelope("HTTPS is required.")])
        } else {
          const body = (await claimed.json()) as { data: { orders: Array<{ control_no: string }> } }
          expect(claimed.status).toBe(200)
          expect(body.data.orders[0]!.control_no).toBe(trackNo)
          // The proxy next to us wrote the last value.
          const chained = await get({ "x-forwarded-proto": "https, http" })
          expect(chained.status).toBe(400)
          // The links carry the public scheme.
          await t.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf() }))
          const withDoc = (await (await get({ "x-forwarded-proto": "https" })).json()) as any
          expect(withDoc.data.orders[0].documents[0].uri).toMatch(
            /^https:\/\/127\.0\.0\.1:\d+\/api\/v1\/order\/docs\/download\//
          )
        }
      }
    } finally {
      await direct.close()
      await proxied.close()
    }
  })

  it("baseUrl builds the uri", async () => {
    const t = await startHost({ baseUrl: "https://ship.example.com/" })
    try {
      const a = await t.newAccount()
      const trackNo = await bookOne(t.url, a.liveKey)
      await t.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf() }))
      const r = (await (
        await fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`)
      ).json()) as any
      expect(r.data.orders[0].documents[0].uri).toMatch(
        /^https:\/\/ship\.example\.com\/api\/v1\/order\/docs\/download\/\?ticket=[A-Za-z0-9_-]+$/
      )
    } finally {
      await t.close()
    }
  })
})

describe("storage trouble", () => {
  it("a failing store gives 503: JSON envelope with Retry-After on metadata, plain text on download", async () => {
    const t = await startHost()
    try {
      const a = await t.newAccount()
      const trackNo = await bookOne(t.url, a.liveKey)
      await t.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf() }))
      const ok = (await (
        await fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`)
      ).json()) as any
      const uri = ok.data.orders[0].documents[0].uri as string
      await t.host.database.db.schema.dropTable("waybill_documents").execute()
      const meta = await fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`)
      expect(meta.status).toBe(503)
      expect(meta.headers.get("retry-after")).toBe("5")
      expect(await meta.text()).toBe(envelope("The service is temporarily unavailable. Retry with backoff."))
      const file = await fetch(uri)
      expect(file.status).toBe(503)
      expect(file.headers.get("content-type")).toBe("text/plain; charset=utf-8")
      expect(await file.text()).toBe(
        "The document is temporarily unavailable. Retry later; request fresh links if this one has expired.\n"
      )
    } finally {
      await t.close()
    }
  })
})

describe("/ops/v1 documents", () => {
  let t: TestHost
  let a: TestAccount
  beforeAll(async () => {
    t = await startHost()
    a = await t.newAccount()
  })
  afterAll(() => t.close())

  const opsCall = async (path: string, init: { method?: string; body?: Uint8Array | string; type?: string } = {}) => {
    const r = await fetch(`${t.url}/ops/v1/${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        ...(init.type === undefined ? {} : { "content-type": init.type })
      },
      ...(init.body === undefined ? {} : { body: init.body as BodyInit })
    })
    return { status: r.status, body: (await r.json()) as any }
  }

  it("adds, lists, hides, unhides, replaces and removes documents, adds signatures, sets invoices and versions", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const png = await twoToneImage("png")
    const added = await opsCall(`orders/${trackNo}/documents/?type=delivered-package&rotation=90&id=CAM-1`, {
      body: png,
      type: "image/png"
    })
    expect(added.status).toBe(201)
    expect(added.body.data).toMatchObject({
      track_no: trackNo,
      kind: "attachment",
      type: "delivered-package",
      order_version: 1,
      batch: 1,
      page: 1,
      source_id: "CAM-1",
      content_type: "image/png",
      rotation: 90,
      version: 1,
      hidden: false
    })
    const id = added.body.data.id as string
    const second = await opsCall(`orders/${trackNo}/documents/?type=delivered-package&batch=1`, { body: png })
    expect(second.body.data).toMatchObject({ batch: 1, page: 2 })
    expect((await opsCall(`orders/${trackNo}/signature/?name=Rita`, { body: png })).status).toBe(201)
    expect(
      (await opsCall(`orders/${trackNo}/invoice/`, { body: '{"invoice":"INV-OPS-1"}', type: "application/json" })).body
        .data
    ).toEqual({
      track_no: trackNo,
      invoice: "INV-OPS-1"
    })

    const customerView = async () =>
      (
        (await (
          await fetch(`${t.url}/api/v1/order/docs/?search_field=invoice_no&search_value=INV-OPS-1&key=${a.liveKey}`)
        ).json()) as any
      ).data.orders[0]
    expect((await customerView()).documents.map((d: any) => [d.type, d.page, d.id])).toEqual([
      ["delivered-package", "1", "CAM-1"],
      ["delivered-package", "2", second.body.data.id],
      ["signature", "1", "Rita"]
    ])
    // The saved rotation is applied on download.
    const file = await fetch((await customerView()).documents[0].uri)
    const image = await decode(new Uint8Array(await file.arrayBuffer()))
    expect([image.width, image.height]).toEqual([20, 40])

    expect((await opsCall(`documents/${id}/hide/`, { body: "" })).body.data).toMatchObject({ hidden: true, version: 2 })
    expect((await customerView()).documents).toHaveLength(2)
    expect((await opsCall(`documents/${id}/unhide/`, { body: "" })).body.data).toMatchObject({
      hidden: false,
      version: 3
    })
    const replaced = await opsCall(`documents/${id}/replace/`, { body: pdf("ops") })
    expect(replaced.body.data).toMatchObject({ content_type: "application/pdf", version: 4, rotation: 90 })
    expect((await opsCall(`documents/${id}/remove/`, { body: "" })).body.data).toMatchObject({
      removed: true,
      version: 5
    })

    const listed = await opsCall(`orders/${trackNo}/documents/`)
    expect(listed.body.data).toMatchObject({ track_no: trackNo, invoice: "INV-OPS-1", order_version: 1 })
    expect(listed.body.data.data).toHaveLength(3)
    expect(listed.body.data.data.find((d: any) => d.id === id).shown_to_customers).toBe(false)

    expect((await opsCall(`orders/${trackNo}/new-version/`, { body: "" })).body.data).toEqual({
      track_no: trackNo,
      order_version: 2
    })
    expect((await customerView()).documents.map((d: any) => d.type)).toEqual(["signature"])

    const events = await t.run(Effect.flatMap(EventOutbox, (o) => o.listByShipment(trackNo)))
    expect(events.filter((e) => e.type === "document.available")).toHaveLength(4)
  })

  it("shown_to_customers follows the customer rule: an older order version's attachment, a replaced signature", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const old = await opsCall(`orders/${trackNo}/documents/?type=bol`, { body: pdf("v1") })
    expect(old.body.data.shown_to_customers).toBe(true)
    expect((await opsCall(`orders/${trackNo}/new-version/`, { body: "" })).status).toBe(200)
    // Hidden and shown again, replaced: still of version 1, so customers do not see it.
    for (const action of ["hide", "unhide"]) {
      const r = await opsCall(`documents/${old.body.data.id}/${action}/`, { body: "" })
      expect([r.status, r.body.data.shown_to_customers], action).toEqual([200, false])
    }
    const replacedOld = await opsCall(`documents/${old.body.data.id}/replace/`, { body: pdf("v1 again") })
    expect(replacedOld.body.data).toMatchObject({ order_version: 1, shown_to_customers: false })

    // The later capture is the signature customers see, whatever order they were uploaded in.
    const png = await twoToneImage("png")
    const later = await opsCall(`orders/${trackNo}/signature/?name=Later&captured_at=2026-11-20T15:00:00Z`, {
      body: png
    })
    expect(later.body.data.shown_to_customers).toBe(true)
    const earlier = await opsCall(`orders/${trackNo}/signature/?name=Earlier&captured_at=2026-11-20T09:00:00Z`, {
      body: png
    })
    expect(earlier.status).toBe(201)
    expect(earlier.body.data.shown_to_customers).toBe(false)
    for (const action of ["hide", "unhide"]) {
      const r = await opsCall(`documents/${earlier.body.data.id}/${action}/`, { body: "" })
      expect([r.status, r.body.data.shown_to_customers], action).toEqual([200, false])
    }
    expect((await opsCall(`documents/${earlier.body.data.id}/replace/`, { body: pdf() })).body.data).toMatchObject({
      shown_to_customers: false
    })

    // The listing and the customer's lookup agree.
    const listed = await opsCall(`orders/${trackNo}/documents/`)
    const shown = listed.body.data.data.filter((d: any) => d.shown_to_customers).map((d: any) => d.source_id)
    expect(shown).toEqual(["Later"])
    const customer = (await (
      await fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`)
    ).json()) as any
    expect(customer.data.orders[0].documents.map((d: any) => d.id)).toEqual(["Later"])
  })

  it("track with the owner's key lists the documents the lookup shows; other keys and no key see none", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const track = async (key?: string) => {
      const r = await fetch(
        `${t.url}/api/v1/utilities/track/?idx=${trackNo}${key === undefined ? "" : `&key=${encodeURIComponent(key)}`}`
      )
      expect(r.status).toBe(200)
      return ((await r.json()) as any).data
    }
    expect((await track(a.liveKey)).documents).toEqual([])
    const bol = await opsCall(`orders/${trackNo}/documents/?type=bol&id=BOL-77`, { body: pdf("track") })
    expect(bol.status).toBe(201)
    const png = await twoToneImage("png")
    expect((await opsCall(`orders/${trackNo}/signature/?name=Rita`, { body: png })).status).toBe(201)

    const owner = await track(a.liveKey)
    expect(owner.detail).toBe("precise")
    expect(owner.documents).toEqual([
      { type: "bol", page: "1", id: "BOL-77", content_type: "application/pdf" },
      { type: "signature", page: "1", id: "Rita", content_type: "image/png" }
    ])
    // The same list the documents lookup gives, without download links.
    const lookup = (await (
      await fetch(`${t.url}/api/v1/order/docs/?control_no=${trackNo}&key=${a.liveKey}`)
    ).json()) as any
    expect(owner.documents.map((d: any) => [d.type, d.page, d.id])).toEqual(
      lookup.data.orders[0].documents.map((d: any) => [d.type, d.page, d.id])
    )
    expect(JSON.stringify(owner)).not.toContain("ticket=")

    expect((await opsCall(`documents/${bol.body.data.id}/hide/`, { body: "" })).status).toBe(200)
    expect((await track(a.liveKey)).documents.map((d: any) => d.id)).toEqual(["Rita"])

    // Another account's key and no key get the coarse view, which has no documents at all.
    const other = await t.newAccount()
    for (const view of [await track(other.liveKey), await track()]) {
      expect(view.detail).toBe("coarse")
      expect(view).not.toHaveProperty("documents")
      expect(JSON.stringify(view)).not.toContain("Rita")
    }
  })

  it("answers operator errors", async () => {
    const trackNo = await bookOne(t.url, a.liveKey)
    const cases: Array<[string, { body?: Uint8Array | string; method?: string }, number, string]> = [
      ["orders/99999999/documents/?type=bol", { body: pdf() }, 404, "No shipment has this tracking number."],
      [
        `orders/${trackNo}/documents/?type=BOL!`,
        { body: pdf() },
        400,
        "type must be 1 to 32 lowercase letters, digits or '-'."
      ],
      [
        `orders/${trackNo}/documents/?type=bol&rotation=45`,
        { body: pdf() },
        400,
        "rotation must be 0, 90, 180 or 270."
      ],
      [
        `orders/${trackNo}/documents/?type=bol`,
        { body: "<html></html>" },
        400,
        "The file is not a PDF, JPEG, PNG, GIF or TIFF."
      ],
      [`orders/${trackNo}/documents/?type=bol`, { body: "" }, 400, "The file is empty."],
      [`orders/${trackNo}/documents/?type=bol&batch=x`, { body: pdf() }, 400, "batch must be a positive integer."],
      [`orders/${trackNo}/signature/`, { body: pdf() }, 400, "The recipient name must be 1 to 100 characters."],
      [
        `orders/${trackNo}/invoice/`,
        { body: '{"invoice":"A,B"}' },
        400,
        "An invoice number has at most 23 characters and no comma."
      ],
      ["documents/doc_nope/hide/", { body: "" }, 404, "No document has this id."],
      [`orders/${trackNo}/new-version/`, { method: "GET" }, 405, "Method GET is not allowed here."]
    ]
    for (const [path, init, status, message] of cases) {
      const r = await opsCall(path, path.endsWith("invoice/") ? { ...init, type: "application/json" } : init)
      expect([r.status, r.body.error?.message], path).toEqual([status, message])
    }
    const anonymous = await fetch(`${t.url}/ops/v1/orders/${trackNo}/documents/`)
    expect(anonymous.status).toBe(401)
  })
})

describe("pnpm waybill document|signature|order (CLI)", () => {
  const run = promisify(execFile)
  const cli = resolve(import.meta.dirname, "../src/cli.ts")
  let dir: string
  let db: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "waybill-cli-docs-"))
    db = join(dir, "cli.db")
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const waybill = async (...args: Array<string>) => {
    try {
      const { stdout } = await run(process.execPath, ["--import", "tsx", cli, ...args, "--db", db], {
        cwd: resolve(import.meta.dirname, "..")
      })
      return { code: 0, stdout }
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string }
      return { code: err.code, stdout: err.stdout + err.stderr }
    }
  }
  const json = async (...args: Array<string>) => {
    const r = await waybill(...args, "--json")
    return { code: r.code, out: JSON.parse(r.stdout.trim().split("\n").at(-1)!) }
  }

  it("adds (printing the id), lists, hides, unhides, replaces, removes; signatures, versions, invoices", async () => {
    const created = await json("account", "create", "--name", "Docs CLI")
    const database = await openDatabase(db)
    const booked = await Effect.runPromise(
      Admission.admit({
        client: Option.none(),
        resolution: Credentials.fromAuthorization(`Bearer ${created.out.live_key}`)
      }).pipe(
        Effect.flatMap((principal) =>
          Booking.createShipments({ principal, body: { data: { shipments: [shipment()] } } })
        ),
        Effect.provide(waybillLayer(database.engine, { dbFile: db }))
      )
    )
    await database.close()
    const trackNo = booked.shipments[0]!.track_no
    const pdfFile = join(dir, "bol.pdf")
    writeFileSync(pdfFile, pdf("cli"))
    const pngFile = join(dir, "photo.png")
    writeFileSync(pngFile, await twoToneImage("png"))

    const human = await waybill("document", "add", trackNo, "--type", "bol", "--file", pdfFile, "--id", "BOL-9")
    expect(human.code).toBe(0)
    expect(human.stdout.trim()).toMatch(/^doc_[0-9A-Z]{26}$/)
    const id = human.stdout.trim()
    const photo = await json(
      "document",
      "add",
      trackNo,
      "--type",
      "pickedup-package",
      "--file",
      pngFile,
      "--rotation",
      "180",
      "--batch",
      "1"
    )
    expect(photo.out).toMatchObject({ batch: 1, page: 2, rotation: 180, content_type: "image/png" })
    expect((await json("signature", "add", trackNo, "--name", "Sam Signer", "--file", pngFile)).out).toMatchObject({
      kind: "signature",
      source_id: "Sam Signer"
    })
    expect((await json("document", "hide", id)).out).toMatchObject({ id, hidden: true })
    expect((await json("document", "unhide", id)).out).toMatchObject({ id, hidden: false })
    expect((await json("document", "replace", photo.out.id, "--file", pdfFile)).out).toMatchObject({
      content_type: "application/pdf"
    })
    expect((await json("document", "remove", id)).out).toMatchObject({ removed: true })
    expect((await json("order", "set-invoice", trackNo, "INV-CLI-1")).out).toEqual({
      track_no: trackNo,
      invoice: "INV-CLI-1"
    })
    expect((await json("order", "new-version", trackNo)).out).toEqual({ track_no: trackNo, order_version: 2 })
    const listed = await json("document", "list", trackNo)
    expect(listed.out).toMatchObject({ invoice: "INV-CLI-1", order_version: 2 })
    // Newest first: the signature, the photo, the BOL (removed).
    expect(listed.out.data.map((d: any) => [d.kind, d.shown_to_customers])).toEqual([
      ["signature", true],
      ["attachment", false],
      ["attachment", false]
    ])
    const first = await json("document", "list", trackNo, "--limit", "2")
    expect([first.out.data.length, first.out.has_more]).toEqual([2, true])
    const rest = await json(
      "document",
      "list",
      trackNo,
      "--limit",
      "2",
      "--starting-after",
      first.out.next_starting_after
    )
    expect([rest.out.data.map((d: any) => d.id), rest.out.has_more]).toEqual([[id], false])

    const missing = await json("document", "hide", "doc_missing")
    expect([missing.code, missing.out.error]).toEqual([1, "no document doc_missing"])
    const bad = await json("document", "add", trackNo, "--type", "bol", "--file", join(dir, "absent.pdf"))
    expect(bad.code).toBe(2)
  }, 120_000)
})
