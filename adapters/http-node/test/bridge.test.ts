import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import express from "express"
import { afterEach, describe, expect, it } from "vitest"
import { type FetchHandler, toNodeListener } from "../src/index.js"

/** A Fetch handler that echoes what the bridge handed it. */
const echo: FetchHandler = async (request, info) => {
  const body = request.body === null ? "" : await request.text()
  return new Response(
    JSON.stringify({
      method: request.method,
      url: request.url,
      body,
      remoteAddress: info?.remoteAddress ?? null,
      header: request.headers.get("x-test")
    }),
    { status: 201, headers: { "content-type": "application/json", "x-echo": "1" } }
  )
}

let server: Server | undefined
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
  server = undefined
})

const listen = async (s: Server) => {
  server = s
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()))
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

describe("toNodeListener", () => {
  it("passes method, URL, headers, body and peer address through node:http, and the answer back", async () => {
    const url = await listen(createServer(toNodeListener(echo)))
    const r = await fetch(`${url}/api/v1/x/?a=1`, { method: "POST", body: "héllo", headers: { "x-test": "yes" } })
    expect(r.status).toBe(201)
    expect(r.headers.get("x-echo")).toBe("1")
    expect(await r.json()).toEqual({
      method: "POST",
      url: `${url}/api/v1/x/?a=1`,
      body: "héllo",
      remoteAddress: "127.0.0.1",
      header: "yes"
    })
  })

  it("streams a large body both ways without loss", async () => {
    const big = "x".repeat(3 * 1024 * 1024)
    const url = await listen(createServer(toNodeListener(async (req) => new Response(await req.text()))))
    const r = await fetch(url, { method: "PUT", body: big })
    expect((await r.text()).length).toBe(big.length)
  })

  it("answers HEAD without a body", async () => {
    const url = await listen(
      createServer(toNodeListener(async () => new Response("body", { headers: { "content-length": "4" } })))
    )
    const r = await fetch(url, { method: "HEAD" })
    expect(r.status).toBe(200)
    expect(await r.text()).toBe("")
  })

  it("a handler that throws becomes a JSON 500 envelope, not a hung socket", async () => {
    const url = await listen(createServer(toNodeListener(() => Promise.reject(new Error("boom")))))
    const r = await fetch(url)
    expect(r.status).toBe(500)
    expect(await r.json()).toEqual({ data: null, error: { message: "Internal error.", exception: null } })
  })

  it("works as Express middleware mounted on a path, next to the app's own routes", async () => {
    const app = express()
    app.get("/health", (_req, res) => {
      res.json({ ok: true })
    })
    app.use("/api/v1", toNodeListener(echo))
    const url = await listen(createServer(app))
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ ok: true })
    const r = await fetch(`${url}/api/v1/order/json/`, { method: "POST", body: "{}" })
    const seen = (await r.json()) as { url: string; body: string }
    // The mount path is kept: the handler sees the full original URL.
    expect(seen.url).toBe(`${url}/api/v1/order/json/`)
    expect(seen.body).toBe("{}")
  })
})
