/** Express 5 with `toNodeListener`: src/express.ts served by node:http, booked and downloaded through. */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { expressApp } from "../src/express.js"
import { bookAndDownload } from "./scenario.js"
import { openWaybill, type WaybillUnderTest } from "./waybill.js"

let t: WaybillUnderTest
let server: Server
let url: string

beforeAll(async () => {
  t = await openWaybill()
  server = createServer(expressApp(t.waybill))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await t.close()
})

it("keeps the app's own routes", async () => {
  expect(await (await fetch(`${url}/health`)).text()).toBe("ok")
})

it("books a shipment and downloads its document through Express", async () => {
  await bookAndDownload(url, t)
})
