/**
 * The portal's Webhooks pages in a real browser against the real example host, whose dispatcher
 * delivers to a loopback HTTPS receiver (self-signed certificate trusted through the host's `ca`
 * option, its address allowed through `allowPrivate`, as in webhooks.e2e.test.ts). A member (not
 * only an owner) adds an endpoint, copies the signing secret from the page, and sees signed
 * deliveries (checked with the npm `standardwebhooks` package and that secret) reach the receiver
 * and appear in the portal's delivery log; then resends, rotates, disables, enables, edits,
 * recovers and deletes, each page clean under axe-core.
 */
import type { Locator, Page } from "playwright-core"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Webhooks } from "@waybill/core"
import { bookOne, startHostWithReceiver, type TestHost, waitFor } from "./harness.js"
import { expectAxeClean, screenshot, scrollsSideways, useBrowser } from "./browser/browser.js"
import { portalUser, signIn } from "./browser/users.js"

let h: TestHost
let r: Awaited<ReturnType<typeof startHostWithReceiver>>["receiver"]
let close: () => Promise<void>

beforeAll(async () => {
  ;({ host: h, receiver: r, close } = await startHostWithReceiver())
})

afterAll(() => close())

const browser = useBrowser({ viewport: { width: 1100, height: 800 } })

/** Clicks a submit button and waits for the page the POST leads to (after its redirect). */
const submit = async (page: Page, button: Locator) => {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), button.click()])
}

const flashText = (page: Page) => page.locator(".flash").allTextContents()

/** Reloads the page until `probe` holds (the dispatcher records an attempt after sending it). */
const reloadUntil = async (page: Page, what: string, probe: () => Promise<boolean>, deadlineMs = 30_000) => {
  const until = Date.now() + deadlineMs
  for (;;) {
    if (await probe()) return
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
    await page.reload()
  }
}

const verify = (secret: string, delivery: { readonly body: string; readonly headers: Record<string, string> }) =>
  new StandardWebhook(secret).verify(delivery.body, delivery.headers) as {
    readonly id: string
    readonly type: string
    readonly data: Record<string, unknown>
  }

