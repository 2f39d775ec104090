/**
 * @module WebhookFetch
 *
 * `WebhookTransport` over `node:https`, with the SSRF guard: the URL must be HTTPS without
 * credentials; the host name is resolved whenever a connection is opened and every answer must
 * be a public unicast address (or on the host's explicit allow-list); the connection goes to
 * the address that was checked, because the check happens inside the socket's own `lookup`,
 * so a DNS answer that changes between check and connect cannot be used to reach anything
 * else. No redirect is followed (`node:https` never does; a 3xx is a failed attempt), the
 * connection must be up in 5 s and the whole attempt done in 15 s, and at most 64 KiB of the
 * answer is read.
 *
 * Connections are kept alive: a TLS handshake costs more than a delivery, and a busy endpoint
 * gets thousands. Each (host name, port) has one pool (an `https.Agent` with a bounded number
 * of sockets) pinned to the address its first connection checked. A kept-alive connection is
 * reused for at most 60 s after the name was last checked: past that the next delivery
 * resolves the name again, and if it now leads elsewhere or to a refused address the pool is
 * retired (idle sockets closed at once, busy ones after their answer). Pools unused for a
 * while are closed, and `dispose` (the layer's finalizer) closes everything.
 *
 * Not `fetch`: undici offers no per-connection `lookup` without a custom dispatcher, and its
 * redirect and body handling are harder to bound; `node:https` gives each knob directly.
 */
import * as dns from "node:dns"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import type { Duplex } from "node:stream"
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
  /** Connections per (host name, port), busy or idle; default 16. More requests wait for one. */
  readonly maxSocketsPerHost?: number
  /** How long a kept-alive connection is reused before the name is checked again; default 60 000. */
  readonly recheckMs?: number
  /** A pool unused this long is closed; default 30 000. */
  readonly idleMs?: number
  /** The clock of the re-check and idle rules (default `Date.now`); replaced in tests. */
  readonly now?: () => number
}

const systemResolve = (hostname: string): Promise<ReadonlyArray<ResolvedAddress>> =>
  dns.promises
    .lookup(hostname, { all: true, verbatim: true })
    .then((list) => list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }) as const))

/** Thrown inside `lookup` so the request fails with a recognisable reason. */
class Refused extends Error {
  readonly code = "WAYBILL_SSRF_REFUSED"
}

/** The transport, with `dispose` to close its kept-alive connections. */
export interface Transport extends WebhookTransportShape {
  /** Closes every connection, busy or idle; sends after it still work (they open new ones). */
  readonly dispose: Effect.Effect<void>
}

/**
 * The connections to one (host name, port): an agent whose every new socket goes through
 * {@link Pool.lookup}, pinned to the address the first connection checked.
 */
interface Pool {
  readonly key: string
  readonly agent: PoolAgent
  /** The checked address connections go to; unset until the first connection (and for IP literals). */
  address: ResolvedAddress | undefined
  /** When the name was last resolved and checked. */
  checkedAt: number
  lastUsed: number
  inFlight: number
  retired: boolean
  /** A re-check under way, shared by the deliveries that found the pool stale together. */
  rechecking: Promise<string | undefined> | undefined
}

/** An agent that keeps no socket of a retired pool. */
class PoolAgent extends https.Agent {
  retired = false
  override keepSocketAlive(socket: Duplex): boolean {
    if (this.retired) return false
    return (https.Agent.prototype as unknown as { keepSocketAlive: (s: Duplex) => boolean }).keepSocketAlive.call(
      this,
      socket
    )
  }
}

type Checked =
  | { readonly _tag: "ok"; readonly answers: ReadonlyArray<ResolvedAddress> }
  | { readonly _tag: "refused"; readonly message: string }

/** Errors of a reused socket that mean "the server had closed it": the request never arrived. */
const staleSocketCodes = new Set(["ECONNRESET", "EPIPE"])

