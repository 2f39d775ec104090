/**
 * @module @waybill/mail-smtp
 *
 * The `Mailer` over SMTP with nodemailer: a pooled transport (a few long-lived connections
 * instead of a handshake per e-mail), TLS settings passed through (implicit TLS on 465,
 * STARTTLS required with `requireTLS`, CA and minimum version), and a scoped layer that closes
 * the pool when the host shuts down. Bodies come from core's `Mail.render`, so every transport
 * sends the same words; nothing here logs a body or the code.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import nodemailer from "nodemailer"
import type SMTPPool from "nodemailer/lib/smtp-pool/index.js"
import { Mail, Mailer, MailFailed, type MailerShape } from "@waybill/core"

export interface SmtpMailerOptions {
  /**
   * `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465` (implicit TLS).
   * Query parameters are nodemailer options (`?requireTLS=true`).
   */
  readonly url?: string
  /** Transport options merged over those of `url` (host, port, secure, auth, tls, ...). */
  readonly transport?: SMTPPool.Options
  /** The From header, e.g. `Waybill <no-reply@example.com>`. */
  readonly from: string
  /** Connections kept open (default 2) and messages per connection before it is renewed (default 100). */
  readonly maxConnections?: number
  readonly maxMessages?: number
}

/** Host, port, implicit TLS and credentials from an `smtp://` or `smtps://` URL. */
export const parseUrl = (url: string): SMTPPool.Options => {
  const u = new URL(url)
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error("SMTP URL must start with smtp:// or smtps://")
  const secure = u.protocol === "smtps:"
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port === "" ? (secure ? 465 : 587) : Number(u.port),
    secure,
    ...(u.searchParams.get("requireTLS") === "true" ? { requireTLS: true } : {}),
    ...(u.username === ""
      ? {}
      : { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } })
  }
}

/** Options for nodemailer from {@link SmtpMailerOptions}: pooled, TLS at least 1.2 unless overridden. */
export const transportOptions = (options: SmtpMailerOptions): SMTPPool.Options => {
  const fromUrl: SMTPPool.Options = options.url === undefined ? {} : parseUrl(options.url)
  return {
    ...fromUrl,
    ...options.transport,
    pool: true,
    maxConnections: options.maxConnections ?? options.transport?.maxConnections ?? 2,
    maxMessages: options.maxMessages ?? options.transport?.maxMessages ?? 100,
    tls: { minVersion: "TLSv1.2", ...fromUrl.tls, ...options.transport?.tls }
  }
}

/** A mailer over an open transport; {@link layer} owns the transport's lifetime. */
export const make = (options: SmtpMailerOptions): Effect.Effect<MailerShape, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => nodemailer.createTransport(transportOptions(options))),
      (transport) => Effect.sync(() => transport.close())
    ),
    (transport): MailerShape => ({
      send: (message) => {
        const rendered = Mail.render(message)
        return Effect.tryPromise({
          try: () =>
            transport.sendMail({
              from: options.from,
              to: rendered.to,
              subject: rendered.subject,
              text: rendered.text,
              html: rendered.html
            }),
          // The SMTP reply says what went wrong (refused, unreachable); it never holds the body.
          catch: (cause) =>
            new MailFailed({ message: `smtp: ${cause instanceof Error ? cause.message.slice(0, 200) : "send failed"}` })
        }).pipe(Effect.asVoid)
      }
    })
  )

/** {@link make} as a scoped layer: the pool closes when the layer is released. */
export const layer = (options: SmtpMailerOptions): Layer.Layer<Mailer> => Layer.scoped(Mailer, make(options))
