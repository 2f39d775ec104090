/**
 * @module @waybill/mail-file
 *
 * A development `Mailer`: each message becomes an RFC 5322 `.eml` file (multipart text + HTML)
 * in a folder, and the log says where it went, so a developer opens the verification e-mail in
 * any mail client or reads the code with `cat`, without an SMTP server. Files are created with
 * mode 0600 because they hold one-time codes; the log line holds only the path.
 */
import { randomBytes } from "node:crypto"
import { mkdir, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Mail, Mailer, MailFailed, type MailerShape, type MailMessage } from "@waybill/core"

export interface FileMailerOptions {
  /** Folder the `.eml` files go to (created if missing). */
  readonly directory: string
  /** The From header. */
  readonly from: string
}

/** RFC 2047 encoded-word for a header value that is not plain ASCII. */
const encodeHeader = (value: string): string =>
  /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, "utf8").toString("base64")}?=`

/** Base64 body lines of at most 76 characters (RFC 2045). */
const base64Body = (text: string): string =>
  (
    Buffer.from(text, "utf8")
      .toString("base64")
      .match(/.{1,76}/g) ?? []
  ).join("\r\n")

/** Refuses header injection through an address. */
const safeAddress = (address: string): string => {
  if (/[\r\n]/.test(address)) throw new Error("address contains a line break")
  return address
}

/** The message as `.eml` text (CRLF line ends). */
export const toEml = (message: MailMessage, from: string, now: number, id: string): string => {
  const rendered = Mail.render(message)
  const boundary = `waybill-${id}`
  const domain = from.slice(from.lastIndexOf("@") + 1).replace(/[>\s]/g, "") || "localhost"
  return [
    `From: ${safeAddress(from)}`,
    `To: ${safeAddress(rendered.to)}`,
    `Subject: ${encodeHeader(rendered.subject)}`,
    `Date: ${new Date(now).toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: <${id}@${domain}>`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    base64Body(rendered.text),
    `--${boundary}`,
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    base64Body(rendered.html),
    `--${boundary}--`,
    ""
  ].join("\r\n")
}

/** A `Mailer` writing `<directory>/<time>-<id>.eml` files. */
export const make = (options: FileMailerOptions): MailerShape => {
  const directory = resolve(options.directory)
  return {
    send: (message) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const id = randomBytes(8).toString("hex")
        const file = join(directory, `${new Date(now).toISOString().replace(/[:.]/g, "-")}-${id}.eml`)
        yield* Effect.tryPromise({
          try: async () => {
            await mkdir(directory, { recursive: true, mode: 0o700 })
            await writeFile(file, toEml(message, options.from, now, id), { mode: 0o600, flag: "wx" })
          },
          catch: (cause) =>
            new MailFailed({ message: `could not write ${file}: ${cause instanceof Error ? cause.message : "error"}` })
        })
        yield* Effect.logInfo(`mail-file: wrote ${message._tag} e-mail to ${file}`)
      })
  }
}

/** {@link make} as a layer. */
export const layer = (options: FileMailerOptions): Layer.Layer<Mailer> => Layer.succeed(Mailer, make(options))
