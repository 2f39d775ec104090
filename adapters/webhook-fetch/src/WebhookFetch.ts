/**
 * @module WebhookFetch
 *
 * `WebhookTransport` over `node:https`, with the SSRF guard: the URL must be HTTPS without
 * credentials; the host name is resolved at every attempt and every answer must be a public
 * unicast address (or on the host's explicit allow-list); the connection goes to the address
 * that was checked, because the check happens inside the socket's own `lookup`, so a DNS
 * answer that changes between check and connect cannot be used to reach anything else. No
 * redirect is followed (`node:https` never does; a 3xx is a failed attempt), the connection
 * must be up in 5 s and the whole attempt done in 15 s, and at most 64 KiB of the answer is
 * read.
 *
 * Not `fetch`: undici offers no per-connection `lookup` without a custom dispatcher, and its
 * redirect and body handling are harder to bound; `node:https` gives each knob directly.
 */
import * as dns from "node:dns"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import * as tls from "node:tls"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type ClientIp, Ssrf, WebhookTransport, type WebhookResponse, type WebhookTransportShape } from "@waybill/core"

/** One DNS answer. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Options of {@link make}. */
export interface Options {
  /** Private addresses allowed anyway (tests' loopback receivers, on-premises endpoints). */
  readonly allowPrivate?: ReadonlyArray<ClientIp.Cidr>
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  readonly ca?: ReadonlyArray<string>
  /** Default 5 000. */
  readonly connectTimeoutMs?: number
  /** Default 15 000. */
  readonly totalTimeoutMs?: number
  /** How much of the answer is read; default 64 KiB. */
  readonly maxResponseBytes?: number
  /** How much of the answer is kept for the delivery log; default 1 KiB. */
  readonly headBytes?: number
  /** DNS resolution (default `dns.lookup` with every answer); replaced in tests. */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>
}

const systemResolve = (hostname: string): Promise<ReadonlyArray<ResolvedAddress>> =>
  dns.promises
    .lookup(hostname, { all: true, verbatim: true })
    .then((list) => list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }) as const))

/** Thrown inside `lookup` so the request fails with a recognisable reason. */
class Refused extends Error {
  readonly code = "WAYBILL_SSRF_REFUSED"
}

/** The transport itself, for embedders that wire ports by hand. */
export const make = (options: Options = {}): WebhookTransportShape => {
  const allow = options.allowPrivate ?? []
  const resolve = options.resolve ?? systemResolve
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  const totalTimeoutMs = options.totalTimeoutMs ?? 15_000
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024
  const headBytes = options.headBytes ?? 1024
  // Built once: parsing Node's ~150 root certificates per request would cost more than the TLS
  // handshake itself.
  const secureContext =
    options.ca === undefined || options.ca.length === 0
      ? undefined
      : tls.createSecureContext({ ca: [...tls.rootCertificates, ...options.ca] })

  // Resolves and checks every answer, then hands the socket only checked addresses: the
  // connection is pinned to what was checked.
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (answers) => {
        if (answers.length === 0) return callback(new Error(`no address for ${hostname}`), "", 4)
        for (const a of answers) {
          if (Option.isSome(Ssrf.check(a.address, allow)))
            return callback(new Refused(`${hostname} resolves to a refused address ${a.address}`), "", 4)
        }
        if (lookupOptions.all === true)
          return (callback as unknown as (e: null, list: Array<ResolvedAddress>) => void)(null, [...answers])
        const first = answers[0]!
        return callback(null, first.address, first.family)
      },
      (error: Error) => callback(error, "", 4)
    )
  }

  const send: WebhookTransportShape["send"] = (request) =>
    Effect.async<WebhookResponse>((resume) => {
      const started = performance.now()
      const elapsed = () => performance.now() - started
      const urlProblem = Ssrf.checkUrl(request.url, allow)
      if (Option.isSome(urlProblem)) {
        resume(
          Effect.succeed({ _tag: "NoAnswer", reason: "refused", durationMs: elapsed(), message: urlProblem.value })
        )
        return
      }
      let settled = false
      const finish = (response: WebhookResponse) => {
        if (settled) return
        settled = true
        clearTimeout(total)
        clearTimeout(connect)
        resume(Effect.succeed(response))
      }
      const body = Buffer.from(request.body, "utf8")
      const req = https.request(request.url, {
        method: "POST",
        headers: { ...request.headers, "content-length": String(body.length) },
        lookup,
        agent: false,
        ...(secureContext === undefined ? {} : { secureContext })
      })
      const fail = (reason: "timeout" | "refused" | "network" | "too-large", message: string) => {
        finish({ _tag: "NoAnswer", reason, durationMs: elapsed(), message })
        req.destroy()
      }
      const total = setTimeout(() => fail("timeout", `no complete answer within ${totalTimeoutMs} ms`), totalTimeoutMs)
      const connect = setTimeout(() => fail("timeout", `not connected within ${connectTimeoutMs} ms`), connectTimeoutMs)
      req.on("socket", (socket) => {
        socket.once("secureConnect", () => clearTimeout(connect))
      })
      req.on("error", (error: Error & { readonly code?: string }) => {
        if (error instanceof Refused) fail("refused", error.message)
        else fail("network", `${error.code ?? "error"}: ${error.message}`)
      })
      req.on("response", (res) => {
        const chunks: Array<Buffer> = []
        let size = 0
        const answered = () => {
          const text = Buffer.concat(chunks).subarray(0, headBytes).toString("utf8")
          const retryAfter = res.headers["retry-after"]
          finish({
            _tag: "Answered",
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            durationMs: elapsed(),
            head: text
          })
        }
        res.on("data", (chunk: Buffer) => {
          if (size < headBytes) chunks.push(chunk)
          size += chunk.length
          // Enough read: the status is what counts; the rest is not worth the bandwidth.
          if (size >= maxResponseBytes) {
            answered()
            req.destroy()
          }
        })
        res.on("end", answered)
        res.on("error", (error) => fail("network", error.message))
      })
      req.end(body)
      return Effect.sync(() => {
        settled = true
        clearTimeout(total)
        clearTimeout(connect)
        req.destroy()
      })
    })

  return { send }
}

/** The transport as a layer. */
export const layer = (options: Options = {}): Layer.Layer<WebhookTransport> =>
  Layer.sync(WebhookTransport, () => make(options))
