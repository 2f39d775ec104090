/**
 * Provisioning with real e-mail: the example host sends through `@waybill/mail-smtp` to an SMTP
 * server on loopback (`smtp-server`); each message that arrives is parsed by `mailparser`, and
 * the whole flow is completed from it exactly as a user would, once with the code and once with
 * the link.
 */
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Redacted from "effect/Redacted"
import { Config } from "@waybill/core"
import { type ParsedMail, simpleParser } from "mailparser"
import { SMTPServer } from "smtp-server"
import { bookOne, e2eConfig, startHost, type TestHost } from "./harness.js"
import { action, codeAndLink, confirmLink, PASSWORD, recipient, STEP1 } from "./provisioning.helpers.js"

const received: Array<ParsedMail> = []
let smtp: SMTPServer
let t: TestHost

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === "waybill" && auth.password === "mail-secret") callback(null, { user: "waybill" })
      else callback(new Error("Invalid username or password"))
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push(mail)
          callback()
        },
        (err: Error) => callback(err)
      )
    }
  })
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()))
  const port = (smtp.server.address() as AddressInfo).port
  t = await startHost({
    config: {
      ...e2eConfig,
      provisioning: { ...Config.provisioningDefaults, perIpHour: { requests: 100, windowSeconds: 3600 } }
    },
    mail: {
      smtpUrl: Redacted.make(`smtp://waybill:mail-secret@127.0.0.1:${port}`),
      from: "Waybill <no-reply@waybill.test>"
    }
  })
})

afterAll(async () => {
  await t.close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

const mailTo = (email: string) => {
  const mail = received.filter((m) => recipient(m) === email.toLowerCase()).at(-1)
  if (mail === undefined) throw new Error(`nothing arrived for ${email}`)
  return mail
}

const finish = async (idx: string, email: string) => {
  const check = await action(t.url, "pre-register-check", { idx, email_address: email })
  expect(check.status).toBe(200)
  const validation_key = check.body.data.validation_key as string
  const start = await action(t.url, "start", { validation_key })
  expect(start.status).toBe(200)
  const step1 = await action(t.url, "step1", { validation_key, ...STEP1 })
  expect(step1.status).toBe(200)
  const trackNo = await bookOne(t.url, step1.body.data.api_keys.production as string)
  expect(trackNo).toMatch(/^\d{6,8}$/)
}

describe("provisioning over SMTP", () => {
  it("the whole flow with the code from the e-mail", async () => {
    const email = "ops@freight-one.example.com"
    const pre = await action(t.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(pre.status).toBe(200)
    const mail = mailTo(email)
    expect(mail.subject).toBe("Verify your e-mail address")
    expect(mail.from?.text).toBe('"Waybill" <no-reply@waybill.test>')
    const { code } = codeAndLink(mail)
    expect(pre.raw).not.toContain(code)
    const idx = pre.body.data.wait_idx as string
    const v = await action(t.url, "pre-register-verify", { idx, email_address: email, verify_code: code })
    expect(v.body.data).toEqual({ result: "success", message: "Email verified." })
    await finish(idx, email)
  })

  it("the whole flow with the link from the e-mail", async () => {
    const email = "ops@freight-two.example.com"
    const pre = await action(t.url, "pre-register", { email_address: email, password: PASSWORD, es_code: "" })
    expect(pre.status).toBe(200)
    const { link } = codeAndLink(mailTo(email))
    expect(new URL(link).origin).toBe(t.url)
    expect(await confirmLink(link)).toBe(200)
    expect(await confirmLink(link)).toBe(400) // single use
    await finish(pre.body.data.wait_idx as string, email)
  })
})