describe("the portal's Webhooks pages (browser)", () => {
  it("shows each refusal next to its field: not HTTPS, an SSRF-refused address, no event type", async () => {
    const user = await portalUser(h, { role: "member" })
    const page = browser.page()
    await signIn(page, h, user)
    const answer = await page.goto(`${h.url}/portal/webhooks`)
    expect(answer?.status()).toBe(200)
    expect(answer?.headers()["cache-control"]).toBe("no-store")
    expect(await page.title()).toBe("Webhooks — Waybill")
    expect(await page.getByRole("table", { name: "Endpoints" }).textContent()).toContain("No endpoint yet")
    // Every catalog entry is a checkbox with its description.
    expect(await page.getByRole("checkbox").count()).toBe(14)
    expect(await page.getByRole("checkbox", { name: "shipment.delivered" }).getAttribute("aria-describedby")).toBe(
      "event-shipment-delivered-description"
    )
    await expectAxeClean(page)

    const url = page.getByLabel("Endpoint URL")
    const add = page.getByRole("button", { name: "Add endpoint" })
    await url.fill("http://example.com/hooks")
    await page.getByRole("checkbox", { name: "shipment.booked" }).check()
    await submit(page, add)
    expect(await page.locator("#field-url-error").textContent()).toBe("The URL must use https.")
    expect(await url.getAttribute("aria-invalid")).toBe("true")
    expect(await url.inputValue()).toBe("http://example.com/hooks")
    expect(await page.getByRole("checkbox", { name: "shipment.booked" }).isChecked()).toBe(true)

    await url.fill("https://10.1.2.3/hooks")
    await submit(page, add)
    expect(await page.locator("#field-url-error").textContent()).toBe(
      "The URL points to a private or reserved address."
    )

    await url.fill("https://hooks.example.com/waybill")
    await page.getByRole("checkbox", { name: "shipment.booked" }).uncheck()
    await submit(page, add)
    expect(await page.locator("#field-url-error").count()).toBe(0)
    expect(await page.locator("#event-types-error").textContent()).toBe("Pick at least one event type.")
    expect(await page.getByRole("group", { name: "Event types" }).getAttribute("aria-describedby")).toBe(
      "event-types-error"
    )
    await expectAxeClean(page)
    await screenshot(page, "webhooks-add-errors")

    // A phone's width: the form and the table fit (the table scrolls in its own box).
    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })
    await phone.addCookies(await browser.context().cookies())
    const small = await phone.newPage()
    await small.goto(`${h.url}/portal/webhooks`)
    expect(await scrollsSideways(small)).toBe(false)
  })

  it("adds an endpoint, shows its secret once, and logs signed deliveries; resend, rotate, disable, edit, delete", async () => {
    const user = await portalUser(h, { role: "member" })
    const page = browser.page()
    await signIn(page, h, user)
    await page.goto(`${h.url}/portal/webhooks`)

    // Add: the receiver's URL, two event types.
    await page.getByLabel("Endpoint URL").fill(r.url)
    await page.getByRole("checkbox", { name: "shipment.booked" }).check()
    await page.getByRole("checkbox", { name: "shipment.canceled" }).check()
    const [created] = await Promise.all([
      page.waitForResponse((res) => res.request().method() === "POST"),
      page.getByRole("button", { name: "Add endpoint" }).click()
    ])
    await page.waitForLoadState()
    expect(created.status()).toBe(200)
    expect(created.headers()["cache-control"]).toBe("no-store")
    expect(await page.title()).toBe("Endpoint added — Waybill")
    const secret = (await page.locator(".one-time-secret .secret").textContent())!.trim()
    expect(secret).toMatch(/^whsec_/)
    await expectAxeClean(page)
    await screenshot(page, "webhooks-secret")

    // The list shows it; its page has the actions.
    await page.getByRole("link", { name: "All endpoints" }).click()
    await page.waitForURL(`${h.url}/portal/webhooks`)
    const row = page.getByRole("table", { name: "Endpoints" }).getByRole("row").nth(1)
    expect(await row.textContent()).toContain(r.url)
    expect(await row.textContent()).toContain("Enabled")
    expect(await page.locator(".one-time-secret").count()).toBe(0)
    await Promise.all([page.waitForURL(/\/portal\/webhooks\/we_/), row.getByRole("link").click()])
    const endpointUrl = page.url()
    const endpointId = new URL(endpointUrl).pathname.split("/").at(-1)!

    // A test event and a booking reach the receiver, signed with the secret read from the page.
    await submit(page, page.getByRole("button", { name: "Send test event" }))
    expect(await flashText(page)).toEqual(["A webhook.test event is queued for the endpoint."])
    const trackNo = await bookOne(h.url, user.account.liveKey)
    const test = await waitFor("the test event", () =>
      r.received.find((x) => x.body.includes(`"endpoint_id":"${endpointId}"`))
    )
    expect(verify(secret, test).type).toBe("webhook.test")
    const booked = await waitFor("the booking", () => r.received.find((x) => x.body.includes(trackNo)))
    const bookedEvent = verify(secret, booked)
    expect(bookedEvent.type).toBe("shipment.booked")
    expect(bookedEvent.data["track_no"]).toBe(trackNo)

    // Both appear in the delivery log (recorded just after they are sent: reload until they show).
    const log = page.getByRole("table", { name: "Delivery attempts, newest first" })
    await reloadUntil(page, "two lines in the delivery log", async () => {
      const text = (await log.textContent()) ?? ""
      return text.includes("shipment.booked") && text.includes("webhook.test")
    })
    const bookedRow = log.getByRole("row").filter({ hasText: bookedEvent.id })
    expect(await bookedRow.textContent()).toContain("HTTP 200")
    expect(await bookedRow.textContent()).toContain("ok")
    await expectAxeClean(page)
    await screenshot(page, "webhooks-endpoint")

    // Resend one: the receiver gets the same event (same webhook-id) again.
    await submit(page, bookedRow.getByRole("button", { name: "Resend" }))
    expect(await flashText(page)).toEqual(["The event is queued to be sent again (same webhook-id)."])
    await waitFor("the resend", () => {
      const got = r.received.filter((x) => x.headers["webhook-id"] === bookedEvent.id)
      return got.length >= 2 ? got : undefined
    })

    // Rotate: a new secret, once; the old one keeps signing for 24 hours.
    await page.goto(endpointUrl)
    await submit(page, page.getByRole("button", { name: "Rotate secret" }))
    expect(await page.title()).toBe("Secret rotated — Waybill")
    expect(await page.locator("main").textContent()).toContain("keeps signing too for 24 hours")
    const rotated = (await page.locator(".one-time-secret .secret").textContent())!.trim()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    await expectAxeClean(page)
    await page.getByRole("link", { name: "Go to the endpoint" }).click()
    await page.waitForURL(endpointUrl)
    expect(await page.locator("dl.facts-rows").textContent()).toContain("Still signing until")
    const before = r.received.length
    await submit(page, page.getByRole("button", { name: "Send test event" }))
    const second = await waitFor("the test event after rotation", () =>
      r.received.slice(before).find((x) => x.body.includes("webhook.test"))
    )
    expect(verify(rotated, second).type).toBe("webhook.test")
    expect(verify(secret, second).type).toBe("webhook.test")

    // Disable, enable.
    await submit(page, page.getByRole("button", { name: "Disable" }))
    expect(await flashText(page)).toEqual(["The endpoint is disabled: nothing is sent to it until you enable it."])
    expect(await page.locator("dl.facts-rows").textContent()).toContain("Disabled")
    await submit(page, page.getByRole("button", { name: "Enable" }))
    expect(await flashText(page)).toEqual(["The endpoint is enabled: events are sent to it again."])
    expect(await page.locator("dl.facts-rows").textContent()).toContain("Enabled")

    // Edit: the URL must still be HTTPS; then a new selection of event types.
    const editUrl = page.locator("#field-url")
    await editUrl.fill("http://127.0.0.1/nope")
    await submit(page, page.getByRole("button", { name: "Save" }))
    expect(await page.locator("#field-url-error").textContent()).toBe("The URL must use https.")
    await editUrl.fill(r.url)
    await page.getByRole("checkbox", { name: "shipment.delivered" }).check()
    await submit(page, page.getByRole("button", { name: "Save" }))
    expect(await flashText(page)).toEqual(["The endpoint is saved."])
    expect(await page.getByRole("checkbox", { name: "shipment.delivered" }).isChecked()).toBe(true)
    expect(await page.getByRole("checkbox", { name: "shipment.booked" }).isChecked()).toBe(true)

    // Recover since a UTC time: a malformed one is refused next to the field, a past one queues.
    const since = page.getByLabel("Since (UTC)")
    await since.fill("2999-01-01T00:00")
    await submit(page, page.getByRole("button", { name: "Recover" }))
    expect(await page.locator("#field-since-error").textContent()).toBe("Pick a time in the past.")
    await expectAxeClean(page)
    await page.getByLabel("Since (UTC)").fill("2020-01-01T00:00")
    await submit(page, page.getByRole("button", { name: "Recover" }))
    expect(await flashText(page)).toEqual([
      "Nothing to recover: the endpoint got every event it selected since that time."
    ])
    // The receiver fails one delivery: the log shows the 500 and its answer; recovering sends it again.
    // Retry-After holds the dispatcher's own retry back (5 s otherwise), so only Recover sends it again.
    r.setHandler((_req, res) => res.writeHead(500, { "retry-after": "3600" }).end("busy, try later"))
    const failedTrackNo = await bookOne(h.url, user.account.liveKey)
    const failed = verify(
      rotated,
      await waitFor("the failing delivery", () => r.received.find((x) => x.body.includes(failedTrackNo)))
    )
    r.setHandler((_req, res) => res.end("ok"))
    const failedRow = log.getByRole("row").filter({ hasText: failed.id })
    await reloadUntil(
      page,
      "the failed attempt in the log",
      async () => (await failedRow.count()) > 0 && ((await failedRow.textContent()) ?? "").includes("HTTP 500")
    )
    expect(await failedRow.textContent()).toContain("busy, try later")
    await page.getByLabel("Since (UTC)").fill("2020-01-01T00:00")
    await submit(page, page.getByRole("button", { name: "Recover" }))
    expect(await flashText(page)).toEqual([
      "Every event since that time that the endpoint selected and did not get is queued again."
    ])
    await waitFor("the recovered delivery", () => {
      const got = r.received.filter((x) => x.headers["webhook-id"] === failed.id)
      return got.length >= 2 ? got : undefined
    })

    // Delete, after a confirmation page.
    await page.getByRole("link", { name: "Delete…" }).click()
    await page.waitForURL(`${endpointUrl}/delete`)
    expect(await page.title()).toBe("Delete the endpoint? — Waybill")
    await expectAxeClean(page)
    await screenshot(page, "webhooks-delete")
    await submit(page, page.getByRole("button", { name: "Delete endpoint" }))
    expect(new URL(page.url()).pathname).toBe("/portal/webhooks")
    expect(await flashText(page)).toEqual(["The endpoint is deleted, with its queued deliveries and its log."])
    expect(await page.getByRole("table", { name: "Endpoints" }).textContent()).toContain("No endpoint yet")
    const gone = await page.goto(endpointUrl)
    expect(gone?.status()).toBe(404)
  })

  it("answers 404 for another account's endpoint, as for one that does not exist", async () => {
    const owner = await portalUser(h)
    const created = await h.run(
      Webhooks.account.add(owner.account.customerNo, {
        url: "https://hooks.example.com/theirs",
        eventTypes: ["shipment.booked"]
      })
    )
    const stranger = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, stranger)
    for (const path of ["", "/delete"]) {
      const answer = await page.goto(`${h.url}/portal/webhooks/${created.endpoint.id}${path}`)
      expect(answer?.status()).toBe(404)
    }
    await page.goto(`${h.url}/portal/webhooks`)
    expect(await page.getByRole("table", { name: "Endpoints" }).textContent()).not.toContain("theirs")
    // A cursor that is not one of the list's is a 400 page, not a 500.
    for (const path of ["/portal/webhooks", `/portal/webhooks/${created.endpoint.id}`]) {
      const answer = await page.goto(`${h.url}${path}?starting_after=not-a-cursor`)
      expect(answer?.status()).toBe(path === "/portal/webhooks" ? 400 : 404)
    }
  })
})
