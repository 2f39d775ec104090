/**
 * The portal's Shipments pages in a real browser against the real example host: shipments booked
 * through the API (the account's live key) are listed newest first, found by tracking number,
 * customer reference and invoice number (exact, any case), opened with their stops, timeline and
 * documents; a document downloads through the page's link (the API's own ticket); a shipment is
 * canceled after a confirmation step and its page shows the new state; another account's
 * shipment is not found; a broken cursor is a notice, not an error page; without an active key
 * the page says links cannot be made. Every page is clean under axe-core.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts, Documents } from "@waybill/core"
import type { Page } from "playwright-core"
import { sampleShipment } from "../src/sample.js"
import { pdf } from "./documentFiles.js"
import { startHost, type TestAccount, type TestHost } from "./harness.js"
import { expectAxeClean, screenshot, scrollsSideways, useBrowser } from "./browser/browser.js"
import { type PortalUser, portalUser, signIn } from "./browser/users.js"

let h: TestHost
let user: PortalUser
let other: TestAccount

/** Books one shipment through the API with a key, as a customer's system does; its tracking number. */
const book = async (key: string, overrides: Record<string, unknown> = {}): Promise<string> => {
  const response = await fetch(`${h.url}/api/v1/order/json/`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ data: { shipments: [sampleShipment(overrides)] } })
  })
  const body = (await response.json()) as { data: { shipments: Array<{ track_no: string }> } }
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body.data.shipments[0]!.track_no
}

let withDocument: string
let toCancel: string
const REFERENCE = "PO-Portal-4711"
const INVOICE = "INV-2026-0042"

beforeAll(async () => {
  h = await startHost()
  user = await portalUser(h)
  other = await h.newAccount("Someone else")
  withDocument = await book(user.account.liveKey, { BillingReference: REFERENCE })
  toCancel = await book(user.account.liveKey, { BillingReference: "PO-Portal-4712" })
  // A document on the first shipment, as a courier's system adds it (the ops documents endpoint's use case).
  await h.run(Documents.addDocument({ trackNo: withDocument, type: "bol", bytes: pdf(withDocument) }))
  await h.run(Documents.setInvoice(withDocument, INVOICE))
})
afterAll(async () => {
  await h.close()
})

const browser = useBrowser({ viewport: { width: 1100, height: 800 } })

/** The tracking numbers in the list's table, top to bottom. */
const listed = (page: Page) => page.locator("table tbody a.mono").allTextContents()

const search = async (page: Page, term: string) => {
  await page.getByLabel("Search shipments").fill(term)
  await Promise.all([page.waitForURL(/\/portal\/shipments\?q=/), page.getByRole("button", { name: "Search" }).click()])
}

