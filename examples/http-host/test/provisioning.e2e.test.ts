/**
 * Account provisioning end to end through the real host: the verification e-mail is read from
 * the file mailer's `.eml` files (parsed by `mailparser`, as a mail client would), the whole
 * flow runs with the code and with the link, the resulting key books a shipment, and every
 * wrong turn gets a clear answer. Time moves on a controlled clock, never by waiting.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { request as httpRequest } from "node:http"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import { Config, Provisioning, ProvisioningStore } from "@waybill/core"
import { simpleParser } from "mailparser"
import { bookOne, e2eConfig, OPERATOR_TOKEN, startHost, type TestHost, clockOf, testClock } from "./harness.js"
import { action, codeAndLink, PASSWORD, recipient, STEP1 } from "./provisioning.helpers.js"

const { clock, time, now } = testClock()

/** Provisioning limits high enough for one host to serve every test from 127.0.0.1. */
const config = {
  ...e2eConfig,
  provisioning: {
    ...Config.provisioningDefaults,
    perIpHour: { requests: 10_000, windowSeconds: 3600 },
    perIpDay: { requests: 10_000, windowSeconds: 86400 }
  }
}

let t: TestHost
let mailDir: string
let n = 0
/**
 * A fresh business address on its own registrable domain (the per-domain limit is 20 a day and
 * counts `x.example.com` as `example.com`, so each address gets a name of its own under `.example`).
 */
const newEmail = () => {
  n += 1
  return `ada.${n}@acme-${n}-${process.pid}.example`
}

/** The newest verification e-mail to `to` in the file mailer's folder: its code and link, and the `To` as written. */
const latestMail = async (dir: string, to: string) => {
  const files = readdirSync(dir).sort()
  for (const file of files.reverse()) {
    const mail = await simpleParser(readFileSync(join(dir, file)))
    if (recipient(mail) !== to.toLowerCase()) continue
    const found = codeAndLink(mail)
    codesSeen.add(found.code)
    return { ...found, to: mail.to !== undefined && !Array.isArray(mail.to) ? mail.to.text : "" }
  }
  throw new Error(`no mail to ${to}`)
}

const mailsTo = async (dir: string, to: string) => {
  let count = 0
  for (const file of readdirSync(dir)) {
    const mail = await simpleParser(readFileSync(join(dir, file)))
    if (mail.to !== undefined && !Array.isArray(mail.to) && mail.to.text.toLowerCase() === to.toLowerCase()) count++
  }
  return count
}

const preRegister = async (email = newEmail()) => {
  const r = await action(t.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
  expect(r.status).toBe(200)
  return { email, idx: r.body.data.wait_idx as string, answer: r }
}

const verified = async () => {
  const p = await preRegister()
  const { code } = await latestMail(mailDir, p.email)
  const v = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: code })
  expect(v.status).toBe(200)
  const c = await action(t.url, "pre-register-check", { idx: p.idx, email_address: p.email })
  expect(c.status).toBe(200)
  return { ...p, code, validationKey: c.body.data.validation_key as string }
}

const registration = (idx: string) =>
  t.run(Effect.flatMap(ProvisioningStore, (s) => s.find(idx))).then((o) => Option.getOrThrow(o))

/** Everything the host logged while these tests ran, and every code the e-mails carried. */
const logged: Array<string> = []
const codesSeen = new Set<string>()
const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
  vi.spyOn(console, level).mockImplementation((...args: Array<unknown>) => {
    logged.push(args.map((a) => (typeof a === "string" ? a : (JSON.stringify(a) ?? String(a)))).join(" "))
  })
)

/** Every host of this file logs at info level, so the secrets test reads every line. */
const infoLogs = { level: LogLevel.Info }

beforeAll(async () => {
  t = await startHost({ clock, config, log: infoLogs })
  mailDir = join(t.dir, "waybill.db.mail")
})
afterAll(() => t.close())

