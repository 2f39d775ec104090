/**
 * The Shipments pages' templates as HTML: times in UTC and in a stop's own zone, a stop's window,
 * the timeline's details, the list's search box and pager, a shipment's Cancel link only while it
 * can be canceled, its documents' links (or why there are none), the cancel confirmation's form,
 * and escaping of what a booking supplied.
 */
import { describe, expect, it } from "vitest"
import * as Redacted from "effect/Redacted"
import type { Documents, Shipment, Shipments } from "@waybill/core"
import { renderDocument } from "../src/views/Layout.js"
import type { Chrome } from "../src/views/Layout.js"
import {
  CancelPage,
  eventDetail,
  formatLocal,
  formatUsd,
  formatUtc,
  SEARCH_HINT,
  ShipmentList,
  ShipmentPage,
  windowOf
} from "../src/views/shipments.js"
import { viewer } from "./fakes.js"

const chrome: Chrome = {
  basePath: "/portal",
  stylesheet: "/portal/assets/portal.css",
  viewer,
  csrf: Redacted.value(viewer.csrfToken),
  flash: []
}
const href = (p: string) => `/portal${p}`

const AT = Date.UTC(2026, 0, 15, 18, 0) // 12:00 in Chicago (CST)

const stop = (seq: number, role: "pickup" | "intermediate" | "delivery", name: string) => ({
  seq,
  role,
  externalId: null,
  name,
  address: `${seq} Main St`,
  city: "Chicago",
  state: "IL",
  zip: "60606",
  contactName: "",
  phone: "",
  note: "",
  latitude: 41.8,
  longitude: -87.6,
  timeZone: "America/Chicago",
  status: "pending" as const,
  etaAt: AT
})

const record = (overrides: Partial<Shipment.ShipmentRecord> = {}): Shipment.ShipmentRecord => ({
  trackNo: "12345678",
  customerNo: viewer.customerNo,
  livemode: true,
  state: "booked",
  version: 1,
  driverId: null,
  contact: "Ada Lopez",
  phone: "3125550100",
  email: "",
  billingReference: "PO-<b>1</b>",
  serviceType: "2hour",
  vehicleType: "car",
  pieces: 2,
  weightLb: 15,
  signatureRequired: false,
  liftgateRequired: false,
  pickupInstructions: "",
  deliverInstructions: "",
  readyAt: AT,
  requestedDeliveryAt: AT + 6 * 3_600_000,
  estimatedDeliveryAt: AT + 3_600_000,
  guaranteedDeliveryAt: AT + 2 * 3_600_000,
  charge: { transport: 20, weight: 0, stops: 0, fuel: 2, extras: 0, discount: 0, total: 22.5 },
  jsonstrn: "{}",
  createdAt: AT,
  updatedAt: AT,
  stops: [stop(0, "pickup", "Acme Parts"), stop(1, "intermediate", "Mid Co"), stop(2, "delivery", "Bolt Labs")],
  legs: [
    { seq: 0, fromStop: 0, toStop: 1, miles: 3.25 },
    { seq: 1, fromStop: 1, toStop: 2, miles: 4 }
  ],
  pieceDetails: [],
  ...overrides
})

const document = {
  id: "doc_01",
  trackNo: "12345678",
  kind: "attachment" as const,
  orderVersion: 1,
  batch: 1,
  page: 1,
  type: "bol",
  sourceId: "BOL-1",
  contentType: "application/pdf" as const,
  rotation: 0 as const,
  blobKey: "k",
  size: 2048,
  version: 1,
  hidden: false,
  removed: false,
  capturedAt: AT,
  createdAt: AT,
  updatedAt: AT
}

const detail = (overrides: Partial<Shipments.ShipmentDetail> = {}): Shipments.ShipmentDetail => ({
  shipment: record(),
  invoice: "INV-1",
  events: [
    {
      id: "evt_1",
      type: "shipment.booked",
      sequence: 1,
      occurredAt: AT,
      data: { track_no: "12345678", state: "booked" }
    }
  ],
  documents: [document],
  cancellable: true,
  ...overrides
})

const links: Documents.DocumentLinks = {
  keyMode: "live",
  expiresAt: AT + 15 * 60_000,
  links: [{ document, ticket: "t1", path: "/api/v1/order/docs/download/?ticket=t1" }]
}

describe("formatting", () => {
  it("shows a time in UTC to the minute", () => {
    expect(formatUtc(Date.UTC(2026, 0, 2, 3, 4, 59))).toBe("2026-01-02 03:04 UTC")
    for (let i = 0; i < 200; i++) {
      const ms = Math.floor(Math.random() * 4_102_444_800_000)
      expect(formatUtc(ms)).toBe(`${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`)
    }
  })

  it("shows a stop's time in its own zone, with daylight saving, and UTC for an unknown zone", () => {
    expect(formatLocal(AT, "America/Chicago")).toBe("2026-01-15 12:00 CST")
    expect(formatLocal(Date.UTC(2026, 6, 15, 17, 30), "America/Chicago")).toBe("2026-07-15 12:30 CDT")
    expect(formatLocal(AT, "Not/AZone")).toBe("2026-01-15 18:00 UTC")
  })

  it("shows prices in dollars and cents", () => {
    expect(formatUsd(22.5)).toBe("$22.50")
    expect(formatUsd(1234)).toBe("$1,234.00")
  })

  it("gives the pickup its ready time, the final delivery its requested and guaranteed times", () => {
    const s = record()
    expect(windowOf(s, s.stops[0]!)).toBe("ready from 2026-01-15 12:00 CST")
    expect(windowOf(s, s.stops[1]!)).toBe("—")
    expect(windowOf(s, s.stops[2]!)).toBe("requested by 2026-01-15 18:00 CST; guaranteed by 2026-01-15 14:00 CST")
    const same = record({ guaranteedDeliveryAt: AT + 6 * 3_600_000 })
    expect(windowOf(same, same.stops[2]!)).toBe("requested by 2026-01-15 18:00 CST")
  })

  it("details an event by its plain fields, without what the page already shows", () => {
    expect(eventDetail({ track_no: "1", stop_seq: 2, reason: "closed", nested: { a: 1 } })).toBe(
      "stop seq: 2, reason: closed"
    )
    expect(eventDetail({})).toBe("")
  })
})

