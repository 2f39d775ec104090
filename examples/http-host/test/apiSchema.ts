/**
 * Every `/api/v1` answer an e2e test receives through `fetch` is checked against the OpenAPI
 * document (`@waybill/http`'s `openApiDocument`, the one served and committed): the status must
 * be one the document lists for the path and method, the media type one it lists for that
 * status, and a JSON body must match its schema (JSON Schema 2020-12, with ajv). Answers for
 * paths or methods the document does not describe (404 and 405) must be the error envelope.
 *
 * `installApiSchemaCheck` wraps `globalThis.fetch` once per test file (vitest `setupFiles`:
 * `test/setup.ts`), so no test has to opt in. A mismatch rejects the `fetch` call and is also
 * recorded, and `afterEach` fails the test with it even if the test caught the rejection.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import { afterEach } from "vitest"
import { type Json, openApiDocument } from "@waybill/http"

interface MediaObject {
  readonly schema?: Json
}
interface Operation {
  readonly responses: Readonly<Record<string, { readonly content?: Readonly<Record<string, MediaObject>> }>>
}

const document = openApiDocument()
const components = document.components as Json
const ajv = new Ajv2020({ strict: false, allErrors: true })
const compiled = new Map<string, ValidateFunction>()

/** A validator for one schema of the document; `$ref`s resolve against the document's components. */
const validatorFor = (key: string, schema: Json): ValidateFunction => {
  let v = compiled.get(key)
  if (v === undefined) {
    v = ajv.compile({ ...(schema as object), components })
    compiled.set(key, v)
  }
  return v
}

const ERROR_ENVELOPE: Json = { $ref: "#/components/schemas/ErrorEnvelope" }

/** The document's path for a request path (the handler reads `/x` as `/x/`). */
const templateOf = (pathname: string): string | undefined => {
  const paths = document.paths
  if (pathname in paths) return pathname
  const other = pathname.endsWith("/") ? pathname.slice(0, -1) : `${pathname}/`
  return other in paths ? other : undefined
}

const mediaTypeOf = (response: Response) => (response.headers.get("content-type") ?? "").split(";")[0]!.trim()

/**
 * What is wrong with `response` as an answer to `method url`, or `undefined` when it matches
 * the document. Reads a clone of the body, so the caller's response stays unread.
 */
export const answerProblem = async (method: string, url: URL, response: Response): Promise<string | undefined> => {
  const where = `${method} ${url.pathname} -> ${response.status}`
  const type = mediaTypeOf(response)
  const template = templateOf(url.pathname)
  const operation =
    template === undefined
      ? undefined
      : (document.paths[template] as unknown as Record<string, Operation>)[method.toLowerCase()]
  let schema: Json | undefined
  let key: string
  if (operation === undefined) {
    // Routing answers (unknown path, method not allowed): the envelope when JSON; the
    // reference page's HTML and assets are not part of the API.
    if (type !== "application/json") return undefined
    schema = ERROR_ENVELOPE
    key = "error-envelope"
  } else {
    const answer = operation.responses[String(response.status)]
    if (answer === undefined) return `${where}: the document lists no such status for this operation`
    const content = answer.content ?? {}
    if (method === "HEAD" || Object.keys(content).length === 0) return undefined
    const media = content[type]
    if (media === undefined) return `${where}: the document lists no ${type || "(no content-type)"} answer here`
    if (type !== "application/json" || media.schema === undefined) return undefined
    schema = media.schema
    key = `${template} ${method} ${response.status}`
  }
  const text = await response.clone().text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return `${where}: the body is not JSON: ${text.slice(0, 200)}`
  }
  const validate = validatorFor(key, schema)
  if (validate(body)) return undefined
  return `${where}: the body does not match the document: ${ajv.errorsText(validate.errors)}; body: ${text.slice(0, 500)}`
}

const problems: Array<string> = []
let installed = false

/**
 * `fetch` without the check, for servers that are not Waybill (the bench's hand-written floor and
 * ceiling answer only what a client of the bench needs).
 */
export const uncheckedFetch: typeof globalThis.fetch = globalThis.fetch.bind(globalThis)

/** Wraps `globalThis.fetch` so every `/api/v1` answer is checked (see the module comment). */
export const installApiSchemaCheck = (): void => {
  if (installed) return
  installed = true
  const original = globalThis.fetch
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const response = await original(input, init)
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
    if (!url.pathname.startsWith("/api/v1/")) return response
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase()
    const problem = await answerProblem(method, url, response)
    if (problem !== undefined) {
      problems.push(problem)
      throw new Error(`OpenAPI: ${problem}`)
    }
    return response
  }
  afterEach(() => {
    if (problems.length === 0) return
    const found = problems.splice(0)
    throw new Error(`answers that do not match docs/api/openapi.json:\n${found.join("\n")}`)
  })
}