describe("provisioning: links never come from request headers", () => {
  it("a forged Host header does not reach the e-mailed verification link", async () => {
    const email = newEmail()
    const body = new URLSearchParams({ email_address: email, password: PASSWORD, es_code: "" }).toString()
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${t.url}/api/v1/accountsetup/?action=pre-register`,
        {
          method: "POST",
          headers: {
            host: "evil.attacker.example",
            "content-type": "application/x-www-form-urlencoded",
            "content-length": Buffer.byteLength(body)
          }
        },
        (res) => {
          res.resume()
          res.on("end", () => resolve(res.statusCode ?? 0))
        }
      )
      req.on("error", reject)
      req.end(body)
    })
    expect(status).toBe(200)
    const { link } = await latestMail(mailDir, email)
    expect(link.startsWith(`${t.url}/api/v1/accountsetup/verify/?token=`)).toBe(true)
    expect(link).not.toContain("evil.attacker.example")
  })
})

describe("provisioning: the happy path", () => {
  it("pre-register -> verify (code) -> check -> start -> step1 -> step2 -> payment check, then books", async () => {
    const email = newEmail()
    const pre = await action(t.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(pre.status).toBe(200)
    expect(pre.headers.get("cache-control")).toBe("no-store")
    expect(pre.body.error).toBeNull()
    expect(pre.body.data).toEqual({
      result: "success",
      message: expect.any(String),
      wait_idx: expect.stringMatching(/^wr_[A-Za-z0-9_-]{22}$/),
      verify_expires: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      is_validated: "N"
    })
    const expires = Date.parse(pre.body.data.verify_expires)
    expect(expires - now()).toBeGreaterThan(9 * 60_000)
    expect(expires - now()).toBeLessThanOrEqual(10 * 60_000)
    const idx = pre.body.data.wait_idx as string

    const { code } = await latestMail(mailDir, email)
    // The code is in the e-mail only: never in an answer or a header.
    const headerText = [...pre.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n")
    expect(pre.raw + headerText).not.toContain(code)
    // The password is stored only as an scrypt hash.
    const stored = await registration(idx)
    expect(stored.passwordHash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$/)
    expect(JSON.stringify(stored)).not.toContain(PASSWORD)
    expect(JSON.stringify(stored)).not.toContain(code)

    const notYet = await action(t.url, "pre-register-check", { idx, email_address: email })
    expect(notYet.status).toBe(403)

    const v = await action(t.url, "pre-register-verify", { idx, email_address: email, verify_code: code })
    expect(v.status).toBe(200)
    expect(v.body.data).toEqual({ result: "success", message: "Email verified." })
    expect(v.raw).not.toContain(code)

    const c = await action(t.url, "pre-register-check", {
      idx,
      email_address: email.toUpperCase().replace("ADA", "ada")
    })
    expect(c.status).toBe(200)
    expect(c.body.data).toEqual({
      result: "success",
      is_validated: "Y",
      validation_key: expect.stringMatching(/^vk_[A-Za-z0-9_-]{43}$/)
    })
    const validation_key = c.body.data.validation_key as string

    const step1Early = await action(t.url, "step1", { validation_key, ...STEP1 })
    expect(step1Early.status).toBe(409)
    expect(step1Early.body.error?.message).toMatch(/start/)

    const s = await action(t.url, "start", { validation_key })
    expect(s.status).toBe(200)
    expect(s.body.data).toEqual({
      result: "success",
      customer_no: expect.stringMatching(/^[1-9]\d{6}$/),
      frequent_caller_id: "",
      has_firmographics: "N"
    })
    const again = await action(t.url, "start", { validation_key })
    expect(again.body.data.customer_no).toBe(s.body.data.customer_no)
    const customerNo = s.body.data.customer_no as string

    const one = await action(t.url, "step1", { validation_key, ...STEP1 })
    expect(one.status).toBe(200)
    expect(one.body.data).toEqual({
      result: "success",
      message: expect.stringMatching(/shown only once/),
      customer_no: customerNo,
      user: { email_address: email, first_name: "Ada", last_name: "Lopez", status: "active" },
      api_keys: { production: expect.stringMatching(/^wb_live_/), test: expect.stringMatching(/^wb_test_/) }
    })
    const repeat = await action(t.url, "step1", { validation_key, ...STEP1 })
    expect(repeat.status).toBe(200)
    expect(repeat.body.data.api_keys).toBeUndefined()

    const two = await action(t.url, "step2", {
      validation_key,
      billing_addr2: "Suite 400",
      billing_city: "Evanston",
      billing_state: "IL",
      billing_zip_postal: "60201"
    })
    expect(two.status).toBe(200)
    expect(two.body.data).toEqual({ result: "success", message: "Billing address updated." })

    const pay = await action(t.url, "registered-with-stripe-check", { validation_key })
    expect(pay.status).toBe(200)
    expect(pay.body.data).toEqual({ result: "success", provider: "stripe", registered: "N" })
    // With the host's PaymentRegistry the same check asks the billing system for this customer.
    const activated = one.body.data.customer_no as string
    const asked: Array<string> = []
    const registry = Layer.succeed(Provisioning.PaymentRegistry, {
      isRegistered: (customer: string, provider: string) =>
        Effect.sync(() => {
          asked.push(`${customer}/${provider}`)
          return customer === activated
        })
    })
    const checked = await t.run(
      Provisioning.paymentCheck({ validationKey: validation_key }).pipe(Effect.provide(registry))
    )
    expect(checked).toEqual({ registered: true })
    expect(asked).toEqual([`${activated}/stripe`])

    const trackNo = await bookOne(t.url, one.body.data.api_keys.production)
    expect(trackNo).toMatch(/^\d{6,8}$/)

    const stored2 = await registration(idx)
    expect(stored2.profile).toMatchObject({ customerName: "Acme Logistics LLC", billingCity: "Evanston" })
  })

  it("the verification link: GET shows a confirm page and verifies nothing, POST verifies once", async () => {
    const p = await preRegister()
    const { link } = await latestMail(mailDir, p.email)
    const page = await fetch(link)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.headers.get("referrer-policy")).toBe("no-referrer")
    const html = await page.text()
    expect(html).toContain('<form method="post"')
    // In the shared look, on a phone too, with a policy that allows only the page's own stylesheet.
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(html).toContain('<span class="wordmark">Waybill</span>')
    expect(html).toContain('<button type="submit">Confirm my e-mail address</button>')
    const policy = page.headers.get("content-security-policy") ?? ""
    expect(policy).not.toContain("unsafe-inline")
    expect(policy).toContain("default-src 'none'")
    const styles = [...html.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1]!)
    expect(styles).toHaveLength(1)
    const hash = createHash("sha256").update(styles[0]!, "utf8").digest("base64")
    expect(policy).toContain(`style-src 'sha256-${hash}'`)
    expect(html).not.toMatch(/\sstyle=|<script/)
    // A prefetching scanner's GET did not verify.
    expect((await action(t.url, "pre-register-check", { idx: p.idx, email_address: p.email })).status).toBe(403)

    const token = new URL(link).searchParams.get("token")!
    const confirm = () =>
      fetch(link, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString()
      })
    const first = await confirm()
    expect(first.status).toBe(200)
    expect(await first.text()).toContain("Email verified.")
    expect(first.headers.get("content-security-policy")).toBe(policy)
    const second = await confirm()
    expect(second.status).toBe(400)
    expect(await second.text()).toContain("This verification link is not valid")
    expect((await fetch(link)).status).toBe(400)

    const c = await action(t.url, "pre-register-check", { idx: p.idx, email_address: p.email })
    expect(c.status).toBe(200)
    expect(c.body.data.validation_key).toMatch(/^vk_/)
  })

  it("account show --json prints the account, its primary user and key slots", async () => {
    const v = await verified()
    const s = await action(t.url, "start", { validation_key: v.validationKey })
    await action(t.url, "step1", { validation_key: v.validationKey, ...STEP1 })
    const customerNo = s.body.data.customer_no as string
    const { stdout } = await promisify(execFile)(
      "pnpm",
      ["--silent", "waybill", "account", "show", customerNo, "--json", "--db", join(t.dir, "waybill.db")],
      { cwd: join(__dirname, "..") }
    )
    const shown = JSON.parse(stdout)
    expect(shown).toMatchObject({
      customer_no: customerNo,
      name: "Acme Logistics LLC",
      primary_user: { email_address: v.email, first_name: "Ada", last_name: "Lopez", status: "active" }
    })
    expect(shown.keys.map((k: { mode: string; status: string }) => `${k.mode}:${k.status}`).sort()).toEqual([
      "live:active",
      "test:active"
    ])
    expect(stdout).not.toContain(PASSWORD)
  })

  it("the payment check answers Y once an operator records payment (CLI or /ops/v1), N once cleared", async () => {
    const v = await verified()
    const customerNo = (await action(t.url, "start", { validation_key: v.validationKey })).body.data
      .customer_no as string
    const check = async () => {
      const r = await action(t.url, "registered-with-stripe-check", { validation_key: v.validationKey })
      expect(r.status).toBe(200)
      return r.body.data
    }
    expect(await check()).toEqual({ result: "success", provider: "stripe", registered: "N" })

    // The CLI, on the host's database while it serves.
    const waybill = async (...args: Array<string>) => {
      const { stdout } = await promisify(execFile)(
        "pnpm",
        ["--silent", "waybill", ...args, "--json", "--db", join(t.dir, "waybill.db")],
        { cwd: join(__dirname, "..") }
      )
      return JSON.parse(stdout)
    }
    expect(await waybill("account", "payment", "--customer", customerNo)).toEqual({
      customer_no: customerNo,
      provider: "stripe",
      enabled: false,
      enabled_at: null
    })
    const enabled = await waybill("account", "payment", "--customer", customerNo, "--enable")
    expect(enabled).toMatchObject({ customer_no: customerNo, provider: "stripe", enabled: true })
    expect(Date.parse(enabled.enabled_at)).not.toBeNaN()
    expect(await check()).toMatchObject({ registered: "Y" })
    expect(await waybill("account", "payment", "--customer", customerNo, "--disable")).toMatchObject({
      enabled: false,
      enabled_at: null
    })
    expect(await check()).toMatchObject({ registered: "N" })

    // The operator API.
    const payment = async (method: string, no = customerNo, token = OPERATOR_TOKEN) => {
      const r = await fetch(`${t.url}/ops/v1/accounts/${no}/payment`, {
        method,
        headers: { authorization: `Bearer ${token}` }
      })
      return { status: r.status, body: (await r.json()) as any }
    }
    const put = await payment("PUT")
    expect(put.status).toBe(200)
    expect(put.body.data).toMatchObject({ customer_no: customerNo, provider: "stripe", enabled: true })
    // Recording it again keeps the first time.
    expect((await payment("PUT")).body.data.enabled_at).toBe(put.body.data.enabled_at)
    expect((await payment("GET")).body.data).toEqual(put.body.data)
    expect(await check()).toMatchObject({ registered: "Y" })
    expect((await payment("DELETE")).body.data).toEqual({
      customer_no: customerNo,
      provider: "stripe",
      enabled: false,
      enabled_at: null
    })
    expect(await check()).toMatchObject({ registered: "N" })
    // Only for accounts that exist, only with the operator token.
    expect(await payment("PUT", "9999999")).toEqual({
      status: 404,
      body: { data: null, error: { message: "No account has this customer number.", exception: null } }
    })
    expect((await payment("PUT", customerNo, "wrong-token")).status).toBe(401)
    expect((await payment("POST")).status).toBe(405)
    expect(await check()).toMatchObject({ registered: "N" })
    // Another registration's customer is not affected by this one's enablement.
    expect((await payment("PUT")).status).toBe(200)
    const other = await verified()
    expect((await action(t.url, "start", { validation_key: other.validationKey })).status).toBe(200)
    const otherCheck = await action(t.url, "registered-with-stripe-check", { validation_key: other.validationKey })
    expect(otherCheck.body.data.registered).toBe("N")
  })
})

describe("provisioning: wrong turns", () => {
  it.each([
    ["free-mail", "ada@gmail.com"],
    ["free-mail with case and trailing dot", "Ada@GMail.COM."],
    ["free-mail subdomain", "ada@eu.mail.yahoo.com"],
    ["disposable", "ada@mailinator.com"]
  ])("refuses a %s address", async (_, email) => {
    const r = await action(t.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(r.status).toBe(400)
    expect(r.body.data).toBeNull()
    expect(r.body.error?.message).toMatch(/business e-mail/)
  })

  it("refuses a weak password without echoing it", async () => {
    for (const password of ["short", "passwordpassword"]) {
      const r = await action(t.url, "pre-register", { email_address: newEmail(), password, es_code: "" })
      expect(r.status).toBe(400)
      expect(r.body.error?.message).toMatch(/password/)
      expect(r.raw).not.toContain(password)
    }
  })

  it("answers the same for an address registered before (no existence oracle)", async () => {
    const email = newEmail()
    const a = await preRegister(email)
    const b = await preRegister(email)
    expect(Object.keys(b.answer.body.data)).toEqual(Object.keys(a.answer.body.data))
    expect(b.answer.body.data.message).toBe(a.answer.body.data.message)
    expect(b.idx).not.toBe(a.idx)
  })

  it("an unknown idx or a wrong address for the idx", async () => {
    const p = await preRegister()
    const { code } = await latestMail(mailDir, p.email)
    for (const fields of [
      { idx: "wr_unknownunknownunknown", email_address: p.email, verify_code: code },
      { idx: p.idx, email_address: "someone@else-corp.example.com", verify_code: code }
    ]) {
      const r = await action(t.url, "pre-register-verify", fields)
      expect(r.status).toBe(400)
      expect(r.body.error?.message).toBe("No pending registration matches the idx given.")
    }
    expect((await action(t.url, "pre-register-resend", { idx: "wr_nope" })).status).toBe(400)
  })

  it("a code is single use: after verification neither a wrong code nor the used one answers success", async () => {
    const p = await verified()
    const wrong = p.code === "000000" ? "111111" : "000000"
    for (const code of [wrong, p.code]) {
      const r = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: code })
      expect(r.status).toBe(409)
      expect(r.body).toEqual({
        data: null,
        error: { message: "The e-mail address is already verified.", exception: null }
      })
    }
    // The registration carries on: the validation key still starts it.
    expect((await action(t.url, "start", { validation_key: p.validationKey })).status).toBe(200)
  })

  it("the 6th wrong code is refused with 429, and even the right code is dead until a resend", async () => {
    const p = await preRegister()
    const { code } = await latestMail(mailDir, p.email)
    const wrong = code === "000000" ? "111111" : "000000"
    for (let i = 0; i < 5; i++) {
      const r = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: wrong })
      expect(r.status).toBe(400)
      expect(r.body.error?.message).toBe("The verification code is not valid.")
    }
    const sixth = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: wrong })
    expect(sixth.status).toBe(429)
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    const right = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: code })
    expect(right.status).toBe(429)
    expect((await registration(p.idx)).state.totalFailures).toBe(5)
  })

  it("resend: cooldown with Retry-After, new code replaces the old, failures kept", async () => {
    const p = await preRegister()
    const first = await latestMail(mailDir, p.email)
    await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: "12345x" })
    const soon = await action(t.url, "pre-register-resend", { idx: p.idx })
    expect(soon.status).toBe(429)
    const retryAfter = Number(soon.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    time.offsetMs += 61_000
    const ok = await action(t.url, "pre-register-resend", { idx: p.idx })
    expect(ok.status).toBe(200)
    expect(ok.body.data).toMatchObject({ result: "success", is_validated: "N" })
    expect(await mailsTo(mailDir, p.email)).toBe(2)
    const second = await latestMail(mailDir, p.email)
    expect((await registration(p.idx)).state.totalFailures).toBe(1)
    if (second.code !== first.code) {
      const old = await action(t.url, "pre-register-verify", {
        idx: p.idx,
        email_address: p.email,
        verify_code: first.code
      })
      expect(old.status).toBe(400)
    }
    // The first e-mail's link died with it.
    expect((await fetch(first.link)).status).toBe(400)
    const v = await action(t.url, "pre-register-verify", {
      idx: p.idx,
      email_address: p.email,
      verify_code: second.code
    })
    expect(v.status).toBe(200)
  })

  it("an expired code is refused; a resend brings a fresh window", async () => {
    const p = await preRegister()
    const { code } = await latestMail(mailDir, p.email)
    time.offsetMs += 10 * 60_000 + 1000
    const r = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: code })
    expect(r.status).toBe(400)
    expect(r.body.error?.message).toMatch(/expired/)
    const resent = await action(t.url, "pre-register-resend", { idx: p.idx })
    expect(resent.status).toBe(200)
    const fresh = await latestMail(mailDir, p.email)
    const v = await action(t.url, "pre-register-verify", {
      idx: p.idx,
      email_address: p.email,
      verify_code: fresh.code
    })
    expect(v.status).toBe(200)
  })

  it("a replaced or expired validation key is refused with 401", async () => {
    const v = await verified()
    const newer = await action(t.url, "pre-register-check", { idx: v.idx, email_address: v.email })
    const old = await action(t.url, "start", { validation_key: v.validationKey })
    expect(old.status).toBe(401)
    expect(old.body.error?.message).toMatch(/validation_key/)
    expect((await action(t.url, "start", { validation_key: "vk_madeup" })).status).toBe(401)
    const key = newer.body.data.validation_key as string
    expect((await action(t.url, "start", { validation_key: key })).status).toBe(200)
    time.offsetMs += 61 * 60_000
    expect((await action(t.url, "step1", { validation_key: key, ...STEP1 })).status).toBe(401)
  })

  it("step2 before step1, missing fields, unknown action, wrong media type", async () => {
    const v = await verified()
    await action(t.url, "start", { validation_key: v.validationKey })
    const early = await action(t.url, "step2", {
      validation_key: v.validationKey,
      billing_city: "Evanston",
      billing_state: "IL",
      billing_zip_postal: "60201"
    })
    expect(early.status).toBe(409)
    const missing = await action(t.url, "step1", { validation_key: v.validationKey, first_name: "Ada" })
    expect(missing.status).toBe(400)
    expect(missing.body.error?.message).toMatch(/last_name/)
    expect((await action(t.url, "sign-up")).status).toBe(400)
    const json = await fetch(`${t.url}/api/v1/accountsetup/?action=start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}"
    })
    expect(json.status).toBe(415)
    expect((await fetch(`${t.url}/api/v1/accountsetup/?action=start`)).status).toBe(405)
  })

  it("a second registration of an address with an account cannot start another (409)", async () => {
    const email = newEmail()
    const first = await preRegister(email)
    const c1 = await latestMail(mailDir, email)
    await action(t.url, "pre-register-verify", { idx: first.idx, email_address: email, verify_code: c1.code })
    const k1 = (await action(t.url, "pre-register-check", { idx: first.idx, email_address: email })).body.data
      .validation_key
    expect((await action(t.url, "start", { validation_key: k1 })).status).toBe(200)
    const second = await preRegister(email)
    const c2 = await latestMail(mailDir, email)
    await action(t.url, "pre-register-verify", { idx: second.idx, email_address: email, verify_code: c2.code })
    const k2 = (await action(t.url, "pre-register-check", { idx: second.idx, email_address: email })).body.data
      .validation_key
    const dup = await action(t.url, "start", { validation_key: k2 })
    expect(dup.status).toBe(409)
  })

  it("email_address matches in any case; the e-mail goes to the address as typed", async () => {
    n += 1
    const typed = `Ada.Case${n}@Acme-Case-${n}-${process.pid}.example`
    const canonical = typed.replace(/@.*$/, (d) => d.toLowerCase())
    const p = await preRegister(typed)
    const mail = await latestMail(mailDir, typed)
    expect(mail.to).toBe(canonical)
    const v = await action(t.url, "pre-register-verify", {
      idx: p.idx,
      email_address: typed.toLowerCase(),
      verify_code: mail.code
    })
    expect(v.status).toBe(200)
    const c = await action(t.url, "pre-register-check", { idx: p.idx, email_address: typed.toUpperCase() })
    expect(c.status).toBe(200)
    const validation_key = c.body.data.validation_key as string
    expect((await action(t.url, "start", { validation_key })).status).toBe(200)
    const one = await action(t.url, "step1", { validation_key, ...STEP1 })
    expect(one.body.data.user.email_address).toBe(canonical)
  })

  it("a registration stored in mixed case (before addresses were compared without case) is still found", async () => {
    const p = await preRegister()
    const { code } = await latestMail(mailDir, p.email)
    const row = await registration(p.idx)
    const stored = `ADA.${row.email.slice(4)}`
    expect(
      await t.run(
        Effect.flatMap(ProvisioningStore, (s) => s.update({ ...row, email: stored, version: row.version + 1 }))
      )
    ).toBe(true)
    const v = await action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: code })
    expect(v.status).toBe(200)
  })

  const toStarted = async (email: string) => {
    const p = await preRegister(email)
    const { code } = await latestMail(mailDir, email)
    await action(t.url, "pre-register-verify", { idx: p.idx, email_address: email, verify_code: code })
    const key = (await action(t.url, "pre-register-check", { idx: p.idx, email_address: email })).body.data
      .validation_key as string
    return action(t.url, "start", { validation_key: key })
  }

  it("an address with an account, registered again in another case, cannot start another (409)", async () => {
    const email = newEmail()
    expect((await toStarted(email)).status).toBe(200)
    const again = email.replace(/^ada/, "ADA")
    const dup = await toStarted(again)
    expect(dup.status).toBe(409)
    expect(dup.body.error?.message).toBe("This e-mail address already has an account.")
  })

  // Rows keep the address as typed; the store compares `lower(email)`.
  it("an address with an account typed in mixed case, registered again in lowercase, cannot start another", async () => {
    const email = newEmail().replace(/^ada/, "Ada")
    expect((await toStarted(email)).status).toBe(200)
    const dup = await toStarted(email.toLowerCase())
    expect(dup.status).toBe(409)
  })

  it("50 concurrent wrong guesses against one registration stop at the limit exactly", async () => {
    const p = await preRegister()
    const { code } = await latestMail(mailDir, p.email)
    const wrong = code === "999999" ? "888888" : "999999"
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        action(t.url, "pre-register-verify", { idx: p.idx, email_address: p.email, verify_code: wrong })
      )
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 400)).toHaveLength(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(45)
    const stored = await registration(p.idx)
    expect(stored.state.otpFailures).toBe(5)
    expect(stored.state.totalFailures).toBe(5)
  })
})

