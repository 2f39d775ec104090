import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { simpleParser } from "mailparser"
import * as FileMailer from "../src/index.js"

describe("mail-file", () => {
  it.effect("writes a parseable .eml with the code and link, mode 0600", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "waybill-mail-"))
      try {
        const mailer = FileMailer.make({ directory: join(dir, "out"), from: "Waybill <no-reply@waybill.test>" })
        yield* mailer.send({
          _tag: "Verification",
          to: "ada@acme-logistics.com",
          code: Redacted.make("042917"),
          link: Redacted.make("https://api.example/api/v1/accountsetup/verify/?token=abc"),
          codeExpiresAt: 1_800_000_600_000,
          linkExpiresAt: 1_800_001_800_000
        })
        const files = readdirSync(join(dir, "out"))
        expect(files).toHaveLength(1)
        const file = join(dir, "out", files[0]!)
        expect(statSync(file).mode & 0o777).toBe(0o600)
        const parsed = yield* Effect.promise(() => simpleParser(readFileSync(file)))
        expect(parsed.subject).toBe("Verify your e-mail address")
        expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : "").toBe("ada@acme-logistics.com")
        expect(parsed.text).toContain("042917")
        expect(parsed.html || "").toContain("https://api.example/api/v1/accountsetup/verify/?token=abc")
        // A complete message: sender, date of the mailer's clock, a Message-ID on the sender's domain,
        // text and HTML as alternatives, CRLF line ends.
        expect(parsed.from?.text).toBe('"Waybill" <no-reply@waybill.test>')
        expect(parsed.date?.getTime()).toBe(0)
        expect(parsed.messageId).toMatch(/^<[0-9a-f]{16}@waybill\.test>$/)
        const raw = readFileSync(file, "utf8")
        expect(raw).toMatch(/^Content-Type: multipart\/alternative;/m)
        expect(raw).toContain("MIME-Version: 1.0\r\n")
        expect(raw.replace(/\r\n/g, "")).not.toContain("\n")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )

  it.effect("writes invite and reset e-mails as text plus HTML alternatives", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "waybill-mail-"))
      try {
        const mailer = FileMailer.make({ directory: dir, from: "no-reply@waybill.test" })
        yield* mailer.send({
          _tag: "Invite",
          to: "grace@acme-logistics.com",
          accountName: "Acme Logistics LLC",
          link: Redacted.make("https://api.example/portal/invite/?token=inv"),
          expiresAt: 1_800_000_600_000
        })
        yield* mailer.send({
          _tag: "PasswordReset",
          to: "ada@acme-logistics.com",
          link: Redacted.make("https://api.example/portal/reset/?token=rst"),
          expiresAt: 1_800_000_600_000
        })
        const files = readdirSync(dir).sort()
        expect(files).toHaveLength(2)
        const parsed = yield* Effect.forEach(files, (f) =>
          Effect.promise(() => simpleParser(readFileSync(join(dir, f))))
        )
        for (const mail of parsed) {
          expect(mail.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" })
          expect(mail.text ?? "").not.toBe("")
        }
        const bySubject = new Map(parsed.map((m) => [m.subject, m]))
        const invite = bySubject.get("You are invited to Acme Logistics LLC on Waybill")!
        expect(invite.text).toContain("https://api.example/portal/invite/?token=inv")
        expect(invite.html || "").toContain('href="https://api.example/portal/invite/?token=inv" id="invite-link"')
        const reset = bySubject.get("Reset your Waybill password")!
        expect(reset.html || "").toContain('href="https://api.example/portal/reset/?token=rst" id="reset-link"')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )

  it.effect("refuses an address with a line break (no header injection) as MailFailed", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "waybill-mail-"))
      try {
        const mailer = FileMailer.make({ directory: dir, from: "no-reply@waybill.test" })
        const error = yield* Effect.flip(
          mailer.send({
            _tag: "Verification",
            to: "ada@acme-logistics.com\r\nBcc: victim@example.com",
            code: Redacted.make("042917"),
            link: Redacted.make("https://api.example/"),
            codeExpiresAt: 0,
            linkExpiresAt: 0
          })
        )
        expect(error._tag).toBe("MailFailed")
        expect(readdirSync(dir)).toHaveLength(0)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
