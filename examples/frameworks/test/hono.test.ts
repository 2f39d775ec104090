/** Hono on `@hono/node-server`, no bridge: src/hono.ts, booked and downloaded through. */
import type { AddressInfo } from "node:net"
import { serve, type ServerType } from "@hono/node-server"
import { afterAll, beforeAll, expect, it } from "vitest"
import { honoApp } from "../src/hono.js"
import { bookAndDownload } from "./scenario.js"
import { openWaybill, type WaybillUnderTest } from "./waybill.js"

let t: WaybillUnderTest
let server: ServerType
let url: string

beforeAll(async () => {
  t = await openWaybill()
  await new Promise<void>((resolve) => {
    server = serve({ fetch: honoApp(t.waybill).fetch, port: 0, hostname: "127.0.0.1" }, () => resolve())
  })
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await t.close()
})

it("keeps the app's own routes", async () => {
  expect(await (await fetch(`${url}/health`)).text()).toBe("ok")
})

it("books a shipment and downloads its document through Hono", async () => {
  await bookAndDownload(url, t)
})
