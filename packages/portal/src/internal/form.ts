/**
 * @module form
 *
 * HTML form bodies (`application/x-www-form-urlencoded`), read with a size cap and parsed
 * strictly: a body that is too large, of another type, not UTF-8, or with a malformed escape is
 * refused with a reason (the page answers 400 or 413), never a 500.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** The largest form body the portal reads (the biggest form is a handful of short fields). */
export const FORM_LIMIT_BYTES = 16 * 1024

/** The most fields one form may have. */
export const FORM_MAX_FIELDS = 64

/** A submitted form: the values of each field in order. */
export interface Form {
  /** The first value of a field, or undefined when the form has none. */
  readonly get: (name: string) => string | undefined
  /** Every value of a field (checkboxes), in order. */
  readonly getAll: (name: string) => ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
}

/** Why a form body was refused. */
export interface FormRejected {
  readonly _tag: "FormRejected"
  readonly status: 400 | 413
  readonly reason: string
}

const rejected = (status: 400 | 413, reason: string): FormRejected => ({ _tag: "FormRejected", status, reason })

const makeForm = (entries: ReadonlyArray<readonly [string, string]>): Form => {
  const byName = new Map<string, Array<string>>()
  for (const [name, value] of entries) {
    const list = byName.get(name)
    if (list === undefined) byName.set(name, [value])
    else list.push(value)
  }
  return {
    get: (name) => byName.get(name)?.[0],
    getAll: (name) => byName.get(name) ?? [],
    names: [...byName.keys()]
  }
}

/** A form without fields (what a GET request's context holds). */
export const emptyForm: Form = makeForm([])

const decodeComponent = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Parses an urlencoded body. Refused: more than {@link FORM_LIMIT_BYTES}, bytes that are not
 * UTF-8, a malformed `%` escape or one that decodes to invalid UTF-8, a NUL character, more than
 * {@link FORM_MAX_FIELDS} fields.
 */
export const parseForm = (bytes: Uint8Array): Either.Either<Form, FormRejected> => {
  if (bytes.byteLength > FORM_LIMIT_BYTES) return Either.left(rejected(413, "The form is too large."))
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Either.left(rejected(400, "The form could not be read."))
  }
  const entries: Array<readonly [string, string]> = []
  for (const part of text.split("&")) {
    if (part === "") continue
    if (entries.length >= FORM_MAX_FIELDS) return Either.left(rejected(400, "The form has too many fields."))
    const eq = part.indexOf("=")
    const name = decodeComponent(eq < 0 ? part : part.slice(0, eq))
    const value = decodeComponent(eq < 0 ? "" : part.slice(eq + 1))
    if (name === undefined || value === undefined || name.includes("\0") || value.includes("\0"))
      return Either.left(rejected(400, "The form could not be read."))
    entries.push([name, value])
  }
  return Either.right(makeForm(entries))
}

/** Reads at most `limit + 1` bytes of a body stream (enough to tell that it is too large). */
const readCapped = async (body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
      if (size > limit) break
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}

/**
 * Reads a request's form: the content type must be urlencoded, the declared and the real size at
 * most {@link FORM_LIMIT_BYTES}.
 */
export const readForm: (request: Request) => Effect.Effect<Form, FormRejected> = Effect.fnUntraced(function* (
  request: Request
) {
  const type = (request.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded") return yield* Effect.fail(rejected(400, "Send the form."))
  const declared = Number(request.headers.get("content-length") ?? "0")
  if (Number.isFinite(declared) && declared > FORM_LIMIT_BYTES)
    return yield* Effect.fail(rejected(413, "The form is too large."))
  if (request.body === null) return emptyForm
  const body = request.body
  const bytes = yield* Effect.tryPromise({
    try: () => readCapped(body, FORM_LIMIT_BYTES),
    catch: () => rejected(400, "The form could not be read.")
  })
  return yield* parseForm(bytes)
})
