/**
 * @module @waybill/mail-file
 *
 * A development `Mailer`: each message becomes an RFC 5322 `.eml` file (multipart text + HTML,
 * composed by nodemailer) in a folder, and the log says where it went, so a developer opens the
 * verification e-mail in any mail client or reads the code with `cat`, without an SMTP server. Files are created with
 * mode 0600 because they hold one-time codes; the log line holds only the path.
 *
 * nodemailer loads with the first message, not with this module: a host that composes the
 * mailer but never sends (most never do between two sign-ups) does not hold it.
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

/** Refuses header injection through an address. */
const safeAddress = (address: string): string => {
  if (/[\r\n]/.test(address)) throw new Error("address contains a line break")
  return address
}

/**
 * Composes messages as `.eml` bytes with nodemailer's stream transport (`buffer: true`): the same
 * MIME builder (`MailComposer`) its SMTP transport sends with, so a file is exactly what an SMTP
 * server would have received (header encoding, folding, transfer encodings, CRLF line ends).
 */
export const composer = async () => {
  const { default: nodemailer } = await import("nodemailer")
  return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" })
}

/** What composes the `.eml` bytes: nodemailer's transport, as {@link composer} makes it. */
export type Composer = Awaited<ReturnType<typeof composer>>

/** The message as `.eml` bytes (multipart/alternative text + HTML). */
export const toEml = async (
  message: MailMessage,
  from: string,
  now: number,
  id: string,
  transport?: Composer
): Promise<Buffer> => {
  const rendered = Mail.render(message)
  const domain = from.slice(from.lastIndexOf("@") + 1).replace(/[>\s]/g, "") || "localhost"
  const info = await (transport ?? (await composer())).sendMail({
    from: safeAddress(from),
    to: safeAddress(rendered.to),
    subject: rendered.subject,
    text: rendered.text,
    html: rendered.html,
    date: new Date(now),
    messageId: `<${id}@${domain}>`
  })
  return info.message as Buffer
}

/** A `Mailer` writing `<directory>/<time>-<id>.eml` files. */
export const make = (options: FileMailerOptions): MailerShape => {
  const directory = resolve(options.directory)
  // Made by the first message and shared by the next; a failure to load is that message's error.
  let transport: Promise<Composer> | undefined
  const loaded = () =>
    (transport ??= composer().catch((error: unknown) => {
      transport = undefined
      throw error
    }))
  return {
    send: (message) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const id = randomBytes(8).toString("hex")
        const file = join(directory, `${new Date(now).toISOString().replace(/[:.]/g, "-")}-${id}.eml`)
        const transport = yield* Effect.tryPromise({
          try: loaded,
          catch: (cause) =>
            new MailFailed({
              message: `mail-file: nodemailer could not be loaded: ${cause instanceof Error ? cause.message : "error"}`
            })
        })
        yield* Effect.tryPromise({
          try: async () => {
            await mkdir(directory, { recursive: true, mode: 0o700 })
            await writeFile(file, await toEml(message, options.from, now, id, transport), { mode: 0o600, flag: "wx" })
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
