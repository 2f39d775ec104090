/**
 * The documents scenarios: a metadata lookup of 100 orders (one GET naming 100 tracking numbers,
 * each order with one document, so 100 tickets are sealed per answer) and a download of one
 * PDF. Both targets are prepared the same way through their own HTTP APIs: one booking request
 * of 100 shipments, then one operator upload per order (`/ops/v1`, with {@link BENCH_OPERATOR_TOKEN}).
 *
 * The floor answers the same routes with a direct SQL query and a plain file stream
 * (floorDocuments.ts); the bench runs over plain HTTP, so the Waybill target allows it.
 */
import { sampleShipment } from "../src/sample.js"
import type { RequestSpec, Scenario, Session } from "./scenarioTypes.js"

const SHIPMENT = sampleShipment()

/** The operator token both targets accept for the uploads of `prepare`. */
export const BENCH_OPERATOR_TOKEN = "bench-operator-token-0123456789abcdef"

/** Orders in the lookup (the interface's limit). */
export const LOOKUP_ORDERS = 100

/** A PDF of about 256 KiB: large enough to be streamed, not buffered, by the node bridge. */
export const BENCH_PDF: Uint8Array<ArrayBuffer> = (() => {
  const head = "%PDF-1.4\n%"
  const tail = "\n%%EOF\n"
  const filler = "waybill bench document ".repeat(Math.ceil((256 * 1024) / 23)).slice(0, 256 * 1024)
  return new TextEncoder().encode(head + filler + tail)
})()

interface Prepared {
  readonly trackNos: ReadonlyArray<string>
  readonly downloadPath: string
}

const prepared = new Map<string, Promise<Prepared>>()

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const lookupPath = (trackNos: ReadonlyArray<string>) => `/api/v1/order/docs/?control_no=${trackNos.join(",")}`

/** Books 100 orders, uploads one PDF to each, and takes one document uri for the download run. */
const prepareOnce = (session: Session): Promise<Prepared> => {
  let p = prepared.get(session.url)
  if (p === undefined) {
    p = (async () => {
      const booking = await fetch(`${session.url}/api/v1/order/json/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.apiKey}` },
        body: JSON.stringify({
          data: { jsonstrn: "bench-docs", shipments: Array.from({ length: LOOKUP_ORDERS }, () => SHIPMENT) }
        })
      })
      const booked = (await booking.json()) as { data?: { shipments?: Array<{ track_no?: string }> } }
      const trackNos = (booked.data?.shipments ?? []).map((s) => s.track_no ?? "")
      if (trackNos.length !== LOOKUP_ORDERS || trackNos.some((t) => t === ""))
        throw new Error(`documents bench: booking failed: ${JSON.stringify(booked).slice(0, 500)}`)
      for (const trackNo of trackNos) {
        const upload = await fetch(`${session.url}/ops/v1/orders/${trackNo}/documents/?type=bol&id=BOL-${trackNo}`, {
          method: "POST",
          headers: { authorization: `Bearer ${BENCH_OPERATOR_TOKEN}`, "content-type": "application/pdf" },
          body: BENCH_PDF
        })
        if (upload.status !== 201)
          throw new Error(`documents bench: upload failed with ${upload.status}: ${await upload.text()}`)
      }
      const lookup = await fetch(`${session.url}${lookupPath(trackNos.slice(0, 1))}`, {
        headers: { authorization: `Bearer ${session.apiKey}` }
      })
      const found = (await lookup.json()) as { data?: { orders?: Array<{ documents?: Array<{ uri?: string }> }> } }
      const uri = found.data?.orders?.[0]?.documents?.[0]?.uri
      if (uri === undefined) throw new Error(`documents bench: no uri in ${JSON.stringify(found).slice(0, 500)}`)
      const url = new URL(uri)
      return { trackNos, downloadPath: url.pathname + url.search }
    })()
    prepared.set(session.url, p)
  }
  return p
}

/** The prepared state of a session; `request` runs after `prepare`, so it is always there. */
const state = new Map<string, Prepared>()

const checkLookup = (status: number, body: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (status !== 200) problems.push(`status ${status}, expected 200`)
  if (!isObject(body)) return [...problems, "body is not a JSON object"]
  if (body["error"] !== null) problems.push(`error is ${JSON.stringify(body["error"])}`)
  const data = body["data"]
  const orders = isObject(data) ? data["orders"] : undefined
  if (!Array.isArray(orders) || orders.length !== LOOKUP_ORDERS)
    return [...problems, `data.orders does not hold ${LOOKUP_ORDERS} orders`]
  for (const o of orders as Array<unknown>) {
    const docs = isObject(o) ? o["documents"] : undefined
    if (!Array.isArray(docs) || docs.length !== 1) return [...problems, `an order without exactly one document`]
    const d: unknown = docs[0]
    if (!isObject(d) || typeof d["uri"] !== "string" || !d["uri"].includes("/api/v1/order/docs/download/?ticket="))
      return [...problems, `a document without a download uri: ${JSON.stringify(d)}`]
    if (d["type"] !== "bol" || d["page"] !== "1") problems.push(`unexpected document ${JSON.stringify(d)}`)
  }
  return problems
}

export const docsLookup100: Scenario = {
  name: "docs-lookup-100",
  description: "GET /api/v1/order/docs/?control_no=<100 orders> (Bearer key): 100 orders, 100 sealed download links",
  prepare: async (session) => {
    state.set(session.url, await prepareOnce(session))
  },
  request: (session): RequestSpec => ({
    method: "GET",
    path: lookupPath(state.get(session.url)?.trackNos ?? []),
    headers: { authorization: `Bearer ${session.apiKey}` }
  }),
  check: checkLookup,
  quickCheck: (body) =>
    body.endsWith(',"error":null}') && body.split("/download/?ticket=").length === LOOKUP_ORDERS + 1,
  writesPerRequest: {},
  // The ceiling reproduces Waybill's booking writes only.
  targets: ["waybill", "floor"]
}

export const docsDownload: Scenario = {
  name: "docs-download",
  description:
    "GET /api/v1/order/docs/download/?ticket= (256 KiB PDF): ticket, key and document re-checks, file stream",
  prepare: async (session) => {
    state.set(session.url, await prepareOnce(session))
  },
  request: (session): RequestSpec => ({
    method: "GET",
    path: state.get(session.url)?.downloadPath ?? "/",
    headers: {}
  }),
  check: (status, body) => {
    const problems: Array<string> = []
    if (status !== 200) problems.push(`status ${status}, expected 200`)
    if (typeof body !== "string" || !body.startsWith("%PDF-") || body.length !== BENCH_PDF.byteLength)
      problems.push(`body is not the ${BENCH_PDF.byteLength}-byte PDF`)
    return problems
  },
  quickCheck: (body) => body.length === BENCH_PDF.byteLength && body.startsWith("%PDF-"),
  writesPerRequest: {},
  // The ceiling reproduces Waybill's booking writes only.
  targets: ["waybill", "floor"]
}
