/**
 * The Account page in a real browser against the real example host: the company details (an
 * operator-made account shows its name; a provisioned one its registration profile), inviting a
 * user (the e-mail is written as an `.eml` file and its link is a live invitation), removing a
 * user after a confirmation page, and editing the IP allowlist (a bad entry is shown next to the
 * field; a good list is saved and enforced by the API). Members see everything, change nothing.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts, Sessions, UserStore, Users } from "@waybill/core"
import { postJson, shipment, startHost, type TestHost } from "./harness.js"
import { action, codeAndLink, PASSWORD, STEP1 } from "./provisioning.helpers.js"
import { expectAxeClean, screenshot, scrollsSideways, useBrowser } from "./browser/browser.js"
import { portalUser, signIn } from "./browser/users.js"

let h: TestHost
beforeAll(async () => {
  h = await startHost()
})
afterAll(async () => {
  await h.close()
})

const browser = useBrowser({ viewport: { width: 1100, height: 800 } })

/** The `.eml` files sent to `to` (the host's development mail folder). */
const mailsTo = async (to: string) => {
  const dir = join(h.dir, "waybill.db.mail")
  const files = readdirSync(dir).filter((f) => f.endsWith(".eml"))
  const parsed = await Promise.all(files.map((f) => simpleParser(readFileSync(join(dir, f)))))
  return parsed.filter((m) => m.to !== undefined && !Array.isArray(m.to) && m.to.text.toLowerCase() === to)
}

