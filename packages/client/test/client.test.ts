/**
 * The client's retry, backoff and idempotency rules against a scripted fake fetch: no network,
 * no timers (the sleep is injected and records what it was asked to wait), no timing assertions.
 */
import { describe, expect, it } from "vitest"
import { randomUuid } from "../src/client.js"
import {
  backoffDelay,
  defaultRetry,
  IdempotencyMessages,
  WaybillApiError,
  WaybillClient,
  WaybillNetworkError
} from "../src/index.js"

const BASE = "https://waybill.test"
const ok = (data: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ data, error: null }), {
    status: 200,
    headers: { "content-type": "application/json", ...headers }
  })
const refused = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ data: null, error: { message, exception: null } }), {
    status,
    headers: { "content-type": "application/json", ...headers }
  })

type Step = Response | Error

/** A fetch that answers from a script, and remembers each request it was sent (with its body). */
const fakeFetch = (script: ReadonlyArray<Step>) => {
  const sent: Array<{ method: string; url: string; headers: Headers; body: string }> = []
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() })
    const step = script[sent.length - 1]
    if (step === undefined) throw new Error(`unexpected request #${sent.length}`)
    if (step instanceof Error) throw step
    return step
  }
  return { fetch, sent }
}

const setup = (script: ReadonlyArray<Step>, options: { maxAttempts?: number; random?: number } = {}) => {
  const { fetch, sent } = fakeFetch(script)
  const waits: Array<number> = []
  let keys = 0
  const client = new WaybillClient({
    baseUrl: `${BASE}/`,
    apiKey: "wb_test_secret",
    fetch,
    sleep: async (ms) => {
      waits.push(ms)
    },
    random: () => options.random ?? 0.5,
    newIdempotencyKey: () => `key-${++keys}`,
    retry: { maxAttempts: options.maxAttempts ?? 4 }
  })
  return { client, sent, waits }
}

const booked = { jsonstrn: "", shipments_with_errors: 0, shipments: [{ order: 1, result: "success", track_no: "T1" }] }
const shipment = { ServiceType: "STANDARD" } as never

describe("WaybillClient: requests", () => {
  it("sends the key as a Bearer token and the shipments as JSON, and returns the envelope's data", async () => {
    const { client, sent } = setup([ok(booked)])
    await expect(client.createShipments([shipment])).resolves.toEqual(booked)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.method).toBe("POST")
    expect(sent[0]!.url).toBe(`${BASE}/api/v1/order/json/`)
    expect(sent[0]!.headers.get("authorization")).toBe("Bearer wb_test_secret")
    expect(sent[0]!.headers.get("content-type")).toBe("application/json")
    expect(sent[0]!.headers.get("idempotency-key")).toBe("key-1")
    expect(JSON.parse(sent[0]!.body)).toEqual({ data: { shipments: [shipment] } })
  })

  it("gives each logical call its own key, and takes the caller's own or none", async () => {
    const { client, sent } = setup([ok(booked), ok(booked), ok(booked), ok(booked)])
    await client.createShipments([shipment])
    await client.createShipments([shipment])
    await client.createShipments([shipment], { idempotencyKey: "mine" })
    await client.createShipments([shipment], { idempotencyKey: false })
    expect(sent.map((r) => r.headers.get("idempotency-key"))).toEqual(["key-1", "key-2", "mine", null])
  })

  it("sends cancel with a key, queries in the URL, and account setup as a urlencoded form", async () => {
    const { client, sent } = setup([ok({ result: "success" }), ok({ result: "success", message: "m" })])
    await client.cancel("T 1")
    await client.accountSetup("start", { email_address: "a@b.example", password: "p&q" })
    expect(sent[0]!.url).toBe(`${BASE}/api/v1/order/cancel/json/?id=T%201`)
    expect(sent[0]!.headers.get("idempotency-key")).toBe("key-1")
    expect(sent[1]!.url).toBe(`${BASE}/api/v1/accountsetup/?action=start`)
    expect(sent[1]!.headers.get("content-type")).toBe("application/x-www-form-urlencoded")
    expect(Object.fromEntries(new URLSearchParams(sent[1]!.body))).toEqual({
      email_address: "a@b.example",
      password: "p&q"
    })
  })

  it("downloads from the uri as given, without the API key, with the bytes and content type", async () => {
    const { client, sent } = setup([
      new Response(new Uint8Array([37, 80, 68, 70]), { headers: { "content-type": "application/pdf" } })
    ])
    const file = await client.download({ uri: "https://files.test/dl/?ticket=abc" })
    expect(file.contentType).toBe("application/pdf")
    expect(await file.bytes()).toEqual(new Uint8Array([37, 80, 68, 70]))
    expect(sent[0]!.url).toBe("https://files.test/dl/?ticket=abc")
    expect(sent[0]!.headers.get("authorization")).toBeNull()
  })
})

