/**
 * The SMTP mailer against a real SMTP server on loopback (`smtp-server`), with what arrived
 * parsed by `mailparser`, exactly as a mail client would read it: in plain text, and over TLS
 * in both modes (STARTTLS and implicit) with a self-signed certificate the client trusts, or
 * does not.
 */
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { type ParsedMail, simpleParser } from "mailparser"
import { SMTPServer } from "smtp-server"
import { certificateFor } from "@waybill/testkit/webhook-receiver"
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
      // Text and HTML as alternatives of one message, the HTML in the shared look.
      expect(first.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" })
      expect(first.html || "").toMatch(/<a href="https:\/\/api\.example\/[^"]*token=t111111" id="verify-link"/)
      // Pooled: one login for both messages.
      expect(server.users).toEqual(["mailer"])
    })
  )

  it.scoped("sends every message as text plus HTML (multipart/alternative)", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const mailer = yield* SmtpMailer.make({
        url: `smtp://mailer:s3cret@127.0.0.1:${server.port}`,
        from: "Waybill <no-reply@waybill.test>"
      })
      const link = (path: string) => Redacted.make(`https://api.example/portal/${path}/?token=tok`)
      yield* mailer.send({
        _tag: "Invite",
        to: "grace@acme-logistics.com",
        accountName: "Acme Logistics LLC",
        invitedBy: "ada@acme-logistics.com",
        link: link("invite"),
        expiresAt: 1_800_000_600_000
      })
      yield* mailer.send({
        _tag: "PasswordReset",
        to: "ada@acme-logistics.com",
        link: link("reset"),
        expiresAt: 1_800_000_600_000
      })
      yield* mailer.send({
        _tag: "WebhookDisabled",
        to: "ada@acme-logistics.com",
        endpointId: "ep_1",
        url: "https://hooks.acme.example/",
        reason: "gone"
      })
      expect(server.received.map((m) => m.subject)).toEqual([
        "You are invited to Acme Logistics LLC on Waybill",
        "Reset your Waybill password",
        "A webhook endpoint was disabled"
      ])
      for (const mail of server.received) {
        expect(mail.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" })
        expect(mail.text ?? "").not.toBe("")
        expect(mail.html || "").toContain(">Waybill</td>")
      }
      expect(server.received[0]!.html || "").toContain('id="invite-link"')
      expect(server.received[1]!.html || "").toContain('id="reset-link"')
      expect(server.received[0]!.text).toContain("https://api.example/portal/invite/?token=tok")
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

/** A certificate for 127.0.0.1 (and `mail.test`), made per run; the tests that trust it pass it as `ca`. */
const certificate = certificateFor("mail.test")

/**
 * An SMTP server with TLS: implicit (`secure`, TLS from the first byte) or STARTTLS offered on
 * a plain connection. It refuses mail (and logins) on a connection that is not encrypted, and
 * records the TLS state of each message's session.
 */
const startTlsServer = (mode: "implicit" | "starttls", pems: { readonly private: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ port: number; received: Array<{ mail: ParsedMail; secure: boolean }>; server: SMTPServer }>(
      (resume) => {
        const received: Array<{ mail: ParsedMail; secure: boolean }> = []
        const server = new SMTPServer({
          secure: mode === "implicit",
          key: pems.private,
          cert: pems.cert,
          authOptional: false,
          onAuth(auth, session, callback) {
            if (!session.secure) return callback(new Error("Must issue a STARTTLS command first"))
            if (auth.username === "mailer" && auth.password === "s3cret") callback(null, { user: auth.username })
            else callback(new Error("Invalid username or password"))
          },
          onData(stream, session, callback) {
            simpleParser(stream).then(
              (mail) => {
                received.push({ mail, secure: session.secure })
                callback()
              },
              (err: Error) => callback(err)
            )
          }
        })
        // A refused handshake is the client's business; the server only logs it.
        server.on("error", () => undefined)
        server.listen(0, "127.0.0.1", () => {
          resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server }))
        })
      }
    ),
    (s) => Effect.async<void>((resume) => s.server.close(() => resume(Effect.void)))
  )

const verification = (code: string) =>
  ({
    _tag: "Verification",
    to: "ada@acme-logistics.com",
    code: Redacted.make(code),
    link: Redacted.make(`https://api.example/api/v1/accountsetup/verify/?token=t${code}`),
    codeExpiresAt: 1_800_000_600_000,
    linkExpiresAt: 1_800_001_800_000
  }) as const

describe("mail-smtp over TLS (a real server, a self-signed certificate)", () => {
  const modes = [
    [
      "STARTTLS (smtp://, requireTLS)",
      "starttls",
      (port: number) => `smtp://mailer:s3cret@127.0.0.1:${port}?requireTLS=true`
    ],
    ["implicit TLS (smtps://)", "implicit", (port: number) => `smtps://mailer:s3cret@127.0.0.1:${port}`]
  ] as const

  for (const [name, mode, url] of modes) {
    it.scoped(`${name}: delivers over an encrypted session when the certificate is trusted`, () =>
      Effect.gen(function* () {
        const pems = yield* certificate
        const server = yield* startTlsServer(mode, pems)
        const mailer = yield* SmtpMailer.make({
          url: url(server.port),
          from: "Waybill <no-reply@waybill.test>",
          transport: { tls: { ca: pems.cert } }
        })
        yield* mailer.send(verification("314159"))
        expect(server.received).toHaveLength(1)
        expect(server.received[0]!.secure).toBe(true)
        expect(server.received[0]!.mail.text).toContain("314159")
      })
    )

    it.scoped(`${name}: refuses a certificate it does not trust (MailFailed, nothing sent)`, () =>
      Effect.gen(function* () {
        const pems = yield* certificate
        const server = yield* startTlsServer(mode, pems)
        const mailer = yield* SmtpMailer.make({ url: url(server.port), from: "no-reply@waybill.test" })
        const error = yield* Effect.flip(mailer.send(verification("271828")))
        expect(error._tag).toBe("MailFailed")
        expect(error.message).toMatch(/certificate/i)
        expect(error.message).not.toContain("271828")
        expect(server.received).toHaveLength(0)
      })
    )
  }

  it.scoped("STARTTLS: a certificate for another name is refused even when its issuer is trusted", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const server = yield* startTlsServer("starttls", pems)
      const mailer = yield* SmtpMailer.make({
        url: `smtp://mailer:s3cret@127.0.0.1:${server.port}?requireTLS=true`,
        from: "no-reply@waybill.test",
        transport: { tls: { ca: pems.cert, servername: "other.test" } }
      })
      const error = yield* Effect.flip(mailer.send(verification("161803")))
      expect(error._tag).toBe("MailFailed")
      expect(server.received).toHaveLength(0)
    })
  )
})
