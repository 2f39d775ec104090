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
import { button, code, codeBlock, type Html, mailHtml, markup, note, paragraph } from "./Look.js"

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

/** An invitation to join an account: a one-time link to a page that sets the new user's password. */
export interface InviteMessage {
  readonly _tag: "Invite"
  readonly to: string
  /** The company name, or the customer number. */
  readonly accountName: string
  /** The inviter's e-mail; absent when an operator invited. */
  readonly invitedBy?: string
  readonly link: Redacted.Redacted<string>
  /** Epoch ms: end of the link's window. */
  readonly expiresAt: number
}

/** A password reset: a one-time link to a page that sets a new password. */
export interface PasswordResetMessage {
  readonly _tag: "PasswordReset"
  readonly to: string
  readonly link: Redacted.Redacted<string>
  /** Epoch ms: end of the link's window. */
  readonly expiresAt: number
}

export type MailMessage = VerificationMessage | WebhookDisabledMessage | InviteMessage | PasswordResetMessage

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

/** A message rendered: what every adapter sends, as text and HTML alternatives. */
export interface Rendered {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/**
 * A moment as people read it in an e-mail, in UTC (the server does not know the reader's zone):
 * `2027-01-15 08:30 UTC`.
 */
export const formatTime = (epochMs: number): string => {
  const iso = new Date(epochMs).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}

/**
 * A value given by a user (an account name, an address) on one line: control characters and line
 * breaks become spaces, so it cannot start a new line of the text part or a header of the subject.
 */
const oneLine = (s: string): string =>
  // eslint-disable-next-line no-control-regex
  s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim()

/** Under each button: the link written out, for clients that do not render the button. */
const LINK_FALLBACK = "If the button does not work, copy this address into your browser:"

/** The text and HTML of one message. */
interface Parts {
  readonly subject: string
  readonly preheader: string
  readonly title: string
  readonly text: ReadonlyArray<string>
  readonly body: Html
}

const verification = (message: VerificationMessage): Parts => {
  const otp = Redacted.value(message.code)
  const link = Redacted.value(message.link)
  const codeUntil = formatTime(message.codeExpiresAt)
  const linkUntil = formatTime(message.linkExpiresAt)
  return {
    subject: "Verify your e-mail address",
    title: "Verify your e-mail address",
    preheader: "Your verification code and link for your Waybill account.",
    text: [
      "Your verification code is:",
      "",
      `    ${otp}`,
      "",
      `It is valid until ${codeUntil} and works once.`,
      "",
      "Or open this link and confirm:",
      link,
      `The link is valid until ${linkUntil}.`,
      "",
      "If you did not ask for an account, ignore this message."
    ],
    body: markup`${paragraph(markup`Your verification code is:`)}${codeBlock({ text: otp, id: "verify-code" })}${note(
      markup`It is valid until ${codeUntil} and works once.`
    )}${paragraph(markup`Or confirm with the link:`)}${button({
      href: link,
      label: "Confirm my e-mail address",
      id: "verify-link"
    })}${note(markup`The link is valid until ${linkUntil}. ${LINK_FALLBACK}<br>${code(link)}`)}${note(
      markup`If you did not ask for an account, ignore this message.`
    )}`
  }
}

const webhookDisabled = (message: WebhookDisabledMessage): Parts => {
  const why =
    message.reason === "gone"
      ? "it answered 410 Gone, which says it will never accept deliveries again"
      : "every delivery to it failed for 5 days"
  return {
    subject: "A webhook endpoint was disabled",
    title: "A webhook endpoint was disabled",
    preheader: `Waybill stopped delivering events to ${oneLine(message.url)}.`,
    text: [
      `Waybill stopped delivering events to your webhook endpoint ${message.endpointId}`,
      `(${oneLine(message.url)}) because ${why}.`,
      "",
      "Events are kept for 30 days. Fix the endpoint, enable it again, and recover what it missed."
    ],
    body: markup`${paragraph(
      markup`Waybill stopped delivering events to your webhook endpoint ${code(message.endpointId)} (${code(
        message.url
      )}) because ${why}.`
    )}${paragraph(markup`Events are kept for 30 days. Fix the endpoint, enable it again, and recover what it missed.`)}`
  }
}

const invite = (message: InviteMessage): Parts => {
  const link = Redacted.value(message.link)
  const account = oneLine(message.accountName)
  const by = message.invitedBy === undefined ? undefined : oneLine(message.invitedBy)
  const until = formatTime(message.expiresAt)
  const who = by === undefined ? "You are invited" : `${by} invited you`
  return {
    subject: `You are invited to ${account} on Waybill`,
    title: `Join ${account} on Waybill`,
    preheader: `${who} to the Waybill account of ${account}.`,
    text: [
      `${who} to the Waybill account of ${account}.`,
      "",
      "Open this link to choose your password and sign in:",
      link,
      "",
      `The link is valid until ${until} and works once.`,
      "",
      "If you did not expect this invitation, ignore this message: nothing happens until you choose a password."
    ],
    body: markup`${paragraph(
      by === undefined
        ? markup`You are invited to the Waybill account of <strong>${account}</strong>.`
        : markup`${code(by)} invited you to the Waybill account of <strong>${account}</strong>.`
    )}${paragraph(markup`Choose your password to sign in:`)}${button({
      href: link,
      label: "Choose my password",
      id: "invite-link"
    })}${note(markup`The link is valid until ${until} and works once. ${LINK_FALLBACK}<br>${code(link)}`)}${note(
      markup`If you did not expect this invitation, ignore this message: nothing happens until you choose a password.`
    )}`
  }
}

const passwordReset = (message: PasswordResetMessage): Parts => {
  const link = Redacted.value(message.link)
  const until = formatTime(message.expiresAt)
  return {
    subject: "Reset your Waybill password",
    title: "Reset your password",
    preheader: "A link to choose a new password for your Waybill account.",
    text: [
      "Someone, probably you, asked to reset the password of your Waybill account.",
      "",
      "Open this link to choose a new password:",
      link,
      "",
      `The link is valid until ${until} and works once. Choosing a new password signs you out everywhere.`,
      "",
      "If you did not ask for this, ignore this message: your password stays as it is."
    ],
    body: markup`${paragraph(
      markup`Someone, probably you, asked to reset the password of your Waybill account.`
    )}${button({ href: link, label: "Choose a new password", id: "reset-link" })}${note(
      markup`The link is valid until ${until} and works once. Choosing a new password signs you out everywhere. ${LINK_FALLBACK}<br>${code(
        link
      )}`
    )}${note(markup`If you did not ask for this, ignore this message: your password stays as it is.`)}`
  }
}

const partsOf = (message: MailMessage): Parts => {
  switch (message._tag) {
    case "Verification":
      return verification(message)
    case "WebhookDisabled":
      return webhookDisabled(message)
    case "Invite":
      return invite(message)
    case "PasswordReset":
      return passwordReset(message)
  }
}

/**
 * Renders a message as text and HTML (in the shared look, `Look.mailHtml`). The only place the
 * code and link leave their `Redacted` wrapper. Every value lands escaped in its text node or
 * attribute; the HTML keeps ids for scripts and tests (`verify-code`, `verify-link`,
 * `invite-link`, `reset-link`).
 */
export const render = (message: MailMessage): Rendered => {
  const parts = partsOf(message)
  return {
    to: message.to,
    subject: oneLine(parts.subject),
    text: parts.text.join("\n"),
    html: mailHtml({ title: parts.title, preheader: parts.preheader, body: parts.body })
  }
}