describe("the Shipments pages (browser)", () => {
  it("lists the account's shipments newest first and finds one by tracking number, reference or invoice", async () => {
    const page = browser.page()
    await signIn(page, h, user)
    const answer = await page.goto(`${h.url}/portal/shipments`)
    expect(answer?.status()).toBe(200)
    expect(answer?.headers()["cache-control"]).toBe("no-store")
    expect(await listed(page)).toEqual([toCancel, withDocument])
    // The search box says what it matches, tied to the field.
    const hint = await page.locator("#field-q").getAttribute("aria-describedby")
    expect(await page.locator(`#${hint}`).textContent()).toContain("Exact match, not case-sensitive")
    expect(await page.locator("table tbody tr").first().textContent()).toContain("live")
    await expectAxeClean(page)
    await screenshot(page, "shipments-list")

    await search(page, withDocument)
    expect(await listed(page)).toEqual([withDocument])
    // A customer reference in another case, with spaces around it.
    await search(page, `  ${REFERENCE.toLowerCase()} `)
    expect(await listed(page)).toEqual([withDocument])
    await search(page, INVOICE.toLowerCase())
    expect(await listed(page)).toEqual([withDocument])
    expect(await page.locator("table tbody").textContent()).toContain(INVOICE)
    // Exact only: a prefix finds nothing.
    await search(page, "PO-Portal")
    expect(await listed(page)).toEqual([])
    expect(await page.locator("table tbody").textContent()).toContain("No shipment has this")
    await expectAxeClean(page)
  })

  it("opens a shipment with its stops, timeline and documents, and downloads a document through its link", async () => {
    const page = browser.page()
    await signIn(page, h, user)
    await page.goto(`${h.url}/portal/shipments?q=${REFERENCE}`)
    await Promise.all([
      page.waitForURL(`${h.url}/portal/shipments/${withDocument}`),
      page.getByRole("link", { name: withDocument }).click()
    ])
    expect(await page.title()).toBe(`Shipment ${withDocument} — Waybill`)
    const summary = page.locator("dl.facts")
    expect(await summary.textContent()).toContain("booked")
    expect(await summary.textContent()).toContain(REFERENCE)
    expect(await summary.textContent()).toContain(INVOICE)
    const stops = page.getByRole("table", { name: "Stops, in route order" })
    expect(await stops.textContent()).toContain("233 S Wacker Dr")
    expect(await stops.textContent()).toContain("1060 W Addison St")
    expect(await stops.textContent()).toContain("ready from")
    expect(await stops.textContent()).toContain("requested by")
    expect(await page.getByRole("table", { name: "Events, oldest first" }).textContent()).toContain("shipment.booked")
    expect(await page.getByRole("table", { name: "Documents" }).textContent()).toContain("application/pdf")
    expect(await page.getByRole("link", { name: "Cancel shipment" }).count()).toBe(1)
    await expectAxeClean(page)
    await screenshot(page, "shipments-detail")

    // The link is the API's download path on the same server, with a ticket.
    const link = page.getByRole("link", { name: /^Download bol/ })
    const href = await link.getAttribute("href")
    expect(href).toMatch(/^\/api\/v1\/order\/docs\/download\/\?ticket=/)
    // Through the browser's own context (the link as a person follows it): 200, the file's type and bytes.
    const viaPage = await page.request.get(new URL(href!, page.url()).href)
    expect(viaPage.status()).toBe(200)
    expect(viaPage.headers()["content-type"]).toBe("application/pdf")
    expect(new Uint8Array(await viaPage.body())).toEqual(pdf(withDocument))
    // The same link fetched outright (no cookie: the ticket is the credential): 200, the file's type and bytes.
    const fetched = await fetch(`${h.url}${href}`)
    expect(fetched.status).toBe(200)
    expect(fetched.headers.get("content-type")).toBe("application/pdf")
    expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(pdf(withDocument))
  })

  it("cancels a shipment after a confirmation step; its page shows the new state", async () => {
    const page = browser.page()
    await signIn(page, h, user)
    await page.goto(`${h.url}/portal/shipments/${toCancel}`)
    await Promise.all([
      page.waitForURL(`${h.url}/portal/shipments/${toCancel}/cancel`),
      page.getByRole("link", { name: "Cancel shipment" }).click()
    ])
    expect(await page.title()).toBe(`Cancel shipment ${toCancel}? — Waybill`)
    await expectAxeClean(page)
    await screenshot(page, "shipments-cancel")
    await Promise.all([
      page.waitForURL(`${h.url}/portal/shipments/${toCancel}`),
      page.getByRole("button", { name: "Yes, cancel shipment" }).click()
    ])
    expect(await page.getByRole("status").first().textContent()).toBe("The shipment is canceled.")
    expect(await page.locator("dl.facts").textContent()).toContain("canceled")
    expect(await page.getByRole("link", { name: "Cancel shipment" }).count()).toBe(0)
    expect(await page.getByRole("table", { name: "Events, oldest first" }).textContent()).toContain("shipment.canceled")
    await expectAxeClean(page)
    await screenshot(page, "shipments-canceled")
    // The confirmation page of a shipment that can no longer be canceled goes back with a message.
    await page.goto(`${h.url}/portal/shipments/${toCancel}/cancel`)
    expect(page.url()).toBe(`${h.url}/portal/shipments/${toCancel}`)
    expect(await page.getByRole("status").first().textContent()).toBe("This shipment can no longer be canceled.")
  })

  it("does not show another account's shipment, and a broken cursor is a notice", async () => {
    const theirs = await book(other.liveKey, { BillingReference: REFERENCE })
    const page = browser.page()
    await signIn(page, h, user)
    const answer = await page.goto(`${h.url}/portal/shipments/${theirs}`)
    expect(answer?.status()).toBe(404)
    expect(await page.locator("main").textContent()).toContain("There is no shipment with this tracking number")
    await expectAxeClean(page)
    const cancel = await page.goto(`${h.url}/portal/shipments/${theirs}/cancel`)
    expect(cancel?.status()).toBe(404)
    // Searching by their tracking number or the reference both accounts use finds only ours.
    await page.goto(`${h.url}/portal/shipments?q=${theirs}`)
    expect(await listed(page)).toEqual([])
    await page.goto(`${h.url}/portal/shipments?q=${REFERENCE}`)
    expect(await listed(page)).toEqual([withDocument])

    const broken = await page.goto(`${h.url}/portal/shipments?starting_after=not-a-cursor`)
    expect(broken?.status()).toBe(400)
    expect(await page.getByRole("status").first().textContent()).toContain("could not be found")
    expect(await listed(page)).toEqual([toCancel, withDocument])
    await expectAxeClean(page)
  })

  it("pages through more shipments than fit one page, newest first", async () => {
    const many = await portalUser(h)
    const booked: Array<string> = []
    // One at a time: the list is ordered by booking time, and the test checks that order.
    for (let i = 0; i < 21; i++) booked.push(await book(many.account.liveKey, { BillingReference: `PO-MANY-${i}` }))
    const page = browser.page()
    await signIn(page, h, many)
    await page.goto(`${h.url}/portal/shipments`)
    const first = await listed(page)
    expect(first).toHaveLength(20)
    expect(await page.getByRole("link", { name: "Newest" }).count()).toBe(0)
    await Promise.all([page.waitForURL(/starting_after=/), page.getByRole("link", { name: "Older" }).click()])
    const second = await listed(page)
    expect([...first, ...second].sort()).toEqual([...booked].sort())
    expect(second).toEqual([booked[0]])
    expect(await page.getByRole("link", { name: "Older" }).count()).toBe(0)
    await expectAxeClean(page)
    await Promise.all([
      page.waitForURL(`${h.url}/portal/shipments`),
      page.getByRole("link", { name: "Newest" }).click()
    ])
    expect(await listed(page)).toEqual(first)
  })

  it("says when no key is active that download links cannot be made, and fits a phone", async () => {
    const owner = await portalUser(h)
    const trackNo = await book(owner.account.liveKey)
    await h.run(Documents.addDocument({ trackNo, type: "bol", bytes: pdf(trackNo) }))
    await h.run(
      Effect.all([
        Accounts.setKeyStatus(owner.account.customerNo, "live", "disabled"),
        Accounts.setKeyStatus(owner.account.customerNo, "test", "disabled")
      ])
    )
    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })
    const page = await phone.newPage()
    await signIn(page, h, owner)
    await page.goto(`${h.url}/portal/shipments/${trackNo}`)
    expect(await page.locator("main").textContent()).toContain("download links cannot be made")
    expect(await page.getByRole("link", { name: /^Download/ }).count()).toBe(0)
    expect(await scrollsSideways(page)).toBe(false)
    await expectAxeClean(page)
    await page.goto(`${h.url}/portal/shipments`)
    expect(await scrollsSideways(page)).toBe(false)
    await expectAxeClean(page)
  })
})
