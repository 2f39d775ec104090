/** Fastify 5 with `@waybill/http-fastify`: src/fastify.ts, booked and downloaded through. */
import type { AddressInfo } from "node:net"
import type { FastifyInstance } from "fastify"
import { afterAll, beforeAll, expect, it } from "vitest"
import { fastifyApp } from "../src/fastify.js"
import { bookAndDownload } from "./scenario.js"
import { openWaybill, type WaybillUnderTest } from "./waybill.js"

let t: WaybillUnderTest
let app: FastifyInstance
let url: string

beforeAll(async () => {
  t = await openWaybill()
  app = fastifyApp(t.waybill)
  await app.listen({ port: 0, host: "127.0.0.1" })
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await app.close()
  await t.close()
})

it("keeps the app's own routes", async () => {
  expect(await (await fetch(`${url}/health`)).text()).toBe("ok")
})

it("books a shipment and downloads its document through Fastify", async () => {
  await bookAndDownload(url, t)
})
