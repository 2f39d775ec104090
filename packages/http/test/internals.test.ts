import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import { readBody } from "../src/internal/body.js"
import { safeUrlForLog } from "../src/internal/redact.js"

describe("safeUrlForLog", () => {
  it("masks every credential parameter, whatever its case", () => {
    const url = new URL("https://x.test/api/v1/order/docs/?control_no=123&key=wb_live_S3CRET&APIKEY=a&token=b&ticket=c")
    const logged = safeUrlForLog(url)
    expect(logged).toContain("control_no=123")
    for (const secret of ["wb_live_S3CRET", "=a&", "=b&", "=c"]) expect(logged).not.toContain(secret)
  })

  it("property: no value of a key parameter ever appears in the log line", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_]{8,60}$/),
        fc.constantFrom("key", "apikey", "token", "Key"),
        (secret, name) => {
          const url = new URL(`https://x.test/p/?${name}=${secret}&id=1`)
          expect(safeUrlForLog(url)).not.toContain(secret)
        }
      )
    )
  })
})

describe("readBody", () => {
  const request = (body: BodyInit, headers: Record<string, string> = {}) =>
    new Request("https://x.test/", { method: "POST", body, headers, duplex: "half" } as RequestInit)

  it.effect("reads a body under the limit", () =>
    Effect.gen(function* () {
      const bytes = yield* readBody(request("hello"), 10)
      expect(new TextDecoder().decode(bytes)).toBe("hello")
    })
  )

  it.effect("refuses a declared length over the limit before reading", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(readBody(request("hello", { "content-length": "5000" }), 10))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("BodyTooLarge")
    })
  )

  it.effect("counts a streamed body without a length and stops at the limit", () =>
    Effect.gen(function* () {
      let pulls = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulls++
          controller.enqueue(new Uint8Array(1024))
          if (pulls > 1000) controller.close()
        }
      })
      const exit = yield* Effect.exit(readBody(request(stream), 4096))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("BodyTooLarge")
      expect(pulls).toBeLessThan(20)
    })
  )
})
