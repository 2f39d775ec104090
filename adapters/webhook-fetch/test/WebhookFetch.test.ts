import * as net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { KeyRing, type SecretPurpose, Ssrf, WebhookSignature, type WebhookResponse } from "@waybill/core"
import { WebhookFetch } from "../src/index.js"
import { certificate, receiver } from "@waybill/testkit/webhook-receiver"

const allowLoopback = Option.getOrThrow(Ssrf.parseAllowList("127.0.0.1,::1"))

const ring = KeyRing.fromSecrets(
  Object.fromEntries(
    (["api-key", "ticket", "otp", "webhook"] as const).map((p, i) => [
      p,
      [{ id: `${p}-1`, material: Redacted.make(new Uint8Array(32).fill(i + 1)) }]
    ])
  ) as unknown as Record<SecretPurpose, ReadonlyArray<{ id: string; material: Redacted.Redacted<Uint8Array> }>>
)

const secretA = WebhookSignature.formatSecret(new Uint8Array(32).map((_, i) => i))
const secretB = WebhookSignature.formatSecret(new Uint8Array(32).map((_, i) => 255 - i))

const signedRequest = (url: string, body: string, secrets: ReadonlyArray<string>, id = "evt_01TEST") =>
  Effect.map(
    WebhookSignature.headers(
      secrets.map((s) => Redacted.make(s)),
      id,
      Math.floor(Date.now() / 1000),
      body
    ),
    (headers) => ({ url, headers: { ...headers, "content-type": "application/json" }, body })
  ).pipe(Effect.provide(ring))

/** A transport closed with the test's scope (its kept-alive connections would outlive it). */
const transportOf = (options: WebhookFetch.Options) =>
  Effect.acquireRelease(
    Effect.sync(() => WebhookFetch.make(options)),
    (t) => t.dispose
  )

const answered = (r: WebhookResponse) => {
  if (r._tag !== "Answered") throw new Error(`expected an answer, got ${r.reason}: ${r.message}`)
  return r
}

describe("WebhookFetch over a real HTTPS receiver", () => {
  it.scoped("delivers byte-exact bodies that standardwebhooks verifies, incl. non-ASCII and a rotation", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      const transport = yield* transportOf({ allowPrivate: allowLoopback, ca: [pems.cert] })
      const body = JSON.stringify({ id: "evt_01TEST", data: { name: "Zoë Ångström — 東京都 🚚", quote: '"\\' } })
      const res = answered(yield* transport.send(yield* signedRequest(r.url, body, [secretA])))
      expect(res.status).toBe(200)
      expect(res.head).toBe("ok")
      const got = r.received[0]!
      expect(got.body).toBe(body)
      expect(new StandardWebhook(secretA).verify(got.body, got.headers)).toEqual(JSON.parse(body))
      expect(() => new StandardWebhook(secretB).verify(got.body, got.headers)).toThrow()

      // During a rotation both secrets sign: receivers holding either one accept.
      yield* transport.send(yield* signedRequest(r.url, body, [secretB, secretA]))
      const rotated = r.received[1]!
      expect(rotated.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
      expect(new StandardWebhook(secretA).verify(rotated.body, rotated.headers)).toEqual(JSON.parse(body))
      expect(new StandardWebhook(secretB).verify(rotated.body, rotated.headers)).toEqual(JSON.parse(body))
    })
  )

  it.effect("signs exactly as the standardwebhooks library does", () =>
    Effect.gen(function* () {
      const body = '{"test": 2432232314, "ü": "🚚"}'
      const ours = yield* WebhookSignature.sign(
        [Redacted.make(secretA)],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        body
      )
      const theirs = new StandardWebhook(secretA).sign(
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        new Date(1614265330 * 1000),
        body
      )
      expect(ours).toBe(theirs)
    }).pipe(Effect.provide(ring))
  )

  it.scoped("reports 429 with Retry-After, 410, and a redirect without following it", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      const transport = yield* transportOf({ allowPrivate: allowLoopback, ca: [pems.cert] })
      r.setHandler((_req, res) => {
        res.writeHead(429, { "retry-after": "120" })
        res.end("slow down")
      })
      const limited = answered(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA])))
      expect([limited.status, limited.retryAfter, limited.head]).toEqual([429, "120", "slow down"])

      r.setHandler((_req, res) => {
        res.writeHead(410)
        res.end()
      })
      expect(answered(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA]))).status).toBe(410)

      r.setHandler((req, res) => {
        if (req.url === "/elsewhere") res.end("followed!")
        else {
          res.writeHead(302, { location: "/elsewhere" })
          res.end()
        }
      })
      const before = r.received.length
      const redirected = answered(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA])))
      expect(redirected.status).toBe(302)
      expect(r.received.length).toBe(before + 1)
    })
  )

  it.scoped("gives up on slow answers and reads only the start of oversized ones", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      // The total budget is short only where the answer never comes, so the outcome cannot
      // depend on how loaded the machine is: whatever the handshake costs, no answer arrives.
      const impatient = yield* transportOf({ allowPrivate: allowLoopback, ca: [pems.cert], totalTimeoutMs: 300 })
      r.setHandler(() => {
        // never answers
      })
      const slow = yield* impatient.send(yield* signedRequest(r.url, "{}", [secretA]))
      expect(slow).toMatchObject({
        _tag: "NoAnswer",
        reason: "timeout",
        message: "no complete answer within 300 ms"
      })
      expect(slow.durationMs).toBeGreaterThanOrEqual(290)

      // The endless answer is cut by size, not time: the default 15 s budget leaves a loaded
      // machine all the time it needs to read 64 KiB.
      const transport = yield* transportOf({
        allowPrivate: allowLoopback,
        ca: [pems.cert],
        maxResponseBytes: 64 * 1024,
        headBytes: 16
      })
      r.setHandler((_req, res) => {
        res.writeHead(200)
        const chunk = Buffer.alloc(16 * 1024, "x")
        // An endless answer: the transport must stop by itself.
        const pump = () => {
          while (res.write(chunk)) {
            // keep writing until the socket pushes back
          }
        }
        res.on("drain", pump)
        res.on("error", () => undefined)
        pump()
      })
      const big = answered(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA])))
      expect(big.status).toBe(200)
      expect(big.head).toBe("x".repeat(16))
    })
  )

  it.scoped("gives up on a connection whose TLS handshake never completes", () =>
    Effect.gen(function* () {
      // Accepts TCP and then says nothing: no TLS handshake, ever.
      const sockets: Array<net.Socket> = []
      const server = net.createServer((socket) => void sockets.push(socket))
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () =>
          Effect.async<void>((resume) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => resume(Effect.void))
          })
      )
      const port = (server.address() as net.AddressInfo).port
      const transport = yield* transportOf({ allowPrivate: allowLoopback, connectTimeoutMs: 300 })
      const silent = yield* transport.send({ url: `https://127.0.0.1:${port}/hooks`, headers: {}, body: "{}" })
      expect(silent).toMatchObject({ _tag: "NoAnswer", reason: "timeout", message: "not connected within 300 ms" })
      expect(sockets.length).toBe(1)
    })
  )

  it.scoped("reports a receiver that is down, and an untrusted certificate", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      const untrusting = yield* transportOf({ allowPrivate: allowLoopback })
      expect(yield* untrusting.send(yield* signedRequest(r.url, "{}", [secretA]))).toMatchObject({
        _tag: "NoAnswer",
        reason: "network"
      })
      yield* r.stop
      const transport = yield* transportOf({ allowPrivate: allowLoopback, ca: [pems.cert] })
      expect(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA]))).toMatchObject({
        _tag: "NoAnswer",
        reason: "network"
      })
    })
  )
})