describe("ShipmentList", () => {
  const summary: Shipment.ShipmentSummary = {
    trackNo: "12345678",
    customerNo: viewer.customerNo,
    livemode: false,
    createdAt: AT,
    state: "in_transit",
    reference: "PO-1",
    invoice: "",
    serviceType: "2hour",
    vehicleType: "car",
    from: { city: "Chicago", state: "IL" },
    to: { city: "Evanston", state: "IL" },
    total: 30
  }

  it("has a labelled search box saying how it matches, linked rows, and a pager", () => {
    const html = renderDocument(
      <ShipmentList
        chrome={chrome}
        href={href}
        q="po-1"
        rows={[summary]}
        firstHref="/portal/shipments?q=po-1"
        nextHref="/portal/shipments?q=po-1&starting_after=abc"
        messages={[]}
      />
    )
    expect(html).toContain('<label for="field-q">Search shipments</label>')
    expect(html).toContain(`<span class="hint" id="field-q-hint">${SEARCH_HINT}</span>`)
    expect(html).toContain('aria-describedby="field-q-hint"')
    expect(html).toContain('value="po-1"')
    expect(html).toContain('<a class="mono" href="/portal/shipments/12345678">12345678</a>')
    expect(html).toContain("Chicago, IL → Evanston, IL")
    expect(html).toContain("in transit")
    expect(html).toContain('<span class="badge badge-warning">test</span>')
    expect(html).toContain('<a href="/portal/shipments?q=po-1&amp;starting_after=abc">Older</a>')
    expect(html).toContain('<a href="/portal/shipments?q=po-1">Newest</a>')
    expect(html).toContain('href="/portal/shipments">Show all shipments</a>')
  })

  it("says when a search finds nothing", () => {
    const html = renderDocument(
      <ShipmentList chrome={chrome} href={href} q="x" rows={[]} firstHref={undefined} nextHref={null} messages={[]} />
    )
    expect(html).toContain("No shipment has this tracking number, reference or invoice.")
    expect(html).not.toContain('class="pager"')
  })
})

describe("ShipmentPage", () => {
  it("shows the shipment, escapes what the booking supplied, and offers Cancel while it can be canceled", () => {
    const html = renderDocument(<ShipmentPage chrome={chrome} href={href} detail={detail()} links={links} />)
    expect(html).toContain("<h1>Shipment 12345678</h1>")
    expect(html).toContain("PO-&lt;b>1&lt;/b>")
    expect(html).not.toContain("<b>1</b>")
    expect(html).toContain('href="/portal/shipments/12345678/cancel">Cancel shipment</a>')
    expect(html).toContain("1. Acme Parts")
    expect(html).toContain("3.3")
    expect(html).toContain("state: booked")
    expect(html).toContain('href="/api/v1/order/docs/download/?ticket=t1"')
    expect(html).toContain("issued under the account's live key")
    expect(html).toContain("2.0 KB")
  })

  it("has no Cancel once the shipment cannot be canceled", () => {
    const html = renderDocument(
      <ShipmentPage
        chrome={chrome}
        href={href}
        detail={detail({ shipment: record({ state: "canceled" }), cancellable: false })}
        links={links}
      />
    )
    expect(html).not.toContain("Cancel shipment")
    expect(html).toContain('<span class="badge badge-neutral">canceled</span>')
  })

  it("says why there are no download links when no key is active", () => {
    const html = renderDocument(
      <ShipmentPage
        chrome={chrome}
        href={href}
        detail={detail()}
        links={{ keyMode: null, expiresAt: null, links: [] }}
      />
    )
    expect(html).toContain("No API key of this account is active, so download links cannot be made.")
    expect(html).not.toContain("/api/v1/order/docs/download/")
    expect(html).toContain("no link")
  })

  it("says when there are no documents", () => {
    const html = renderDocument(
      <ShipmentPage
        chrome={chrome}
        href={href}
        detail={detail({ documents: [] })}
        links={{ keyMode: null, expiresAt: null, links: [] }}
      />
    )
    expect(html).toContain("No documents yet.")
    expect(html).not.toContain("download links cannot be made")
  })
})

describe("CancelPage", () => {
  it("asks before canceling: a POST with the session's CSRF token, and a way back", () => {
    const html = renderDocument(<CancelPage chrome={chrome} href={href} shipment={record()} />)
    expect(html).toContain("<title>Cancel shipment 12345678? — Waybill</title>")
    expect(html).toContain(
      `<form method="post" action="/portal/shipments/12345678/cancel" class="actions" aria-label="Cancel the shipment"><input type="hidden" name="csrf" value="${chrome.csrf}"/>`
    )
    expect(html).toContain("Yes, cancel shipment")
    expect(html).toContain('href="/portal/shipments/12345678">No, keep it</a>')
  })
})