describe("WaybillClient: retries", () => {
  it("retries a POST after network errors and a 503 with the same key and the same body bytes", async () => {
    const { client, sent, waits } = setup([new TypeError("fetch failed"), refused(503, "Busy."), ok(booked)])
    await expect(client.createShipments([shipment])).resolves.toEqual(booked)
    expect(sent).toHaveLength(3)
    expect(new Set(sent.map((r) => r.headers.get("idempotency-key")))).toEqual(new Set(["key-1"]))
    expect(new Set(sent.map((r) => r.body)).size).toBe(1)
    // Full jitter with random() = 0.5: half of base * 2^(n-1).
    expect(waits).toEqual([125, 250])
  })

  it("waits what Retry-After asks instead of the backoff", async () => {
    const { client, waits } = setup([refused(503, "Busy.", { "retry-after": "3" }), ok({ orders: [] })])
    await client.documents({ control_no: "T1" })
    expect(waits).toEqual([3000])
  })

  it("gives up on a Retry-After longer than maxRetryAfterMs and returns that answer", async () => {
    const { client, sent } = setup([refused(503, "Down for maintenance.", { "retry-after": "3600" })])
    const error = await client.track("T1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaybillApiError)
    expect(error).toMatchObject({ status: 503, kind: "unavailable", retryAfter: 3600 })
    expect(sent).toHaveLength(1)
  })

  it("retries 409 in progress while the key is held, and never another 409", async () => {
    const inProgress = setup([refused(409, IdempotencyMessages.inProgress), ok(booked)])
    await expect(inProgress.client.createShipments([shipment])).resolves.toEqual(booked)
    expect(inProgress.sent).toHaveLength(2)

    const other = setup([refused(409, "The order cannot be canceled.")])
    await expect(other.client.cancel("T1")).rejects.toMatchObject({ status: 409, kind: "conflict" })
    expect(other.sent).toHaveLength(1)
  })

  it.each([400, 401, 403, 404, 413, 415, 422, 429, 502])("never retries a %i", async (status) => {
    const { client, sent } = setup([refused(status, "No.")])
    await expect(client.createShipments([shipment])).rejects.toBeInstanceOf(WaybillApiError)
    expect(sent).toHaveLength(1)
  })

  it("does not retry a booking sent without a key (it could book twice)", async () => {
    const { client, sent } = setup([new TypeError("fetch failed")])
    const error = await client.createShipments([shipment], { idempotencyKey: false }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaybillNetworkError)
    expect(error).toMatchObject({ attempts: 1 })
    expect(sent).toHaveLength(1)
  })

  it("stops after maxAttempts: the last answer, or a network error naming the attempts", async () => {
    const busy = setup([refused(503, "Busy."), refused(503, "Busy."), refused(503, "Busy.")], { maxAttempts: 3 })
    await expect(busy.client.quote({ origin: "60606", destination: "60613", weight: "5" })).rejects.toMatchObject({
      status: 503,
      message: "Busy."
    })
    expect(busy.sent).toHaveLength(3)
    expect(busy.waits).toHaveLength(2)

    const down = setup([new TypeError("a"), new TypeError("b")], { maxAttempts: 2 })
    const error = await down.client.track("T1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaybillNetworkError)
    expect(error).toMatchObject({ attempts: 2, cause: new TypeError("b") })
  })

  it("the raw client retries GETs and keyed requests, and sets no key on its own", async () => {
    const { client, sent } = setup([new TypeError("x"), ok({ result: "success" }), new TypeError("y")])
    const cancel = await client.raw.GET("/api/v1/order/cancel/json/", { params: { query: { id: "T1" } } })
    expect(cancel.response.status).toBe(200)
    expect(sent.map((r) => r.headers.get("idempotency-key"))).toEqual([null, null])
    await expect(
      client.raw.POST("/api/v1/order/json/", { body: { data: { shipments: [shipment] } } })
    ).rejects.toBeInstanceOf(WaybillNetworkError)
    expect(sent).toHaveLength(3)
  })

  it("an attempt that gets no answer within timeoutMs is aborted and retried like a network error", async () => {
    const sent: Array<AbortSignal> = []
    // The first attempt hangs until its signal aborts; the second answers.
    const fetch = (request: Request) => {
      sent.push(request.signal)
      if (sent.length > 1) return Promise.resolve(ok({ result: "success" }))
      return new Promise<Response>((_, reject) =>
        request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true })
      )
    }
    const client = new WaybillClient({ baseUrl: BASE, fetch, timeoutMs: 1, sleep: async () => {} })
    await expect(client.cancel("T1")).resolves.toEqual({ result: "success" })
    expect(sent).toHaveLength(2)
    expect(sent[0]!.aborted).toBe(true)
    expect(sent[0]!.reason).toMatchObject({ name: "TimeoutError" })
  })

  it("an abort ends the call between attempts with the caller's reason", async () => {
    const controller = new AbortController()
    const { fetch, sent } = fakeFetch([refused(503, "Busy."), ok(booked)])
    const client = new WaybillClient({
      baseUrl: BASE,
      fetch,
      sleep: async () => {
        controller.abort(new Error("stop"))
        throw controller.signal.reason
      }
    })
    await expect(client.createShipments([shipment], { signal: controller.signal })).rejects.toThrow("stop")
    expect(sent).toHaveLength(1)
  })
})

