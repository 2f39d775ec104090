/**
 * `@waybill/client` against the real example host: booking, the documents lookup, the download,
 * cancel and track, typed refusals, and an `Idempotency-Key` at work (a booking whose answer was
 * lost is retried and replayed: one shipment, one tracking number). Then docs/client.md's example
 * file, checked to be the page's code block and run as the page says.
 *
 * Every answer the client receives also passes the OpenAPI check of ./setup.ts: the client reads
 * `globalThis.fetch` at each call, which that check wraps.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import Database from "better-sqlite3"
import { type ShipmentInput, WaybillApiError, WaybillClient, WaybillNetworkError } from "@waybill/client"
import { pdf } from "./documentFiles.js"
import { OPERATOR_TOKEN, shipment, startHost, type TestAccount, type TestHost, waitFor } from "./harness.js"

let t: TestHost
let a: TestAccount
let waybill: WaybillClient

beforeAll(async () => {
  t = await startHost()
  a = await t.newAccount("Client user")
  waybill = new WaybillClient({ baseUrl: t.url, apiKey: a.liveKey })
})
afterAll(() => t.close())

/** Adds a PDF page to an order through the operator API, as a courier's system would. */
const attachPdf = async (trackNo: string, bytes: Uint8Array, type = "bol") => {
  const response = await fetch(`${t.url}/ops/v1/orders/${trackNo}/documents/?type=${type}&id=SRC-1`, {
    method: "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/octet-stream" },
    body: bytes as BodyInit
  })
  expect(response.status, await response.clone().text()).toBe(201)
}

const book = async (client: WaybillClient = waybill, options: Parameters<WaybillClient["createShipments"]>[1] = {}) => {
  const booked = await client.createShipments([shipment() as ShipmentInput], options)
  expect(booked.shipments[0]).toMatchObject({ result: "success", errors: [] })
  return booked.shipments[0]!.track_no
}

/** How many shipments the account has in the host's database (its own view, not the API's). */
const storedCount = () => {
  const sqlite = new Database(join(t.dir, "waybill.db"), { readonly: true })
  try {
    const row = sqlite.prepare("select count(*) as n from waybill_shipments where customer_no = ?").get(a.customerNo)
    return (row as { n: number }).n
  } finally {
    sqlite.close()
  }
}

