/**
 * Answers that carry a secret are `Cache-Control: no-store`, so no proxy or browser cache keeps
 * a copy. Here: the operator API's webhook answers that hold a signing secret (adding an
 * endpoint, rotating its secret), run through the real handler. The layer stubs only the ports
 * those routes reach (accounts: one that exists; webhooks: a map); the answers of the customer
 * routes that hold keys or tickets (accountsetup, documents, download, track, quote, cancel)
 * are checked end to end in the example host's tests.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  AccountStore,
  type AccountStoreShape,
  Config,
  Entropy,
  Geo,
  KeyRing,
  RateLimits,
  type SecretPurpose,
  WaybillConfig,
  WebhookStore,
  type WebhookStoreShape,
  type Webhook
} from "@waybill/core"
import { createHandler, type HandlerRequirements } from "../src/index.js"
import { noBlocks } from "./noBlocks.js"

const TOKEN = "op_token_for_the_no_store_test"

const endpoints = new Map<string, Webhook.EndpointRecord>()
const webhookStore = {
  insertEndpoint: (e: Webhook.EndpointRecord) => Effect.sync(() => void endpoints.set(e.id, e)),
  updateEndpoint: (e: Webhook.EndpointRecord) =>
    Effect.sync(() => endpoints.has(e.id) && endpoints.set(e.id, e) !== undefined),
  findEndpoint: (id: string) => Effect.sync(() => Option.fromNullable(endpoints.get(id)))
} as unknown as WebhookStoreShape
const accounts = {
  findAccount: () => Effect.succeed(Option.some({ customerNo: "100001" }))
} as unknown as AccountStoreShape

const ring = KeyRing.fromSecrets(
  Object.fromEntries(
    (["api-key", "ticket", "otp", "webhook"] as const).map((p, i) => [
      p,
      [{ id: `${p}-1`, material: Redacted.make(new Uint8Array(32).fill(i + 1)) }]
    ])
  ) as unknown as Record<SecretPurpose, ReadonlyArray<{ id: string; material: Redacted.Redacted<Uint8Array> }>>
)

const layer = Layer.mergeAll(
  WaybillConfig.layer(Config.defaults),
  noBlocks,
  Layer.succeed(Geo, { lookup: () => Effect.succeed(Option.none()) }),
  RateLimits.memory,
  Layer.succeed(AccountStore, accounts),
  Layer.succeed(WebhookStore, webhookStore),
  Entropy.webCrypto,
  ring
) as unknown as Layer.Layer<HandlerRequirements, never>

const post = (path: string, body: unknown) =>
  new Request(`http://127.0.0.1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

describe("answers holding a secret", () => {
  it("are no-store: adding a webhook endpoint and rotating its secret", async () => {
    const waybill = createHandler(layer, { operatorToken: Redacted.make(TOKEN) })
    try {
      const added = await waybill.handler(
        post("/ops/v1/webhooks/", { customer_no: "100001", url: "https://hooks.example.com/in", events: ["*"] })
      )
      const addedBody = (await added.json()) as { data: { id: string; secret: string } }
      expect([added.status, added.headers.get("cache-control")]).toEqual([201, "no-store"])
      expect(addedBody.data.secret).toMatch(/^whsec_/)

      const rotated = await waybill.handler(post(`/ops/v1/webhooks/${addedBody.data.id}/rotate-secret/`, {}))
      const rotatedBody = (await rotated.json()) as { data: { secret: string } }
      expect([rotated.status, rotated.headers.get("cache-control")]).toEqual([200, "no-store"])
      expect(rotatedBody.data.secret).toMatch(/^whsec_/)
      expect(rotatedBody.data.secret).not.toBe(addedBody.data.secret)
    } finally {
      await waybill.dispose()
    }
  })
})