describe("WaybillClient: errors", () => {
  it("an HTTP 200 whose envelope holds an error is a refusal", async () => {
    const { client } = setup([refused(200, "No documents match.")])
    await expect(client.documents({ control_no: "T1" })).rejects.toMatchObject({
      _tag: "WaybillApiError",
      status: 200,
      kind: "refused",
      message: "No documents match.",
      envelope: { data: null, error: { message: "No documents match.", exception: null } }
    })
  })

  it("kinds follow the status, and the idempotency messages", async () => {
    const cases: Array<[number, string, string]> = [
      [400, "Phone is required", "bad_request"],
      [401, "Access denied.", "unauthenticated"],
      [422, IdempotencyMessages.mismatch, "idempotency_mismatch"],
      [429, "Too many requests.", "rate_limited"],
      [500, "Oops.", "unexpected"]
    ]
    for (const [status, message, kind] of cases) {
      const { client } = setup([refused(status, message)], { maxAttempts: 1 })
      await expect(client.track("T1")).rejects.toMatchObject({ status, message, kind })
    }
  })

  it("a download refused in plain text carries the text", async () => {
    const { client } = setup([new Response("This link has expired.", { status: 403 })])
    await expect(client.download("https://files.test/dl/?ticket=old")).rejects.toMatchObject({
      status: 403,
      kind: "forbidden",
      message: "This link has expired.",
      envelope: undefined
    })
  })

  it("a body that is not the envelope still becomes a WaybillApiError", async () => {
    const { client } = setup([new Response("<html>Bad gateway</html>", { status: 502 })])
    await expect(client.track("T1")).rejects.toMatchObject({ status: 502, kind: "upstream_failed" })
  })
})

describe("backoffDelay", () => {
  it("is full jitter under an exponential cap", () => {
    const options = { ...defaultRetry, baseDelayMs: 100, maxDelayMs: 1000 }
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, options, () => 0.999999))).toEqual([99, 199, 399, 799, 999])
    expect(backoffDelay(3, options, () => 0)).toBe(0)
  })
})

describe("randomUuid", () => {
  const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

  it("is a version 4 UUID, also where crypto.randomUUID is missing (insecure browser origins)", () => {
    expect(randomUuid()).toMatch(v4)
    const original = crypto.randomUUID
    try {
      Object.defineProperty(crypto, "randomUUID", { value: undefined, configurable: true, writable: true })
      const made = new Set(Array.from({ length: 50 }, () => randomUuid()))
      expect(made.size).toBe(50)
      for (const id of made) expect(id).toMatch(v4)
    } finally {
      Object.defineProperty(crypto, "randomUUID", { value: original, configurable: true, writable: true })
    }
  })
})