describe("the Account page (browser)", () => {
  it("shows the details, invites a user by e-mail, removes one, and edits the allowlist", async () => {
    const account = await h.newAccount("Acme Freight Ltd")
    const owner = await portalUser(h, { account })
    const page = browser.page()
    await signIn(page, h, owner)
    await page.getByRole("link", { name: "Account" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/account")
    const details = page.getByRole("definition")
    expect(await details.allTextContents()).toEqual(expect.arrayContaining(["Acme Freight Ltd", account.customerNo]))
    expect(await page.getByRole("cell", { name: owner.email }).isVisible()).toBe(true)
    await expectAxeClean(page)
    await screenshot(page, "account-page")

    // Invite: the signed-in password is recent, so the form comes straight away.
    await page.getByRole("link", { name: "Invite a user" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/account/invite")
    await expectAxeClean(page)
    // The browser checks the address itself; the server checks it too (a form sent without the check).
    await page.locator('form[aria-label="Invite a user"]').evaluate((f) => ((f as HTMLFormElement).noValidate = true))
    await page.getByLabel("E-mail").fill("not an address")
    await page.getByRole("button", { name: "Send the invitation" }).click()
    expect(await page.locator("#field-email-error").textContent()).toBeTruthy()
    const invited = "new.colleague@example.com"
    await page.getByLabel("E-mail").fill(invited)
    await page.getByLabel("Role").selectOption("member")
    await screenshot(page, "account-invite")
    await page.getByRole("button", { name: "Send the invitation" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/account")
    expect(await page.getByRole("status").first().textContent()).toBe("The invitation is sent.")
    const row = page.getByRole("row", { name: new RegExp(invited.replace(/\./g, "\\.")) })
    expect(await row.textContent()).toContain("invited")

    // The e-mail: a link on the host's base URL whose token is a live invitation for the address.
    const [mail] = await mailsTo(invited)
    expect(mail).toBeDefined()
    const link = /(https?:\/\/\S+\/portal\/invite\/\?token=[A-Za-z0-9_-]+)/.exec(mail!.text ?? "")?.[1]
    expect(link?.startsWith(`${h.url}/portal/invite/?token=`)).toBe(true)
    const token = new URL(link!).searchParams.get("token")!
    const inspected = await h.run(Users.inspectToken(Redacted.make(token), "invite"))
    expect(inspected).toEqual(expect.objectContaining({ _tag: "Some", value: { email: invited } }))

    // Remove, after a confirmation page.
    await page.getByRole("link", { name: `Remove ${invited}` }).click()
    expect(new URL(page.url()).pathname).toMatch(/^\/portal\/account\/users\/usr_[^/]+\/remove$/)
    await expectAxeClean(page)
    await screenshot(page, "account-remove")
    await page.getByRole("button", { name: `Remove ${invited}` }).click()
    expect(await page.getByRole("status").first().textContent()).toBe("The user is removed.")
    expect(await page.getByRole("row", { name: new RegExp(invited.replace(/\./g, "\\.")) }).count()).toBe(0)
    expect(await h.run(Users.list(account.customerNo))).toHaveLength(1)

    // The allowlist: a bad entry is refused next to the field, the text kept.
    const field = page.getByLabel("Allowed addresses")
    await field.fill("10.0.0.0/8\nnot-an-ip")
    await page.getByRole("button", { name: "Save the allowlist" }).click()
    expect(await page.locator("#field-allowlist-error").textContent()).toBe("Not an IP address or CIDR: not-an-ip")
    expect(await field.inputValue()).toBe("10.0.0.0/8\nnot-an-ip")
    await expectAxeClean(page)
    // A good one is saved, and the API enforces it: this test's calls come from 127.0.0.1.
    await field.fill("10.0.0.0/8\n2001:db8::/32")
    await page.getByRole("button", { name: "Save the allowlist" }).click()
    expect(await page.getByRole("status").first().textContent()).toBe("The IP allowlist is saved.")
    expect(await page.locator("ul.allowlist li").allTextContents()).toEqual(["10.0.0.0/8", "2001:db8::/32"])
    const outside = await postJson(
      `${h.url}/api/v1/order/json/`,
      { data: { shipments: [shipment()] } },
      { authorization: `Bearer ${account.liveKey}` }
    )
    expect(outside.status).toBe(403)
    await screenshot(page, "account-allowlist")
    // Emptied: every address again.
    await field.fill("")
    await page.getByRole("button", { name: "Save the allowlist" }).click()
    expect(await page.getByText("Every address is accepted.").isVisible()).toBe(true)
    const shown = await h.run(Accounts.showAccount(account.customerNo))
    expect(shown.account.ipAllowlist).toEqual([])
  })

  it("shows a provisioned account's registration (step1, step2) to its primary user", async () => {
    const email = `ada.${process.pid}@acme-portal.example`
    const pre = await action(h.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(pre.status).toBe(200)
    const idx = pre.body.data.wait_idx as string
    const [mail] = await mailsTo(email)
    const { code } = codeAndLink(mail!)
    expect((await action(h.url, "pre-register-verify", { idx, email_address: email, verify_code: code })).status).toBe(
      200
    )
    const checked = await action(h.url, "pre-register-check", { idx, email_address: email })
    const validation_key = checked.body.data.validation_key as string
    const started = await action(h.url, "start", { validation_key })
    const customerNo = started.body.data.customer_no as string
    expect((await action(h.url, "step1", { validation_key, ...STEP1 })).status).toBe(200)
    const billing = {
      billing_addr2: "Suite 400",
      billing_city: "Evanston",
      billing_state: "IL",
      billing_zip_postal: "60201"
    }
    expect((await action(h.url, "step2", { validation_key, ...billing })).status).toBe(200)

    // The primary user signs in with the password given at pre-register.
    const page = browser.page()
    await signIn(page, h, { email, password: PASSWORD })
    await page.goto(`${h.url}/portal/account`)
    const rows = await page
      .locator(".details-row")
      .evaluateAll((all) => all.map((r) => [r.querySelector("dt")?.textContent, r.querySelector("dd")?.textContent]))
    expect(rows).toEqual(
      expect.arrayContaining([
        ["Company", "Acme Logistics LLC"],
        ["Customer number", customerNo],
        ["Contact", "Ada Lopez"],
        ["Registered with", email],
        ["Phone", "312-555-0100"],
        ["Address", "233 S Wacker Dr, Chicago, IL 60606"],
        ["Billing address", "Suite 400, Evanston, IL 60201"]
      ])
    )
    await expectAxeClean(page)
    await screenshot(page, "account-provisioned")
  })

  it("asks for the password again before inviting when it was not entered recently", async () => {
    const owner = await portalUser(h)
    const page = browser.page()
    await signIn(page, h, owner)
    // A session older than the recent-authentication window: fake it through the store.
    const cookie = (await page.context().cookies()).find((c) => c.name === "waybill_session")!
    await h.run(
      Effect.gen(function* () {
        const id = yield* Sessions.hashToken(cookie.value)
        const now = Date.now()
        yield* Effect.flatMap(UserStore, (s) =>
          s.touchSession(id, { lastSeenAt: now, authenticatedAt: now - Sessions.RECENT_AUTH_MS - 60_000 })
        )
      })
    )
    await page.goto(`${h.url}/portal/account/invite`)
    expect(new URL(page.url()).pathname).toBe("/portal/confirm")
    await page.getByLabel("Password", { exact: true }).fill(owner.password)
    await page.getByRole("button", { name: "Continue" }).click()
    expect(new URL(page.url()).pathname).toBe("/portal/account/invite")
  })

  it("lets a member see the account but change nothing", async () => {
    const owner = await portalUser(h)
    const member = await portalUser(h, { account: owner.account, role: "member" })
    const page = browser.page()
    await signIn(page, h, member)
    await page.goto(`${h.url}/portal/account`)
    expect(await page.getByRole("link", { name: "Invite a user" }).count()).toBe(0)
    expect(await page.getByRole("link", { name: /^Remove / }).count()).toBe(0)
    expect(await page.getByLabel("Allowed addresses").count()).toBe(0)
    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    const forged = await page.request.post(`${h.url}/portal/account/allowlist`, {
      form: { csrf, allowlist: "10.0.0.0/8" },
      headers: { origin: h.url },
      maxRedirects: 0
    })
    expect(forged.status()).toBe(403)
    const invite = await page.goto(`${h.url}/portal/account/invite`)
    expect(invite?.status()).toBe(403)
    const remove = await page.goto(`${h.url}/portal/account/users/${owner.userId}/remove`)
    expect(remove?.status()).toBe(403)
    await expectAxeClean(page)
  })

  it("fits a 375px-wide phone without scrolling sideways", async () => {
    const user = await portalUser(h)
    const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })
    const page = await phone.newPage()
    await signIn(page, h, user)
    await page.goto(`${h.url}/portal/account`)
    expect(await scrollsSideways(page)).toBe(false)
    await expectAxeClean(page)
  })
})
