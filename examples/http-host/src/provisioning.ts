/**
 * @module provisioning
 *
 * What account provisioning needs from the example host beyond storage: a `Mailer` (the
 * development file mailer by default, SMTP when given a URL) and a `PasswordHasher` (scrypt
 * over `node:crypto`). Without both, the library answers provisioning with 404; with them it
 * is on.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Mailer, PasswordHasher } from "@waybill/core"
import * as FileMailer from "@waybill/mail-file"
import { scryptLayer } from "@waybill/password-scrypt"

export interface MailHostOptions {
  /** Folder for `.eml` files (the default mailer); defaults to `<dbFile>.mail`. */
  readonly dir?: string
  /** Send over SMTP instead (`smtp://user:pass@host:587`, `smtps://...`). */
  readonly smtpUrl?: Redacted.Redacted<string>
  /** From header (default `Waybill <no-reply@localhost>`). */
  readonly from?: string
  /** Replace the mailer entirely (tests that make it fail). */
  readonly mailer?: Layer.Layer<Mailer>
}

/** Loaded only when used, so CLI commands do not pay for loading nodemailer. */
const smtpLayer = (url: Redacted.Redacted<string>, from: string): Layer.Layer<Mailer> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(() => import("@waybill/mail-smtp")),
      (SmtpMailer) => SmtpMailer.layer({ url: Redacted.value(url), from })
    )
  )

/** The Mailer and PasswordHasher of the example host. */
export const provisioningLayer = (
  dbFile: string,
  options: MailHostOptions = {}
): Layer.Layer<Mailer | PasswordHasher> => {
  const from = options.from ?? "Waybill <no-reply@localhost>"
  const mailer =
    options.mailer ??
    (options.smtpUrl === undefined
      ? FileMailer.layer({ directory: options.dir ?? `${dbFile}.mail`, from })
      : smtpLayer(options.smtpUrl, from))
  return Layer.merge(mailer, scryptLayer())
}
