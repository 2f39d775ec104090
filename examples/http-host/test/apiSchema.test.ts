/**
 * The check every e2e answer goes through (`apiSchema.ts`) refuses what the document does not
 * describe: an unknown member, a wrong type, an undocumented status or media type, and a 404 or
 * 405 that is not the error envelope.
 */
import { describe, expect, it } from "vitest"
import { answerProblem } from "./apiSchema.js"

const url = (path: string) => new URL(`http://127.0.0.1${path}`)
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } })
const failure = (message: string) => ({ data: null, error: { message, exception: null } })
const cancel = url("/api/v1/order/cancel/json/?id=12345678")

describe("answers checked against the OpenAPI document", () => {
  it("accepts answers the document describes", async () => {
    expect(await answerProblem("GET", cancel, json(200, { data: { result: "success" }, error: null }))).toBeUndefined()
    expect(await answerProblem("GET", cancel, json(409, failure("This order cannot be canceled.")))).toBeUndefined()
    // Without the final slash, as the handler reads it.
    expect(await answerProblem("GET", url("/api/v1/order/cancel/json"), json(400, failure("x")))).toBeUndefined()
    expect(
      await answerProblem("DELETE", cancel, json(405, failure("Method DELETE is not allowed here.")))
    ).toBeUndefined()
    expect(await answerProblem("GET", url("/api/v1/nothing/"), json(404, failure("Not found.")))).toBeUndefined()
  })

  it("refuses an undocumented status or media type", async () => {
    expect(await answerProblem("GET", cancel, json(418, failure("teapot")))).toMatch(/no such status/)
    const text = new Response("Not found.\n", { status: 409, headers: { "content-type": "text/plain" } })
    expect(await answerProblem("GET", cancel, text)).toMatch(/no text\/plain answer/)
  })

  it("refuses bodies that do not match the schema", async () => {
    const quote = url("/api/v1/utilities/quote/?origin=60606")
    // An error envelope without exception, an extra member, a wrong type.
    expect(await answerProblem("GET", cancel, json(400, { data: null, error: { message: "x" } }))).toMatch(/match/)
    expect(await answerProblem("GET", cancel, json(409, { ...failure("x"), extra: 1 }))).toMatch(/match/)
    expect(await answerProblem("GET", quote, json(200, { data: { miles: "far" }, error: null }))).toMatch(/match/)
    expect(await answerProblem("GET", url("/api/v1/nothing/"), json(404, { message: "Not found." }))).toMatch(/match/)
    const notJson = new Response("{", { status: 400, headers: { "content-type": "application/json" } })
    expect(await answerProblem("GET", cancel, notJson)).toMatch(/not JSON/)
  })

  it("leaves the caller's response unread", async () => {
    const response = json(200, { data: { result: "success" }, error: null })
    await answerProblem("GET", cancel, response)
    expect(await response.json()).toEqual({ data: { result: "success" }, error: null })
  })
})