/** A host of its own with some provisioning limits changed (the rest of `e2eConfig` as is). */
/**
 * A clock that starts at 12:30:00 UTC (the middle of an hour and of a day) and runs at real
 * speed: the provisioning limits count in fixed, epoch-aligned hour and day windows, so on the
 * real clock a test running across the top of an hour or midnight would see its count reset.
 */
const midWindowClock = (): Clock.Clock => {
  const startedAt = Date.now()
  const day = 86_400_000
  const base = Math.floor(startedAt / day) * day + 12.5 * 3_600_000
  return clockOf(() => base + (Date.now() - startedAt))
}

const limitedHost = (
  limits: Partial<typeof Config.provisioningDefaults>,
  options: Omit<Parameters<typeof startHost>[0], "config"> = {}
) =>
  startHost({
    clock: midWindowClock(),
    log: infoLogs,
    ...options,
    config: { ...e2eConfig, provisioning: { ...Config.provisioningDefaults, ...limits } }
  })

describe("provisioning: limits and mail failure on their own hosts", () => {
  it("over the per-address limit: 429 with Retry-After", async () => {
    const h = await limitedHost({ perIpHour: { requests: 2, windowSeconds: 3600 } })
    try {
      const answers = []
      for (let i = 0; i < 3; i++)
        answers.push(await action(h.url, "pre-register", { email_address: newEmail(), password: PASSWORD }))
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429])
      expect(Number(answers[2]!.headers.get("retry-after"))).toBeGreaterThan(0)
    } finally {
      await h.close()
    }
  })

  it("over the per-domain limit: 429 with Retry-After, other registrable domains unaffected", async () => {
    const h = await limitedHost({
      perIpHour: { requests: 100, windowSeconds: 3600 },
      perDomainDay: { requests: 2, windowSeconds: 86400 }
    })
    try {
      const at = (local: string, domain: string) =>
        action(h.url, "pre-register", { email_address: `${local}@${domain}`, password: PASSWORD })
      expect((await at("a", "one-corp.example")).status).toBe(200)
      // Case and a trailing dot are the same domain.
      expect((await at("b", "ONE-corp.example.")).status).toBe(200)
      const third = await at("c", "one-corp.example")
      expect(third.status).toBe(429)
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0)
      expect((await at("a", "two-corp.example")).status).toBe(200)
      // A company under a country's second level (co.uk) is its own registrable domain.
      expect((await at("a", "one-corp.co.uk")).status).toBe(200)
      expect((await at("a", "two-corp.co.uk")).status).toBe(200)
    } finally {
      await h.close()
    }
  })

  it("wildcard subdomains share their registrable domain's budget", async () => {
    const h = await limitedHost({
      perIpHour: { requests: 100, windowSeconds: 3600 },
      perDomainDay: { requests: 3, windowSeconds: 86400 }
    })
    try {
      const at = (domain: string) =>
        action(h.url, "pre-register", { email_address: `ops@${domain}`, password: PASSWORD })
      const statuses = []
      for (const sub of ["a1", "a2", "A3", "x.a4", "a5"])
        statuses.push((await at(`${sub}.wildcard-farm.example`)).status)
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      expect((await at("wildcard-farm.example")).status).toBe(429)
      expect((await at("mail.acme.co.uk")).status).toBe(200)
      expect((await at("eu.acme.co.uk")).status).toBe(200)
      expect((await at("acme.co.uk")).status).toBe(200)
      expect((await at("us.acme.co.uk")).status).toBe(429)
    } finally {
      await h.close()
    }
  })

  it("pre-register-resend spends the client address's budget: one client cannot mail every registration it knows", async () => {
    const h = await limitedHost(
      { resendCooldownSeconds: 0, perIpHour: { requests: 2, windowSeconds: 3600 } },
      { trustedProxies: ["127.0.0.0/8"] }
    )
    const dir = join(h.dir, "waybill.db.mail")
    const from = (client: string) => ({ "x-forwarded-for": client })
    try {
      // Registrations made from three addresses; one other client then asks for their e-mails.
      const regs = []
      for (const i of [1, 2, 3]) {
        const email = newEmail()
        const pre = await action(
          h.url,
          "pre-register",
          { email_address: email, password: PASSWORD },
          from(`203.0.113.${i}`)
        )
        expect(pre.status).toBe(200)
        regs.push({ email, idx: pre.body.data.wait_idx as string })
      }
      const client = from("198.51.100.7")
      expect((await action(h.url, "pre-register-resend", { idx: regs[0]!.idx }, client)).status).toBe(200)
      expect((await action(h.url, "pre-register-resend", { idx: regs[1]!.idx }, client)).status).toBe(200)
      const before = await latestMail(dir, regs[2]!.email)
      const third = await action(h.url, "pre-register-resend", { idx: regs[2]!.idx }, client)
      expect(third.status).toBe(429)
      expect(third.headers.get("cache-control")).toBe("no-store")
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0)
      // It says what was refused: another e-mail, not a registration.
      expect(third.body).toEqual({
        data: null,
        error: {
          message: "Too many verification e-mails from this client address. Retry after Retry-After seconds.",
          exception: null
        }
      })
      // Nothing was sent and the registration is untouched: its code still verifies.
      expect(await mailsTo(dir, regs[2]!.email)).toBe(1)
      const v = await action(h.url, "pre-register-verify", {
        idx: regs[2]!.idx,
        email_address: regs[2]!.email,
        verify_code: before.code
      })
      expect(v.status).toBe(200)
      // The same budget as pre-register: that client cannot register either.
      const pre = await action(h.url, "pre-register", { email_address: newEmail(), password: PASSWORD }, client)
      expect(pre.status).toBe(429)
      expect(pre.body.error?.message).toBe("Too many registrations. Retry after Retry-After seconds.")
      // Another client address still can resend.
      expect((await action(h.url, "pre-register-resend", { idx: regs[1]!.idx }, from("198.51.100.8"))).status).toBe(200)
    } finally {
      await h.close()
    }
  })

  it("a failed e-mail keeps the registration; resend works once mail is back", async () => {
    let up = false
    const { Layer } = await import("effect")
    const { Mailer, MailFailed } = await import("@waybill/core")
    const FileMailer = await import("@waybill/mail-file")
    let dir = ""
    const h = await startHost({
      log: infoLogs,
      mail: {
        mailer: Layer.succeed(Mailer, {
          send: (m) =>
            up
              ? FileMailer.make({ directory: dir, from: "no-reply@waybill.test" }).send(m)
              : Effect.fail(new MailFailed({ message: "smtp down" }))
        })
      }
    })
    dir = join(h.dir, "mail-back")
    try {
      const email = newEmail()
      const pre = await action(h.url, "pre-register", { email_address: email, password: PASSWORD })
      expect(pre.status).toBe(200)
      const idx = pre.body.data.wait_idx as string
      const stored = Option.getOrThrow(await h.run(Effect.flatMap(ProvisioningStore, (s) => s.find(idx))))
      expect(stored.mailStatus).toBe("failed")
      const stillDown = await action(h.url, "pre-register-resend", { idx })
      expect(stillDown.status).toBe(503)
      up = true
      // No cooldown after a failed send.
      const resent = await action(h.url, "pre-register-resend", { idx })
      expect(resent.status).toBe(200)
      const { code } = await latestMail(dir, email)
      const v = await action(h.url, "pre-register-verify", { idx, email_address: email, verify_code: code })
      expect(v.status).toBe(200)
    } finally {
      await h.close()
    }
  })
})

describe("provisioning: secrets stay out of the logs", () => {
  it("no code, link token or password appears in any log line of this file's hosts", () => {
    for (const spy of spies) spy.mockRestore()
    const text = logged.join("\n")
    expect(codesSeen.size).toBeGreaterThan(10)
    expect(text).toContain("mail-file: wrote Verification e-mail")
    for (const code of codesSeen) expect(text).not.toMatch(new RegExp(`\\b${code}\\b`))
    expect(text).not.toContain(PASSWORD)
    expect(text).not.toMatch(/token=[A-Za-z0-9_-]{20}/)
    expect(text).not.toMatch(/vk_[A-Za-z0-9_-]{20}/)
  })
})