describe("WebhookFetch SSRF guard", () => {
  const refused = (transport: ReturnType<typeof WebhookFetch.make>, url: string) =>
    Effect.map(transport.send({ url, headers: {}, body: "{}" }), (r) => {
      expect([url, r._tag, r._tag === "NoAnswer" ? r.reason : r.status]).toEqual([url, "NoAnswer", "refused"])
    })

  it.scoped("refuses loopback, private, link-local, metadata and odd IPv4 spellings in the URL", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      const transport = yield* transportOf({ ca: [pems.cert] })
      for (const url of [
        r.url,
        `https://localhost:${r.port}/`,
        `https://[::1]:${r.port}/`,
        `https://[::ffff:127.0.0.1]:${r.port}/`,
        `https://2130706433:${r.port}/`,
        `https://0x7f000001:${r.port}/`,
        `https://0x7f.0.0.1:${r.port}/`,
        `https://0177.0.0.1:${r.port}/`,
        `https://127.1:${r.port}/`,
        "https://10.0.0.1/",
        "https://192.168.1.1/",
        "https://169.254.169.254/latest/meta-data/",
        "https://[fe80::1]/",
        "https://[fd00::1]/",
        "https://[64:ff9b::7f00:1]/",
        "http://example.com/"
      ])
        yield* refused(transport, url)
      expect(r.received).toHaveLength(0)
    })
  )

  it.scoped("checks every DNS answer, at every attempt", () =>
    Effect.gen(function* () {
      const answers: Record<string, ReadonlyArray<WebhookFetch.ResolvedAddress>> = {
        "loopback.test": [{ address: "127.0.0.1", family: 4 }],
        "metadata.test": [{ address: "169.254.169.254", family: 4 }],
        "private.test": [{ address: "10.1.2.3", family: 4 }],
        "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
        "linklocal.test": [{ address: "fe80::1", family: 6 }],
        "mixed.test": [
          { address: "93.184.216.34", family: 4 },
          { address: "127.0.0.1", family: 4 }
        ]
      }
      const transport = yield* transportOf({ resolve: (h) => Promise.resolve(answers[h] ?? []) })
      for (const host of Object.keys(answers)) yield* refused(transport, `https://${host}:1/`)
    })
  )

  it.scoped("connects to the address it checked, even when the DNS answer changes", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      // A rebinding name: the first answer is the allowed address, later ones are not.
      let calls = 0
      let clock = 1_000_000
      const transport = yield* transportOf({
        allowPrivate: Option.getOrThrow(Ssrf.parseAllowList("127.0.0.1")),
        ca: [pems.cert],
        now: () => clock,
        // The test clock jumps; the idle sweep (real time) must not read that as idleness.
        idleMs: 3_600_000_000,
        resolve: () => {
          calls++
          return Promise.resolve([{ address: calls === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 as const }])
        }
      })
      const url = `https://receiver.test:${r.port}/hooks`
      const first = answered(yield* transport.send(yield* signedRequest(url, "{}", [secretA])))
      expect(first.status).toBe(200)
      expect(calls).toBe(1)
      expect(r.received[0]!.localAddress).toBe("127.0.0.1")
      // The kept-alive connection is reused for at most 60 s; then the name is checked again.
      clock += 60_000
      yield* refused(transport, url)
      expect(calls).toBe(2)
      expect(r.received).toHaveLength(1)
      // The pool was retired: the refusal stands, without a connection to the old address.
      yield* refused(transport, url)
      expect(calls).toBe(3)
      expect(r.received).toHaveLength(1)
    })
  )
})

