/**
 * @module Mailer
 *
 * Outgoing e-mail as a port with typed messages. Core decides what a message says
 * ({@link render}); adapters only deliver (`@waybill/mail-smtp` over SMTP, `@waybill/mail-file`
 * writing `.eml` files for development), so every transport sends the same words. Secrets in a
 * message (the one-time code, the link) are `Redacted` until the adapter renders the body, and
 * adapters never log a body.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** The verification e-mail of account provisioning: a one-time code and a link (interface 3). */
export interface VerificationMessage {
  readonly _tag: "Verification"
  readonly to: string
  readonly code: Redacted.Redacted<string>
  readonly link: Redacted.Redacted<string>
  /** Epoch ms: end of the code's window. */
  readonly codeExpiresAt: number
  /** Epoch ms: end of the link's window. */
  readonly linkExpiresAt: number
}

/**
 * Tells an account's owner that Waybill stopped delivering to one of their webhook endpoints
 * (it answered 410, or failed for days), so they can fix it and re-enable it.
 */
export interface WebhookDisabledMessage {
  readonly _tag: "WebhookDisabled"
  readonly to: string
  readonly endpointId: string
  readonly url: string
  readonly reason: "gone" | "failing"
}

export type MailMessage = VerificationMessage | WebhookDisabledMessage

/** Delivery failed (connection, refusal, disk). The cause is for logs; the message is for operators. */
export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  message: Schema.String
}) {}

export interface MailerShape {
  /** Delivers one message; resolves once the transport accepted it. */
  readonly send: (message: MailMessage) => Effect.Effect<void, MailFailed>
}

/** The outgoing e-mail port. Optional for the handler: without it provisioning is switched off. */
export class Mailer extends Context.Tag("@waybill/core/Mailer")<Mailer, MailerShape>() {}

/** A message as text: what every adapter sends. */
export interface Rendered {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** Renders a message. The only place the code and link leave their `Redacted` wrapper. */
export const render = (message: MailMessage): Rendered => {
  if (message._tag === "WebhookDisabled") {
    const why =
      message.reason === "gone"
        ? "it answered 410 Gone, which says it will never accept deliveries again"
        : "every delivery to it failed for 5 days"
    return {
      to: message.to,
      subject: "A webhook endpoint was disabled",
      text: [
        `Waybill stopped delivering events to your webhook endpoint ${message.endpointId}`,
        `(${message.url}) because ${why}.`,
        "",
        "Events are kept for 30 days. Fix the endpoint, enable it again, and recover what it missed."
      ].join("\n"),
      html: [
        `<p>Waybill stopped delivering events to your webhook endpoint <code>${escapeHtml(message.endpointId)}</code>`,
        ` (${escapeHtml(message.url)}) because ${escapeHtml(why)}.</p>`,
        "<p>Events are kept for 30 days. Fix the endpoint, enable it again, and recover what it missed.</p>"
      ].join("")
    }
  }
  const code = Redacted.value(message.code)
  const link = Redacted.value(message.link)
  const codeMinutes = new Date(message.codeExpiresAt).toISOString()
  const linkMinutes = new Date(message.linkExpiresAt).toISOString()
  return {
    to: message.to,
    subject: "Verify your e-mail address",
    text: [
      "Your verification code is:",
      "",
      `    ${code}`,
      "",
      `It is valid until ${codeMinutes} (UTC) and works once.`,
      "",
      "Or open this link and confirm:",
      link,
      `The link is valid until ${linkMinutes} (UTC).`,
      "",
      "If you did not ask for an account, ignore this message."
    ].join("\n"),
    html: [
      "<p>Your verification code is:</p>",
      `<p style="font-size:24px;font-family:monospace" id="verify-code">${escapeHtml(code)}</p>`,
      `<p>It is valid until ${escapeHtml(codeMinutes)} (UTC) and works once.</p>`,
      `<p>Or <a href="${escapeHtml(link)}" id="verify-link">open this link and confirm</a>.`,
      ` The link is valid until ${escapeHtml(linkMinutes)} (UTC).</p>`,
      "<p>If you did not ask for an account, ignore this message.</p>"
    ].join("")
  }
}
