/**
 * What every framework test proves through its real server: Waybill books a shipment, lists the
 * order's documents with download links, and streams a document back (GET and HEAD); bad input
 * gets Waybill's own JSON envelope (the framework parsed nothing); the operator API answers; and
 * the app's own routes still work.
 */
import { expect } from "vitest"
import { Documents, IpBlocks } from "@waybill/core"
import { OPERATOR_TOKEN, postJson, shipment } from "@waybill/example-http-host/test/harness.js"
import { pdf } from "@waybill/example-http-host/test/documentFiles.js"
import type { Programs } from "./waybill.js"

/** Past the 64 KiB that bridges buffer, so the download is a stream end to end. */
const LARGE_LABEL = "waybill-frameworks ".repeat(10_000)

export interface ScenarioOptions {
  /**
   * Next.js drops `Content-Length` from every route handler's answer (its `sendResponse` treats it
   * as a framing header) and sends downloads chunked; every other framework keeps Waybill's.
   */
  readonly contentLength?: "kept" | "dropped"
  /**
   * Whether Waybill learns the client's address (so IP blocks apply). Next.js route handlers are
   * not told the socket's address; every other framework passes it.
   */
  readonly clientAddress?: "known" | "unknown"
}

export const bookAndDownload = async (
  url: string,
  programs: Programs,
  options: ScenarioOptions = {}
): Promise<void> => {
  const length = (bytes: Uint8Array) => (options.contentLength === "dropped" ? null : String(bytes.byteLength))
  const key = await programs.newLiveKey()
  const auth = { authorization: `Bearer ${key}` }

  const booked = await postJson(`${url}/api/v1/order/json/`, { data: { shipments: [shipment()] } }, auth)
  expect(booked.status, JSON.stringify(booked.body)).toBe(200)
  const trackNo = booked.body.data.shipments[0].track_no as string
  expect(trackNo).toMatch(/^[A-Z0-9]+$/)

  // The body reached Waybill unparsed: its own envelopes for invalid JSON and for its size limit.
  const invalid = await postJson(`${url}/api/v1/order/json/`, "{not json", auth)
  expect(invalid.status).toBe(400)
  expect(invalid.body).toEqual({ data: null, error: { message: expect.any(String), exception: null } })
  const tooLarge = await postJson(`${url}/api/v1/order/json/`, `{"data":"${"x".repeat(1_100_000)}"}`, auth)
  expect(tooLarge.status).toBe(413)
  expect(tooLarge.body.data).toBeNull()

  const file = pdf(LARGE_LABEL)
  expect(file.byteLength).toBeGreaterThan(64 * 1024)
  await programs.run(Documents.addDocument({ trackNo, type: "bol", bytes: file, sourceId: "BOL-1" }))
  const lookup = await fetch(`${url}/api/v1/order/docs/?control_no=${trackNo}&key=${key}`)
  const listed = (await lookup.json()) as { data: { orders: Array<{ documents: Array<Record<string, string>> }> } }
  expect(lookup.status, JSON.stringify(listed)).toBe(200)
  const [document] = listed.data.orders[0]!.documents
  expect(document).toMatchObject({ type: "bol", page: "1", id: "BOL-1" })
  // The link is built from the URL the framework handed over: this server's origin.
  const uri = document!.uri!
  expect(uri).toMatch(new RegExp(`^${url}/api/v1/order/docs/download/\\?ticket=[A-Za-z0-9_-]+$`))

  const download = await fetch(uri)
  expect(download.status).toBe(200)
  expect(download.headers.get("content-type")).toBe("application/pdf")
  expect(download.headers.get("content-length")).toBe(length(file))
  expect(download.headers.get("cache-control")).toBe("no-store")
  expect(new Uint8Array(await download.arrayBuffer())).toEqual(file)
  const head = await fetch(uri, { method: "HEAD" })
  expect(head.status).toBe(200)
  expect(head.headers.get("content-length")).toBe(length(file))
  expect(await head.text()).toBe("")

  const shown = await fetch(`${url}/ops/v1/shipments/${trackNo}/`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }
  })
  expect(shown.status).toBe(200)
  expect(JSON.stringify(await shown.json())).toContain(trackNo)
  const unknown = await fetch(`${url}/api/v1/no-such-route/`)
  expect(unknown.status).toBe(404)
  expect(await unknown.json()).toEqual({ data: null, error: { message: "Not found.", exception: null } })

  // The framework handed Waybill the socket's address: blocking it refuses this client.
  await programs.run(IpBlocks.block("127.0.0.1", 60_000, "framework test"))
  try {
    const blocked = await postJson(`${url}/api/v1/order/json/`, { data: { shipments: [shipment()] } }, auth)
    if (options.clientAddress === "unknown") expect(blocked.status).toBe(200)
    else {
      expect(blocked.status).toBe(403)
      expect(blocked.body).toEqual({ data: null, error: { message: "IP address is blocked", exception: null } })
    }
  } finally {
    await programs.run(IpBlocks.unblock("127.0.0.1"))
  }
}
