/**
 * The SMTP mailer against a real SMTP server on loopback (`smtp-server`), with what arrived
 * parsed by `mailparser`, exactly as a mail client would read it.
 */
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { type ParsedMail, simpleParser } from "mailparser"
import { SMTPServer } from "smtp-server"
import * as SmtpMailer from "../src/index.js"

const startServer = Effect.acquireRelease(
  Effect.async<{ port: number; received: Array<ParsedMail>; users: Array<string> }>((resume) => {
    const received: Array<ParsedMail> = []
    const users: Array<string> = []
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        users.push(auth.username ?? "")
        if (auth.username === "mailer" && auth.password === "s3cret") callback(null, { user: auth.username })
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
    server.listen(0, "127.0.0.1", () => {
      const port = (server.server.address() as AddressInfo).port
      resume(Effect.succeed({ port, received, users, server }))
    })
  }),
  (s) => Effect.async<void>((resume) => (s as any).server.close(() => resume(Effect.void)))
)

describe("mail-smtp", () => {
  it("parses smtp URLs", () => {
    expect(SmtpMailer.parseUrl("smtps://u%40x:p%3Aw@mail.example.com")).toEqual({
      host: "mail.example.com",
      port: 465,
      secure: true,
      auth: { user: "u@x", pass: "p:w" }
    })
    expect(SmtpMailer.parseUrl("smtp://mail.example.com:2525?requireTLS=true")).toMatchObject({
      port: 2525,
      secure: false,
      requireTLS: true
    })
  })

  it.scoped("delivers the verification e-mail over a pooled connection", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const mailer = yield* SmtpMailer.make({
        url: `smtp://mailer:s3cret@127.0.0.1:${server.port}`,
        from: "Waybill <no-reply@waybill.test>"
      })
      for (const code of ["111111", "222222"]) {
        yield* mailer.send({
          _tag: "Verification",
          to: "ada@acme-logistics.com",
          code: Redacted.make(code),
          link: Redacted.make(`https://api.example/api/v1/accountsetup/verify/?token=t${code}`),
          codeExpiresAt: 1_800_000_600_000,
          linkExpiresAt: 1_800_001_800_000
        })
      }
      expect(server.received).toHaveLength(2)
      const first = server.received[0]!
      expect(first.subject).toBe("Verify your e-mail address")
      expect(first.from?.text).toBe('"Waybill" <no-reply@waybill.test>')
      expect(first.text).toContain("111111")
      expect(first.html || "").toContain("token=t111111")
      // Pooled: one login for both messages.
      expect(server.users).toEqual(["mailer"])
    })
  )

  it.scoped("a refused login is MailFailed, not a defect", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const mailer = yield* SmtpMailer.make({
        url: `smtp://mailer:wrong@127.0.0.1:${server.port}`,
        from: "no-reply@waybill.test"
      })
      const error = yield* Effect.flip(
        mailer.send({
          _tag: "Verification",
          to: "ada@acme-logistics.com",
          code: Redacted.make("123456"),
          link: Redacted.make("https://x.example/"),
          codeExpiresAt: 0,
          linkExpiresAt: 0
        })
      )
      expect(error._tag).toBe("MailFailed")
      expect(error.message).not.toContain("123456")
    })
  )
})