describe("WebhookFetch connection reuse", () => {
  const allowAllLoopback = Option.getOrThrow(Ssrf.parseAllowList("127.0.0.0/8"))

  it.scoped("reuses one connection per name and checks the name again after 60 s", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      let calls = 0
      let clock = 1_000_000
      const transport = yield* transportOf({
        allowPrivate: allowAllLoopback,
        ca: [pems.cert],
        now: () => clock,
        // The test clock jumps; the idle sweep (real time) must not read that as idleness.
        idleMs: 3_600_000_000,
        resolve: () => {
          calls++
          return Promise.resolve([{ address: "127.0.0.1", family: 4 as const }])
        }
      })
      const url = `https://receiver.test:${r.port}/hooks`
      for (let i = 0; i < 5; i++) {
        expect(answered(yield* transport.send(yield* signedRequest(url, `{"n":${i}}`, [secretA]))).status).toBe(200)
        clock += 10_000
      }
      // 40 s of deliveries: one connection, one DNS check.
      expect(new Set(r.received.map((x) => x.remotePort)).size).toBe(1)
      expect(calls).toBe(1)
      // 60 s after the check: checked again, and as the name still leads there, the connection stays.
      clock += 20_000
      expect(answered(yield* transport.send(yield* signedRequest(url, "{}", [secretA]))).status).toBe(200)
      expect(calls).toBe(2)
      expect(new Set(r.received.map((x) => x.remotePort)).size).toBe(1)
      expect(r.received.map((x) => x.body).slice(0, 5)).toEqual([0, 1, 2, 3, 4].map((n) => `{"n":${n}}`))
    })
  )

  it.scoped("retires the connections of a name that now leads elsewhere", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      // Listening on every address, so 127.0.0.1 and 127.0.0.2 both reach it.
      const r = yield* receiver(pems, "0.0.0.0")
      let address = "127.0.0.1"
      let clock = 1_000_000
      const transport = yield* transportOf({
        allowPrivate: allowAllLoopback,
        ca: [pems.cert],
        now: () => clock,
        // The test clock jumps; the idle sweep (real time) must not read that as idleness.
        idleMs: 3_600_000_000,
        resolve: () => Promise.resolve([{ address, family: 4 as const }])
      })
      const url = `https://receiver.test:${r.port}/hooks`
      answered(yield* transport.send(yield* signedRequest(url, "{}", [secretA])))
      address = "127.0.0.2"
      // Within 60 s the checked connection is still used.
      clock += 59_000
      answered(yield* transport.send(yield* signedRequest(url, "{}", [secretA])))
      clock += 1_000
      answered(yield* transport.send(yield* signedRequest(url, "{}", [secretA])))
      expect(r.received.map((x) => x.localAddress)).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.2"])
      expect(r.received[0]!.remotePort).toBe(r.received[1]!.remotePort)
    })
  )

  it.scoped("opens at most maxSocketsPerHost connections to one name, and dispose closes them", () =>
    Effect.gen(function* () {
      const pems = yield* certificate
      const r = yield* receiver(pems)
      const transport = yield* transportOf({ allowPrivate: allowLoopback, ca: [pems.cert], maxSocketsPerHost: 2 })
      let open = 0
      let most = 0
      r.setHandler((_req, res) => {
        open++
        most = Math.max(most, open)
        setTimeout(() => {
          open--
          res.end("ok")
        }, 20)
      })
      const sent = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => Effect.flatMap(signedRequest(r.url, `{"n":${i}}`, [secretA]), transport.send),
        { concurrency: "unbounded" }
      )
      expect(sent.map((x) => answered(x).status)).toEqual(Array(8).fill(200))
      expect(most).toBeLessThanOrEqual(2)
      const ports = new Set(r.received.map((x) => x.remotePort))
      expect(ports.size).toBeLessThanOrEqual(2)
      // After dispose the old connections are gone; the next send opens a new one.
      yield* transport.dispose
      answered(yield* transport.send(yield* signedRequest(r.url, "{}", [secretA])))
      expect(ports.has(r.received.at(-1)!.remotePort)).toBe(false)
    })
  )
})
