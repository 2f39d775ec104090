/**
 * The pages load with the portal's first request: a pipeline module that cannot be loaded (a
 * broken install) is a plain 503 with the security fields and the reason in the log, never a
 * rejected promise, and the next request tries again.
 */
import * as Logger from "effect/Logger"
import * as Layer from "effect/Layer"
import { describe, expect, it, vi } from "vitest"
import { CONTENT_SECURITY_POLICY, createPortal, type PortalRequirements } from "../src/index.js"
import { ORIGIN } from "./fakes.js"

const attempts = { count: 0 }

vi.mock("../src/internal/pipeline.js", async (original) => {
  attempts.count++
  if (attempts.count === 1) throw new Error("Cannot find package 'preact-render-to-string'")
  return original()
})

describe("createPortal, pages loaded on first use", () => {
  it("checks its options before any page is loaded", () => {
    const services = Layer.empty as Layer.Layer<PortalRequirements>
    expect(() => createPortal(services, { publicOrigin: "not a url" })).toThrow(/publicOrigin/)
    expect(() => createPortal(services, { publicOrigin: ORIGIN, trustedProxies: ["nope"] })).toThrow(/trustedProxies/)
    expect(attempts.count).toBe(0)
  })

  it("answers 503 while the pages cannot be loaded, logs why, and loads them on a later request", async () => {
    const logged: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logged.push(String(message))
    })
    const services = Layer.merge(
      Layer.empty as Layer.Layer<PortalRequirements>,
      Logger.replace(Logger.defaultLogger, logger)
    )
    const portal = createPortal(services, { publicOrigin: ORIGIN })
    const first = await portal.handler(new Request(`${ORIGIN}/portal/signin`))
    expect(first.status).toBe(503)
    expect(first.headers.get("retry-after")).toBe("5")
    expect(first.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY)
    expect(logged.join("\n")).toContain("portal: the pages could not be loaded")
    const second = await portal.handler(new Request(`${ORIGIN}/portal/signin`))
    expect(second.status).toBe(200)
    expect(await second.text()).toContain("<form")
    await portal.dispose()
  })
})