/** The transport itself, for embedders that wire ports by hand (call `dispose` when done). */
export const make = (options: Options = {}): Transport => {
  const allow = options.allowPrivate ?? []
  const resolve = options.resolve ?? systemResolve
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  const totalTimeoutMs = options.totalTimeoutMs ?? 15_000
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024
  const headBytes = options.headBytes ?? 1024
  const maxSockets = options.maxSocketsPerHost ?? 16
  const recheckMs = options.recheckMs ?? 60_000
  const idleMs = options.idleMs ?? 30_000
  const now = options.now ?? Date.now
  // Built once: parsing Node's ~150 root certificates per request would cost more than the TLS
  // handshake itself.
  const secureContext =
    options.ca === undefined || options.ca.length === 0
      ? undefined
      : tls.createSecureContext({ ca: [...tls.rootCertificates, ...options.ca] })

  /** Resolves `hostname` and checks every answer: one refused address refuses the name. */
  const check = (hostname: string): Promise<Checked> =>
    resolve(hostname).then((answers) => {
      if (answers.length === 0) throw new Error(`no address for ${hostname}`)
      for (const a of answers) {
        if (Option.isSome(Ssrf.check(a.address, allow)))
          return { _tag: "refused", message: `${hostname} resolves to a refused address ${a.address}` }
      }
      return { _tag: "ok", answers }
    })

  const pools = new Map<string, Pool>()
  /** Retired pools still finishing a request; closed when the last one ends. */
  const draining = new Set<Pool>()

  const closeIdleSockets = (agent: https.Agent) => {
    for (const list of Object.values(agent.freeSockets)) for (const socket of list ?? []) socket.destroy()
  }

  /** No new request goes to `pool`; idle sockets close now, busy ones after their answer. */
  const retire = (pool: Pool) => {
    if (pool.retired) return
    pool.retired = true
    pool.agent.retired = true
    if (pools.get(pool.key) === pool) pools.delete(pool.key)
    closeIdleSockets(pool.agent)
    if (pool.inFlight === 0) pool.agent.destroy()
    else draining.add(pool)
  }

  let sweeper: ReturnType<typeof setInterval> | undefined
  const sweep = () => {
    const t = now()
    for (const pool of pools.values()) if (pool.inFlight === 0 && t - pool.lastUsed >= idleMs) retire(pool)
    if (pools.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper)
      sweeper = undefined
    }
  }

  const newPool = (key: string): Pool => {
    const agent = new PoolAgent({ keepAlive: true, maxSockets, scheduling: "lifo" })
    const pool: Pool = {
      key,
      agent,
      address: undefined,
      checkedAt: now(),
      lastUsed: now(),
      inFlight: 0,
      retired: false,
      rechecking: undefined
    }
    pools.set(key, pool)
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, Math.max(1_000, Math.min(idleMs, 10_000)))
      sweeper.unref()
    }
    return pool
  }

  // Every new socket of a pool resolves and checks the name here, and is handed only a checked
  // address: the connection is pinned to what was checked. The pool's own address is used
  // while the name still leads there; when it leads elsewhere, this connection goes to the new
  // checked address and the pool is retired, so later deliveries start a pool pinned there.
  const lookupOf =
    (pool: Pool): LookupFunction =>
    (hostname, lookupOptions, callback) => {
      check(hostname).then(
        (result) => {
          if (result._tag === "refused") {
            retire(pool)
            return callback(new Refused(result.message), "", 4)
          }
          const pinned = pool.address
          const same = pinned === undefined ? undefined : result.answers.find((a) => a.address === pinned.address)
          const chosen = same ?? result.answers[0]!
          if (pinned === undefined || same !== undefined) {
            pool.address = chosen
            pool.checkedAt = now()
          } else retire(pool)
          if (lookupOptions.all === true)
            return (callback as unknown as (e: null, list: Array<ResolvedAddress>) => void)(null, [chosen])
          return callback(null, chosen.address, chosen.family)
        },
        (error: Error) => callback(error, "", 4)
      )
    }
  const lookups = new WeakMap<Pool, LookupFunction>()

  /**
   * The pool a delivery to `key` uses. A pool whose name was checked more than `recheckMs` ago
   * is checked again before its connections are reused; `refused` when the name now leads to
   * a refused address.
   */
  const poolFor = async (key: string, hostname: string): Promise<Pool | { readonly refused: string }> => {
    for (;;) {
      const pool = pools.get(key)
      if (pool === undefined) return newPool(key)
      if (pool.address === undefined || now() - pool.checkedAt < recheckMs) return pool
      pool.rechecking ??= check(hostname)
        .then(
          (result): string | undefined => {
            if (result._tag === "refused") {
              retire(pool)
              return result.message
            }
            if (result.answers.some((a) => a.address === pool.address?.address)) pool.checkedAt = now()
            else retire(pool)
            return undefined
          },
          // Unresolvable now: the pool goes, and the next connection's lookup reports why.
          () => {
            retire(pool)
            return undefined
          }
        )
        .finally(() => {
          pool.rechecking = undefined
        })
      const refused = await pool.rechecking
      // Refused now: said without opening anything.
      if (refused !== undefined) return { refused }
    }
  }

  // What the URL check says about a URL, and its pool's key: the same few endpoint URLs come
  // back for every delivery, and parsing and checking them is pure.
  const targets = new Map<string, { readonly refused: string } | { readonly hostname: string; readonly key: string }>()
  const targetOf = (raw: string) => {
    const known = targets.get(raw)
    if (known !== undefined) return known
    const problem = Ssrf.checkUrl(raw, allow)
    let target: { readonly refused: string } | { readonly hostname: string; readonly key: string }
    if (Option.isSome(problem)) target = { refused: problem.value }
    else {
      const url = new URL(raw)
      target = { hostname: url.hostname, key: `${url.hostname}:${url.port === "" ? "443" : url.port}` }
    }
    if (targets.size >= 1024) targets.clear()
    targets.set(raw, target)
    return target
  }

  const send: Transport["send"] = (request) =>
    Effect.async<WebhookResponse>((resume) => {
      const started = performance.now()
      const elapsed = () => performance.now() - started
      const target = targetOf(request.url)
      if ("refused" in target) {
        resume(Effect.succeed({ _tag: "NoAnswer", reason: "refused", durationMs: elapsed(), message: target.refused }))
        return
      }
      const { hostname, key } = target
      let settled = false
      let req: ReturnType<typeof https.request> | undefined
      let pool: Pool | undefined
      let connect: ReturnType<typeof setTimeout> | undefined
      const release = () => {
        if (pool === undefined) return
        const p = pool
        pool = undefined
        p.inFlight--
        p.lastUsed = now()
        if (p.retired && p.inFlight === 0) {
          draining.delete(p)
          p.agent.destroy()
        }
      }
      const finish = (response: WebhookResponse) => {
        if (settled) return
        settled = true
        clearTimeout(total)
        clearTimeout(connect)
        release()
        resume(Effect.succeed(response))
      }
      const fail = (reason: "timeout" | "refused" | "network" | "too-large", message: string) => {
        finish({ _tag: "NoAnswer", reason, durationMs: elapsed(), message })
        req?.destroy()
      }
      const total = setTimeout(() => fail("timeout", `no complete answer within ${totalTimeoutMs} ms`), totalTimeoutMs)
      const body = Buffer.from(request.body, "utf8")

      /** One try on `p`; a reused socket the server had already closed gets one more, on a new one. */
      const attempt = (p: Pool, mayRetry: boolean) => {
        let answering = false
        clearTimeout(connect)
        let lookup = lookups.get(p)
        if (lookup === undefined) {
          lookup = lookupOf(p)
          lookups.set(p, lookup)
        }
        const r = https.request(request.url, {
          method: "POST",
          headers: { ...request.headers, "content-length": String(body.length) },
          lookup,
          agent: p.agent,
          ...(secureContext === undefined ? {} : { secureContext })
        })
        req = r
        // The connect limit runs from when the request gets a new socket: waiting for one of
        // the pool's sockets to be free is bounded by the total limit only.
        r.on("socket", (socket) => {
          if (r.reusedSocket || settled) return
          connect = setTimeout(() => fail("timeout", `not connected within ${connectTimeoutMs} ms`), connectTimeoutMs)
          socket.once("secureConnect", () => clearTimeout(connect))
        })
        r.on("error", (error: Error & { readonly code?: string }) => {
          if (settled || req !== r) return
          if (error instanceof Refused) return fail("refused", error.message)
          if (mayRetry && !answering && r.reusedSocket && staleSocketCodes.has(error.code ?? "")) {
            return attempt(p, false)
          }
          fail("network", `${error.code ?? "error"}: ${error.message}`)
        })
        r.on("response", (res) => {
          answering = true
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
            // Enough read: the status is what counts; the rest is not worth the bandwidth (and
            // the connection, with an unread answer on it, cannot be reused).
            if (size >= maxResponseBytes) {
              answered()
              r.destroy()
            }
          })
          res.on("end", answered)
          res.on("error", (error) => fail("network", error.message))
        })
        r.end(body)
      }

      poolFor(key, hostname).then(
        (found) => {
          if (settled) return
          if ("refused" in found) return fail("refused", found.refused)
          pool = found
          found.inFlight++
          found.lastUsed = now()
          attempt(found, true)
        },
        (error: Error) => fail("network", error.message)
      )
      return Effect.sync(() => {
        settled = true
        clearTimeout(total)
        clearTimeout(connect)
        req?.destroy()
        release()
      })
    })

  const dispose = Effect.sync(() => {
    if (sweeper !== undefined) clearInterval(sweeper)
    sweeper = undefined
    for (const pool of [...pools.values(), ...draining]) {
      pool.retired = true
      pool.agent.retired = true
      pool.agent.destroy()
    }
    pools.clear()
    draining.clear()
  })

  return { send, dispose }
}

/** The transport as a layer; its connections are closed when the layer's scope closes. */
export const layer = (options: Options = {}): Layer.Layer<WebhookTransport> =>
  Layer.scoped(
    WebhookTransport,
    Effect.acquireRelease(
      Effect.sync(() => make(options)),
      (transport) => transport.dispose
    )
  )
