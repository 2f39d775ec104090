/**
 * A real HTTPS receiver on loopback with a self-signed certificate (for `127.0.0.1` and
 * the test-only name `receiver.test`), for transport and interop tests of webhook delivery
 * (`@waybill/webhook-fetch`'s own tests and the example host's end-to-end tests). Imported as
 * `@waybill/testkit/webhook-receiver`, apart from the main entry, because it needs Node.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import { generate } from "selfsigned"

export interface Received {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly localAddress: string
  /** The sender's port: deliveries over one kept-alive connection share it. */
  readonly remotePort: number
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

/**
 * A self-signed certificate for `name` and 127.0.0.1, made per call, for loopback TLS servers in
 * tests (the clients that should trust it pass its `cert` as `ca`).
 */
export const certificateFor = (name: string) =>
  Effect.promise(() =>
    generate([{ name: "commonName", value: name }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [
        { name: "basicConstraints", cA: true },
        {
          name: "subjectAltName",
          altNames: [
            { type: 2, value: name },
            { type: 7, ip: "127.0.0.1" }
          ]
        }
      ]
    } as Parameters<typeof generate>[1])
  )

/** The receiver's certificate: `receiver.test` and 127.0.0.1. */
export const certificate = certificateFor("receiver.test")

/** Starts a receiver; `handler` decides each answer (default 200 "ok"). Closed with the scope. */
export const receiver = (pems: { readonly private: string; readonly cert: string }, host = "127.0.0.1") =>
  Effect.gen(function* () {
    const received: Array<Received> = []
    let handler: Handler = (_req, res) => res.end("ok")
    const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v
        received.push({
          headers,
          body,
          localAddress: req.socket.localAddress ?? "",
          remotePort: req.socket.remotePort ?? 0
        })
        handler(req, res, body)
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(0, host, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as AddressInfo).port
    return {
      port,
      url: `https://${host}:${port}/hooks`,
      received,
      setHandler: (h: Handler) => {
        handler = h
      },
      stop: Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    }
  })