describe("@waybill/client against the example host", () => {
  it("books, finds the documents, downloads one, tracks and cancels", async () => {
    const trackNo = await book()
    expect(trackNo).toMatch(/^\d+$/)

    const empty = await waybill.documents({ control_no: trackNo })
    expect(empty.orders).toEqual([expect.objectContaining({ control_no: trackNo, documents: [] })])

    const file = pdf("client e2e")
    await attachPdf(trackNo, file)
    const found = await waybill.documents({ control_no: trackNo })
    const document = found.orders[0]!.documents[0]!
    expect(document).toMatchObject({ type: "bol", page: "1", id: "SRC-1" })

    const download = await waybill.download(document)
    expect(download.contentType).toBe("application/pdf")
    expect(await download.bytes()).toEqual(file)

    const tracked = await waybill.track(trackNo)
    expect(tracked).toMatchObject({ track_no: trackNo, detail: "precise", status: "booked" })

    await expect(waybill.cancel(trackNo)).resolves.toMatchObject({ result: "success" })
    await expect(waybill.track(trackNo)).resolves.toMatchObject({ status: "canceled" })
  })

  it("a booking whose answer was lost is retried with its key and replayed: one shipment, one number", async () => {
    const before = storedCount()
    const answers: Array<{ status: number; replayed: string | null; body: string }> = []
    let dropped = 0
    // The first answer is received by the host's client side and then lost, as a dropped
    // connection would lose it; the retry goes out with the same key and the same bytes.
    const losingFetch = async (request: Request) => {
      const response = await globalThis.fetch(request)
      const body = await response.clone().text()
      answers.push({ status: response.status, replayed: response.headers.get("idempotent-replayed"), body })
      if (dropped++ === 0) throw new TypeError("fetch failed: connection reset")
      return response
    }
    const client = new WaybillClient({ baseUrl: t.url, apiKey: a.liveKey, fetch: losingFetch, sleep: async () => {} })
    const trackNo = await book(client)

    expect(answers).toHaveLength(2)
    expect(answers[1]!.replayed).toBe("true")
    expect(answers[1]!.body).toBe(answers[0]!.body)
    expect(JSON.parse(answers[0]!.body).data.shipments[0].track_no).toBe(trackNo)
    expect(storedCount()).toBe(before + 1)

    // The same key sent again by the caller: the same answer, nothing booked.
    const again = await client.createShipments([shipment() as ShipmentInput], { idempotencyKey: "order-77" })
    const replay = await client.createShipments([shipment() as ShipmentInput], { idempotencyKey: "order-77" })
    expect(replay.shipments[0]!.track_no).toBe(again.shipments[0]!.track_no)
    expect(storedCount()).toBe(before + 2)
  })

  it("the same key with another request is refused as a mismatch, and not retried", async () => {
    await waybill.createShipments([shipment() as ShipmentInput], { idempotencyKey: "reused-key" })
    const error = await waybill
      .createShipments([shipment({ BillingReference: "OTHER" }) as ShipmentInput], { idempotencyKey: "reused-key" })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaybillApiError)
    expect(error).toMatchObject({ status: 422, kind: "idempotency_mismatch" })
  })

  it("refusals come back typed with the interface's messages", async () => {
    const stranger = new WaybillClient({ baseUrl: t.url, apiKey: "wb_live_not_a_real_key" })
    await expect(stranger.createShipments([shipment() as ShipmentInput])).rejects.toMatchObject({
      _tag: "WaybillApiError",
      status: 401,
      kind: "unauthenticated",
      message: "Access denied."
    })
    // The documents endpoint answers some refusals with HTTP 200 and the error in the envelope.
    await expect(stranger.documents({ control_no: "12345678" })).rejects.toMatchObject({
      status: 200,
      kind: "refused",
      message: "Access denied."
    })
    await expect(waybill.createShipments([shipment({ Phone: "" }) as ShipmentInput])).rejects.toMatchObject({
      status: 400,
      kind: "bad_request",
      message: expect.stringContaining("Phone")
    })
    const ticket = await waybill.download(`${t.url}/api/v1/order/docs/download/?ticket=forged`).catch((e: unknown) => e)
    expect(ticket).toBeInstanceOf(WaybillApiError)
    expect((ticket as WaybillApiError).status).toBeGreaterThanOrEqual(400)
    expect((ticket as WaybillApiError).envelope).toBeUndefined()
  })

  it("quote, anonymous track and account setup run through the same client", async () => {
    const anonymous = new WaybillClient({ baseUrl: t.url })
    const quote = await anonymous.quote({ origin: "60606", destination: "60613", weight: "15" })
    expect(quote).toMatchObject({ rates: "list", origin: { zip: "60606" }, destination: { zip: "60613" } })
    expect(quote.quotes.length).toBeGreaterThan(0)

    const trackNo = await book()
    await expect(anonymous.track(trackNo)).resolves.toMatchObject({ track_no: trackNo, detail: "coarse" })

    await expect(anonymous.accountSetup("pre-register", {})).rejects.toBeInstanceOf(WaybillApiError)
  })

  it("a host that is not there is a network error after the allowed attempts", async () => {
    const closed = new WaybillClient({
      baseUrl: "http://127.0.0.1:9",
      retry: { maxAttempts: 2 },
      sleep: async () => {}
    })
    const error = await closed.track("12345678").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaybillNetworkError)
    expect(error).toMatchObject({ attempts: 2 })
  })
})

describe("docs/client.md's example", () => {
  const repoDir = resolve(import.meta.dirname, "../../..")
  const exampleFile = join(repoDir, "packages/client/examples/book-and-download.ts")

  it("is the page's code block, byte for byte", () => {
    const page = readFileSync(join(repoDir, "docs/client.md"), "utf8")
    const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
    expect(blocks).toContain(readFileSync(exampleFile, "utf8"))
  })

  it("runs against the host: books, waits for the documents, saves them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "waybill-client-example-"))
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
    let output = ""
    let child: ChildProcess | undefined
    try {
      child = spawn(process.execPath, ["--import", tsx, exampleFile], {
        cwd: dir,
        env: { ...process.env, WAYBILL_URL: t.url, WAYBILL_API_KEY: a.liveKey, WAYBILL_POLL_MS: "100" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((done) => child!.on("exit", (code) => done(code)))

      const trackNo = await waitFor("the example's booking", () => /^booked (\d+),/m.exec(output)?.[1], 120_000)
      const file = pdf("example")
      await attachPdf(trackNo, file)
      expect(await exited, output).toBe(0)
      expect(output).toContain(`saved ${trackNo}-bol-1.pdf (application/pdf)`)
      expect(readdirSync(dir)).toEqual([`${trackNo}-bol-1.pdf`])
      expect(new Uint8Array(readFileSync(join(dir, `${trackNo}-bol-1.pdf`)))).toEqual(file)
    } finally {
      if (child?.exitCode === null) child.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
