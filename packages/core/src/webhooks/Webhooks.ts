/**
 * @module Webhooks
 *
 * Account webhooks: endpoint management and the dispatcher that delivers the outbox.
 *
 * Events are written with the change they record, and the `EventOutbox` adds one delivery row
 * per endpoint that selected the event's type in the same transaction. The dispatcher leases
 * due deliveries, sends each with Standard Webhooks headers, and records the outcome and the
 * next attempt time in the database. A crash between sending and recording leaves the lease to
 * expire, and the next claim sends the same bytes with the same `webhook-id` again: receivers
 * see at-least-once delivery, de-duplicated by `webhook-id` and ordered by `sequence`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as MetricLabel from "effect/MetricLabel"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as EffectSchedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { AccountNotFound, AccountStore, UserStore } from "../access/index.js"
import type { ClientIp } from "../access/index.js"
import {
  Entropy,
  uniformInt,
  decodeBase64Url,
  encodeBase64Url,
  utf8,
  KeyRing,
  Transactor,
  Ulid,
  Mailer,
  Page
} from "../shared/index.js"
import { type KeySecret, Metrics, type StorageError } from "../shared/index.js"
import type { EventType } from "../shipments/index.js"
import { EventOutbox } from "../shipments/index.js"
import * as Ssrf from "./Ssrf.js"
import * as Schedule from "./WebhookSchedule.js"
import * as Signature from "./WebhookSignature.js"
import {
  type AttemptKey,
  type AttemptRecord,
  type Claimed,
  type DeliveryRecord,
  type EndpointRecord,
  type Outcome,
  type StoredEvent,
  WebhookStore
} from "./WebhookStore.js"
import { type WebhookResponse, WebhookTransport } from "./WebhookTransport.js"

/** The event types an endpoint can select (`webhook.test` is sent on request only). */
export const selectableTypes: ReadonlyArray<EventType> = [
  "shipment.booked",
  "shipment.assigned",
  "shipment.unassigned",
  "shipment.picked_up",
  "shipment.stop_arrived",
  "shipment.stop_completed",
  "shipment.attempt_failed",
  "shipment.in_transit",
  "shipment.delivered",
  "shipment.returning",
  "shipment.returned",
  "shipment.canceled",
  "shipment.failed",
  "document.available"
]

/** How long the previous secret keeps signing after a rotation. */
export const rotationOverlapMs = 24 * 60 * 60 * 1000

/** Finished deliveries and log lines are kept this long (events themselves stay). */
export const retentionMs = 30 * 24 * 60 * 60 * 1000

/**
 * Tells the account's owners that an endpoint was disabled: an e-mail to every owner user who
 * has set a password, when the host has a Mailer. Best effort: no owner or a failed send is
 * logged and never stops delivery of other endpoints.
 */
const tellOwner = Effect.fnUntraced(
  function* (
    endpoint: { readonly id: string; readonly url: string; readonly customerNo: string },
    reason: "gone" | "failing"
  ) {
    const mailer = yield* Effect.serviceOption(Mailer)
    const users = yield* Effect.serviceOption(UserStore)
    if (Option.isNone(mailer) || Option.isNone(users)) return
    const owners = (yield* users.value.listUsers(endpoint.customerNo)).filter(
      (u) => u.role === "owner" && u.passwordHash !== null
    )
    yield* Effect.forEach(owners, (owner) =>
      mailer.value.send({
        _tag: "WebhookDisabled",
        to: owner.email,
        endpointId: endpoint.id,
        url: endpoint.url,
        reason
      })
    )
  },
  (effect, endpoint) =>
    effect.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("waybill webhooks: could not tell the owner about a disabled endpoint", cause).pipe(
          Effect.annotateLogs({ endpoint: endpoint.id, customer_no: endpoint.customerNo })
        )
      )
    )
)

/** After this long of nothing but failures an endpoint is disabled. */
export const disableAfterMs = 5 * 24 * 60 * 60 * 1000

/** The endpoint configuration was refused; `message` says why, for the operator. */
export class InvalidWebhook extends Schema.TaggedError<InvalidWebhook>()("InvalidWebhook", {
  message: Schema.String
}) {}

/** No endpoint with that id. */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", {
  id: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Payload

/**
 * The request body of a delivery: `{ id, type, timestamp, livemode, sequence, data }`. `data`
 * is embedded as the JSON text stored when the event was appended, so every attempt, retry and
 * resend sends the same bytes.
 */
export const envelope = (event: StoredEvent): string =>
  `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(
    new Date(event.occurredAt).toISOString()
  )},"livemode":${event.livemode},"sequence":${event.sequence},"data":${event.dataJson}}`

// ---------------------------------------------------------------------------------------------
// Secrets at rest

const sealPrefix = "sealed:v1:"
const sealLabel = utf8("waybill webhook secret sealing v1")
const NO_AAD = new Uint8Array(0)

const sealingKey = Effect.fnUntraced(function* (keyId: Option.Option<string>) {
  const ring = yield* KeyRing
  const secret = Option.isSome(keyId)
    ? Option.getOrUndefined(yield* ring.byId("webhook", keyId.value))
    : yield* ring.current("webhook")
  if (secret === undefined) return yield* Effect.dieMessage("Webhooks: the sealing secret is gone from the KeyRing")
  // A key of its own for sealing, derived from the secret, so the same secret never serves
  // both as an HMAC key and as an AES key.
  const derived: KeySecret = { id: secret.id, material: Redacted.make(yield* ring.hmac(secret, sealLabel)) }
  return { ring, key: derived }
})

/**
 * Seals a signing secret for storage: AES-256-GCM under a key derived from the KeyRing's
 * `webhook` secret, so a copy of the database alone cannot forge deliveries.
 */
export const sealSecret: (secret: Redacted.Redacted<string>) => Effect.Effect<string, never, KeyRing | Entropy> =
  Effect.fnUntraced(function* (secret: Redacted.Redacted<string>) {
    const { ring, key } = yield* sealingKey(Option.none())
    const iv = yield* Effect.flatMap(Entropy, (e) => e.bytes(12))
    const sealed = yield* ring.seal(key, iv, NO_AAD, utf8(Redacted.value(secret)))
    return `${sealPrefix}${key.id}:${encodeBase64Url(iv)}:${encodeBase64Url(sealed)}`
  })

/** Opens a stored secret (one stored unsealed, by a host's own tooling, is used as is). */
export const openSecret: (stored: string) => Effect.Effect<Redacted.Redacted<string>, never, KeyRing> =
  Effect.fnUntraced(function* (stored: string) {
    if (!stored.startsWith(sealPrefix)) return Redacted.make(stored)
    const [keyId, ivText, ctText] = stored.slice(sealPrefix.length).split(":")
    const iv = decodeBase64Url(ivText ?? "")
    const ct = decodeBase64Url(ctText ?? "")
    if (keyId === undefined || iv === undefined || ct === undefined)
      return yield* Effect.dieMessage("Webhooks: malformed sealed secret")
    const { ring, key } = yield* sealingKey(Option.some(keyId))
    const plain = yield* ring.unseal(key, iv, NO_AAD, ct)
    if (Option.isNone(plain)) return yield* Effect.dieMessage("Webhooks: a sealed secret does not open")
    return Redacted.make(new TextDecoder().decode(plain.value))
  })

const newSecret = Effect.map(
  Effect.flatMap(Entropy, (e) => e.bytes(32)),
  (bytes) => Redacted.make(Signature.formatSecret(bytes))
)

// ---------------------------------------------------------------------------------------------
// Endpoint management

/** A new endpoint and its secret, shown once. */
export interface CreatedEndpoint {
  readonly endpoint: EndpointRecord
  readonly secret: Redacted.Redacted<string>
}

const parseTypes = (types: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<EventType>, InvalidWebhook> => {
  const out: Array<EventType> = []
  for (const t of types.map((s) => s.trim()).filter((s) => s !== "")) {
    if (t === "*") return Effect.succeed(selectableTypes)
    const known = selectableTypes.find((s) => s === t)
    if (known === undefined)
      return Effect.fail(
        new InvalidWebhook({ message: `unknown event type ${t}; one of ${selectableTypes.join(", ")} or *` })
      )
    if (!out.includes(known)) out.push(known)
  }
  return out.length === 0
    ? Effect.fail(new InvalidWebhook({ message: "select at least one event type" }))
    : Effect.succeed(out)
}

const checkUrl = (url: string, allowPrivate: ReadonlyArray<ClientIp.Cidr>) =>
  Option.match(Ssrf.checkUrl(url, allowPrivate), {
    onNone: () => Effect.void,
    onSome: (message) => Effect.fail(new InvalidWebhook({ message }))
  })

/** Policy a host sets for endpoint URLs. */
export interface UrlPolicy {
  /** Private addresses allowed anyway (tests, on-premises receivers). */
  readonly allowPrivate?: ReadonlyArray<ClientIp.Cidr>
}

/** Adds an endpoint to an account; the secret is returned once and stored sealed. */
export const addEndpoint = Effect.fn("Webhooks.addEndpoint")(function* (
  input: { readonly customerNo: string; readonly url: string; readonly eventTypes: ReadonlyArray<string> },
  policy: UrlPolicy = {}
) {
  yield* checkUrl(input.url, policy.allowPrivate ?? [])
  const eventTypes = yield* parseTypes(input.eventTypes)
  const accounts = yield* AccountStore
  if (Option.isNone(yield* accounts.findAccount(input.customerNo)))
    return yield* new AccountNotFound({ customerNo: input.customerNo })
  const now = yield* Clock.currentTimeMillis
  const secret = yield* newSecret
  const endpoint: EndpointRecord = {
    id: `we_${yield* Ulid.make}`,
    customerNo: input.customerNo,
    url: input.url,
    eventTypes,
    secret: yield* sealSecret(secret),
    previousSecret: null,
    previousSecretUntil: null,
    enabled: true,
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now
  }
  yield* (yield* WebhookStore).insertEndpoint(endpoint)
  return { endpoint, secret } satisfies CreatedEndpoint
})

const findEndpoint = (id: string) =>
  Effect.flatMap(WebhookStore, (store) => store.findEndpoint(id)).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(new WebhookNotFound({ id })), onSome: Effect.succeed }))
  )

/** One endpoint. */
export const getEndpoint = (id: string): Effect.Effect<EndpointRecord, WebhookNotFound | StorageError, WebhookStore> =>
  findEndpoint(id)

/** How endpoints are paged: newest first by `(createdAt, id)`. */
export const endpointKeying: Page.Keying<Page.TimeKey, EndpointRecord> = Page.byCreation()

/** How deliveries are paged: newest first by `(createdAt, eventId)`. */
export const deliveryKeying: Page.Keying<Page.TimeKey, DeliveryRecord> = {
  schema: Page.TimeKeySchema,
  of: (d) => [d.createdAt, d.eventId]
}

/** How the delivery log is paged: newest first by `(at, eventId, attempt)`. */
export const attemptKeying: Page.Keying<AttemptKey, AttemptRecord> = {
  schema: Schema.Tuple(Schema.Int, Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)), Schema.Int),
  of: (a) => [a.at, a.eventId, a.attempt]
}

/** A page of the endpoints of one account (or of all), newest first. */
export const listEndpoints = Effect.fn("Webhooks.listEndpoints")(function* (
  customerNo: string | undefined,
  query: Page.Query
) {
  const store = yield* WebhookStore
  return yield* Page.read(query, endpointKeying, (page) => store.listEndpoints({ customerNo }, page))
})

/**
 * A new secret; the old one keeps signing alongside it for 24 hours, so receivers can switch
 * over without losing a delivery.
 */
export const rotateSecret = Effect.fn("Webhooks.rotateSecret")(function* (id: string) {
  const endpoint = yield* findEndpoint(id)
  const now = yield* Clock.currentTimeMillis
  const secret = yield* newSecret
  const updated: EndpointRecord = {
    ...endpoint,
    secret: yield* sealSecret(secret),
    previousSecret: endpoint.secret,
    previousSecretUntil: now + rotationOverlapMs,
    updatedAt: now
  }
  yield* (yield* WebhookStore).updateEndpoint(updated)
  return { endpoint: updated, secret } satisfies CreatedEndpoint
})

/** Enables or disables an endpoint; enabling clears the failure history so it gets 5 fresh days. */
export const setEnabled = Effect.fn("Webhooks.setEnabled")(function* (id: string, enabled: boolean) {
  const endpoint = yield* findEndpoint(id)
  const now = yield* Clock.currentTimeMillis
  const updated: EndpointRecord = {
    ...endpoint,
    enabled,
    disabledReason: enabled ? null : "operator",
    failingSince: enabled ? null : endpoint.failingSince,
    updatedAt: now
  }
  yield* (yield* WebhookStore).updateEndpoint(updated)
  return updated
})

/**
 * Changes where an endpoint sends (`url`, checked by the same SSRF and HTTPS rules as
 * {@link addEndpoint}) and which event types it selects. Deliveries already queued stay queued
 * and go to the new URL; events appended from now on follow the new selection. The secret,
 * enablement and health are kept.
 */
export const updateEndpoint = Effect.fn("Webhooks.updateEndpoint")(function* (
  id: string,
  change: { readonly url?: string; readonly eventTypes?: ReadonlyArray<string> },
  policy: UrlPolicy = {}
) {
  if (change.url === undefined && change.eventTypes === undefined)
    return yield* new InvalidWebhook({ message: "give a new url, new events, or both" })
  if (change.url !== undefined) yield* checkUrl(change.url, policy.allowPrivate ?? [])
  const eventTypes = change.eventTypes === undefined ? undefined : yield* parseTypes(change.eventTypes)
  const endpoint = yield* findEndpoint(id)
  const updated: EndpointRecord = {
    ...endpoint,
    ...(change.url === undefined ? {} : { url: change.url }),
    ...(eventTypes === undefined ? {} : { eventTypes }),
    updatedAt: yield* Clock.currentTimeMillis
  }
  // Deleted between the read and the write: the same answer as if it had gone before.
  if (!(yield* (yield* WebhookStore).updateEndpoint(updated))) return yield* new WebhookNotFound({ id })
  return updated
})

/**
 * Deletes an endpoint for good: its queued deliveries are dropped (never sent) and its delivery
 * history and log are removed with it; the events themselves stay for the account's other
 * endpoints. A send already in flight may still arrive once. Returns the endpoint as it was.
 */
export const deleteEndpoint = Effect.fn("Webhooks.deleteEndpoint")(function* (id: string) {
  const endpoint = yield* findEndpoint(id)
  if (!(yield* (yield* WebhookStore).deleteEndpoint(id))) return yield* new WebhookNotFound({ id })
  return endpoint
})

/** An endpoint and a page of its deliveries, newest first. */
export const deliveries = Effect.fn("Webhooks.deliveries")(function* (id: string, query: Page.Query) {
  const endpoint = yield* findEndpoint(id)
  const store = yield* WebhookStore
  const page = yield* Page.read(query, deliveryKeying, (request) => store.listDeliveries(id, request))
  return { endpoint, page } satisfies { readonly endpoint: EndpointRecord; readonly page: Page.Page<DeliveryRecord> }
})

/** An endpoint and a page of its delivery log (one line per attempt), newest first. */
export const deliveryLog = Effect.fn("Webhooks.deliveryLog")(function* (id: string, query: Page.Query) {
  const endpoint = yield* findEndpoint(id)
  const store = yield* WebhookStore
  const page = yield* Page.read(query, attemptKeying, (request) => store.listAttempts(id, request))
  return { endpoint, page } satisfies { readonly endpoint: EndpointRecord; readonly page: Page.Page<AttemptRecord> }
})

/** Sends an event again to every endpoint it was meant for (same `webhook-id`). */
export const resend = Effect.fn("Webhooks.resend")(function* (eventId: string) {
  const now = yield* Clock.currentTimeMillis
  return yield* (yield* WebhookStore).requeueEvent(eventId, now)
})

/** Queues every event since `since` that the endpoint selected and did not get. */
export const recover = Effect.fn("Webhooks.recover")(function* (id: string, since: number) {
  yield* findEndpoint(id)
  const now = yield* Clock.currentTimeMillis
  return yield* (yield* WebhookStore).recover(id, since, now)
})

/** Queues a `webhook.test` event for one endpoint; returns its event id. */
export const sendTest = Effect.fn("Webhooks.sendTest")(function* (id: string) {
  const endpoint = yield* findEndpoint(id)
  const now = yield* Clock.currentTimeMillis
  const eventId = yield* Ulid.eventId
  const outbox = yield* EventOutbox
  const store = yield* WebhookStore
  yield* (yield* Transactor).withTransaction(
    Effect.zipRight(
      outbox.append({
        id: eventId,
        type: "webhook.test",
        customerNo: endpoint.customerNo,
        trackNo: "",
        livemode: false,
        occurredAt: now,
        data: { endpoint_id: endpoint.id }
      }),
      store.enqueue(endpoint.id, eventId, now)
    )
  )
  return eventId
})

// ---------------------------------------------------------------------------------------------
// One account's endpoints (the portal)

/** An event type an endpoint can select, with the one line a person picks it by. */
export interface CatalogEntry {
  readonly type: EventType
  readonly description: string
}

const descriptions: { readonly [K in EventType]: string } = {
  "shipment.booked": "A shipment was booked.",
  "shipment.assigned": "A driver was assigned to the shipment (or replaced by another).",
  "shipment.unassigned": "The driver was taken off the shipment before pickup.",
  "shipment.picked_up": "The goods were collected at the pickup.",
  "shipment.stop_arrived": "The driver arrived at a stop.",
  "shipment.stop_completed": "The work at an intermediate stop is done.",
  "shipment.attempt_failed": "Delivery at a stop failed (closed, refused, ...); the reason is in data.",
  "shipment.in_transit": "The shipment left the pickup and is on its way.",
  "shipment.delivered": "The shipment reached its final stop.",
  "shipment.returning": "After a failed attempt, the goods are on their way back.",
  "shipment.returned": "The goods are back at the pickup.",
  "shipment.canceled": "The shipment was canceled.",
  "shipment.failed": "The shipment cannot be completed (lost, damaged, ...); the reason is in data.",
  "document.available": "A document (a POD, a signature, ...) can be fetched for the shipment.",
  "webhook.test": "A test event sent on request to one endpoint."
}

/**
 * The event types an endpoint can select ({@link selectableTypes}, in that order), each with a
 * one-line description for the form that picks them. `webhook.test` is not among them: it is
 * sent on request only.
 */
export const catalog: ReadonlyArray<CatalogEntry> = selectableTypes.map((type) => ({
  type,
  description: descriptions[type]
}))

/** A line of the delivery log with the type of the event it sent (null when the event is gone). */
export interface LogLine extends AttemptRecord {
  readonly eventType: EventType | null
}

/**
 * An endpoint of the account, or `WebhookNotFound`: another account's endpoint gets the same
 * answer as a missing one, so endpoint ids cannot be probed. An endpoint never changes account,
 * so the check holds for the write that follows it.
 */
const ownEndpoint = (customerNo: string, id: string) =>
  Effect.flatMap(findEndpoint(id), (endpoint) =>
    endpoint.customerNo === customerNo ? Effect.succeed(endpoint) : Effect.fail(new WebhookNotFound({ id }))
  )

/**
 * The endpoint use cases for a person of one account (the portal, or an embedder's own UI):
 * each takes the account's customer number first and touches only that account's endpoints,
 * deliveries and events; anything of another account is `WebhookNotFound` (with the id asked
 * for), like something that does not exist. The unscoped programs above are the operator's.
 */
export const account = {
  /** A page of the account's endpoints, newest first. */
  list: Effect.fn("Webhooks.account.list")(function* (customerNo: string, query: Page.Query) {
    return yield* listEndpoints(customerNo, query)
  }),
  /** One endpoint of the account. */
  get: Effect.fn("Webhooks.account.get")(function* (customerNo: string, id: string) {
    return yield* ownEndpoint(customerNo, id)
  }),
  /** Adds an endpoint to the account ({@link addEndpoint}); the secret is shown once. */
  add: Effect.fn("Webhooks.account.add")(function* (
    customerNo: string,
    input: { readonly url: string; readonly eventTypes: ReadonlyArray<string> },
    policy: UrlPolicy = {}
  ) {
    return yield* addEndpoint({ customerNo, url: input.url, eventTypes: input.eventTypes }, policy)
  }),
  /** Changes an endpoint's URL and/or event types ({@link updateEndpoint}). */
  update: Effect.fn("Webhooks.account.update")(function* (
    customerNo: string,
    id: string,
    change: { readonly url?: string; readonly eventTypes?: ReadonlyArray<string> },
    policy: UrlPolicy = {}
  ) {
    yield* ownEndpoint(customerNo, id)
    return yield* updateEndpoint(id, change, policy)
  }),
  /** Enables or disables an endpoint ({@link setEnabled}). */
  setEnabled: Effect.fn("Webhooks.account.setEnabled")(function* (customerNo: string, id: string, enabled: boolean) {
    yield* ownEndpoint(customerNo, id)
    return yield* setEnabled(id, enabled)
  }),
  /** Deletes an endpoint with its deliveries and log ({@link deleteEndpoint}). */
  delete: Effect.fn("Webhooks.account.delete")(function* (customerNo: string, id: string) {
    yield* ownEndpoint(customerNo, id)
    return yield* deleteEndpoint(id)
  }),
  /** A new signing secret, shown once; the old one signs for 24 more hours ({@link rotateSecret}). */
  rotateSecret: Effect.fn("Webhooks.account.rotateSecret")(function* (customerNo: string, id: string) {
    yield* ownEndpoint(customerNo, id)
    return yield* rotateSecret(id)
  }),
  /** An endpoint and a page of its deliveries, newest first. */
  deliveries: Effect.fn("Webhooks.account.deliveries")(function* (customerNo: string, id: string, query: Page.Query) {
    yield* ownEndpoint(customerNo, id)
    return yield* deliveries(id, query)
  }),
  /** An endpoint and a page of its delivery log (time, event, status, duration, the answer's first bytes). */
  deliveryLog: Effect.fn("Webhooks.account.deliveryLog")(function* (customerNo: string, id: string, query: Page.Query) {
    yield* ownEndpoint(customerNo, id)
    return yield* deliveryLog(id, query)
  }),
  /**
   * {@link account.deliveryLog} with each line's event type (null for an event no longer
   * stored), so a person reads "shipment.booked" and not only an id. One event lookup per
   * distinct event of the page (a page holds at most `Page.maxLimit` lines).
   */
  log: Effect.fn("Webhooks.account.log")(function* (customerNo: string, id: string, query: Page.Query) {
    yield* ownEndpoint(customerNo, id)
    const { endpoint, page } = yield* deliveryLog(id, query)
    const store = yield* WebhookStore
    const types = new Map<string, EventType>()
    for (const eventId of new Set(page.items.map((a) => a.eventId))) {
      const event = yield* store.findEvent(eventId)
      // Events are the account's (they fan out by account); checked anyway, as everywhere here.
      if (Option.isSome(event) && event.value.customerNo === customerNo) types.set(eventId, event.value.type)
    }
    const items: ReadonlyArray<LogLine> = page.items.map((a) => ({ ...a, eventType: types.get(a.eventId) ?? null }))
    return { endpoint, page: { ...page, items } } satisfies {
      readonly endpoint: EndpointRecord
      readonly page: Page.Page<LogLine>
    }
  }),
  /**
   * Sends one of the account's events again to one of its endpoints, with the same `webhook-id`
   * (the Resend of a line in that endpoint's delivery log; the account's other endpoints are
   * not sent it again). Another account's endpoint or event, or an unknown one, is
   * `WebhookNotFound`. How many deliveries were queued: one.
   */
  resend: Effect.fn("Webhooks.account.resend")(function* (customerNo: string, endpointId: string, eventId: string) {
    yield* ownEndpoint(customerNo, endpointId)
    const store = yield* WebhookStore
    const event = yield* store.findEvent(eventId)
    if (Option.isNone(event) || event.value.customerNo !== customerNo)
      return yield* new WebhookNotFound({ id: eventId })
    yield* store.enqueue(endpointId, eventId, yield* Clock.currentTimeMillis)
    return 1
  }),
  /** Queues every event since `since` (epoch ms) that the endpoint selected and did not get. */
  recover: Effect.fn("Webhooks.account.recover")(function* (customerNo: string, id: string, since: number) {
    yield* ownEndpoint(customerNo, id)
    return yield* recover(id, since)
  }),
  /** Queues a `webhook.test` event for one endpoint of the account; its event id. */
  sendTest: Effect.fn("Webhooks.account.sendTest")(function* (customerNo: string, id: string) {
    yield* ownEndpoint(customerNo, id)
    return yield* sendTest(id)
  })
}

// ---------------------------------------------------------------------------------------------
// Dispatcher

/** Tuning of the dispatcher; the defaults suit one process on SQLite. */
export interface DispatchOptions {
  /** Who holds the leases (one id per dispatcher). */
  readonly owner: string
  /** Deliveries claimed per round. Default 64. */
  readonly batch?: number
  /** Parallel sends. Default 16. */
  readonly concurrency?: number
  /**
   * Parallel sends to one endpoint (its lane) in {@link runDispatcher}. Default half of
   * `concurrency` (at least 1): an endpoint that hangs holds at most its lane.
   */
  readonly perEndpoint?: number
  /**
   * In {@link runDispatcher}, a send still waiting after this long gives its slot of
   * `concurrency` back (it keeps its lane), so hanging endpoints never take every slot.
   * Default 2 000 ms.
   */
  readonly slowMs?: number
  /** In {@link runDispatcher}, sends in flight at most, slow ones included. Default 8 x `concurrency`. */
  readonly maxInFlight?: number
  /**
   * How long a claim is held. {@link runDispatcher} renews the leases of its sends every third of
   * it, so a send may outlast it; {@link dispatchOnce} does not, so there it must exceed the
   * transport's total timeout. Default 60 s.
   */
  readonly leaseMs?: number
}

/** What one round did. */
export interface DispatchSummary {
  readonly claimed: number
  readonly delivered: number
  readonly failed: number
}

const userAgent = "Waybill-Webhooks/1"

const isOk = (status: number) => status >= 200 && status <= 299

/**
 * Opened secrets by their sealed text, kept by one dispatcher: opening derives a key and runs
 * AES-GCM, which would otherwise be paid again for every delivery to the same endpoint. A
 * rotation seals a new text, so a stale entry is never used; the map is bounded by clearing.
 */
type SecretCache = Map<string, Redacted.Redacted<string>>

const openCached = (cache: SecretCache | undefined, sealed: string) => {
  const known = cache?.get(sealed)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.tap(openSecret(sealed), (opened) => {
    if (cache === undefined) return
    if (cache.size >= 1024) cache.clear()
    cache.set(sealed, opened)
  })
}

/** The metric outcome of each recorded {@link Outcome}. */
const OUTCOME_METRIC: Readonly<Record<Outcome["_tag"], Metrics.DeliveryOutcome>> = {
  Delivered: "delivered",
  Retry: "retry",
  Exhausted: "exhausted"
}

/** What recording one attempt leaves to do once it is committed (logs, telling the owner). */
type Recorded = readonly [ok: boolean, after: Effect.Effect<void>]

/** What an answer (or its absence) makes of the attempt: delivered, retried at a time, or given up. */
const outcomeOf = (response: WebhookResponse, attempts: number, at: number, random: number): Outcome => {
  if (response._tag === "Answered" && isOk(response.status)) return { _tag: "Delivered" }
  const retryAfterMs =
    response._tag === "Answered" ? Option.getOrUndefined(Schedule.parseRetryAfter(response.retryAfter, at)) : undefined
  return Option.match(
    Schedule.nextDelay(
      {
        attempts,
        status: response._tag === "Answered" ? response.status : undefined,
        timedOut: response._tag === "NoAnswer" && response.reason === "timeout",
        retryAfterMs
      },
      random
    ),
    {
      onNone: (): Outcome => ({ _tag: "Exhausted" }),
      onSome: (d): Outcome => ({ _tag: "Retry", nextAttemptAt: at + d })
    }
  )
}

/** A failed attempt's retry jitter, a uniform draw in [0, 1); a delivered one needs none. */
const jitter = (ok: boolean): Effect.Effect<number, never, Entropy> =>
  ok ? Effect.succeed(0) : Effect.map(uniformInt(1_000_000), (n) => n / 1_000_000)

/**
 * Records one attempt: its log line, the outcome and the next attempt time, and what the answer
 * says about the endpoint (410 disables it; so do 5 days of failures).
 */
const record = (
  owner: string,
  claimed: Claimed,
  response: WebhookResponse
): Effect.Effect<Recorded, StorageError, WebhookStore | Entropy> => {
  const { delivery, endpoint, event } = claimed
  const attempts = delivery.attempts + 1
  const ok = response._tag === "Answered" && isOk(response.status)
  const status = response._tag === "Answered" ? response.status : null
  return Effect.flatMap(WebhookStore, (store) =>
    Effect.flatMap(jitter(ok), (random) =>
      Effect.clockWith((clock) => {
        const at = clock.unsafeCurrentTimeMillis()
        const outcome = outcomeOf(response, attempts, at, random)
        const attempt: AttemptRecord = {
          endpointId: endpoint.id,
          eventId: event.id,
          attempt: attempts,
          at,
          status,
          ok,
          durationMs: Math.round(response.durationMs),
          response: (response._tag === "Answered" ? response.head : `${response.reason}: ${response.message}`).slice(
            0,
            512
          )
        }
        return Effect.flatMap(store.complete({ owner, attempt, outcome }), () => {
          Metrics.deliveriesBy[OUTCOME_METRIC[outcome._tag]].unsafeUpdate(1, NO_LABELS)
          return afterAnswer(store, endpoint, ok, status === 410, at)
        })
      })
    )
  )
}

const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []

/** What an answer does to its endpoint: a 410 disables it at once, and so do 5 days of failures. */
const afterAnswer = (
  store: Context.Tag.Service<WebhookStore>,
  endpoint: Claimed["endpoint"],
  ok: boolean,
  gone: boolean,
  at: number
): Effect.Effect<Recorded, StorageError> => {
  const annotate = Effect.annotateLogs({ endpoint: endpoint.id, customer_no: endpoint.customerNo })
  if (gone) {
    // 410 Gone: the receiver says this endpoint will never work again.
    return Effect.as(store.updateEndpoint({ ...endpoint, enabled: false, disabledReason: "gone", updatedAt: at }), [
      ok,
      Effect.zipRight(
        Effect.logWarning("waybill webhooks: endpoint answered 410 and was disabled").pipe(annotate),
        tellOwner(endpoint, "gone")
      )
    ] as const)
  }
  // A success for an endpoint that was not failing when claimed has nothing to note.
  if (ok && endpoint.failingSince === null) return Effect.succeed(NOTHING_AFTER)
  return Effect.map(
    store.noteHealth({ endpointId: endpoint.id, ok, now: at, disableAfterMs }),
    (disabled): Recorded =>
      disabled
        ? [
            ok,
            Effect.zipRight(
              Effect.logWarning("waybill webhooks: endpoint failed for 5 days and was disabled").pipe(annotate),
              tellOwner(endpoint, "failing")
            )
          ]
        : [ok, Effect.void]
  )
}

const NOTHING_AFTER: Recorded = [true, Effect.void]

/**
 * One claimed delivery: sign, send, record, in a transaction of its own when the host provides a
 * `Transactor` (the SQLite engine commits the ones that end together in one `COMMIT`).
 */
const deliver = (owner: string, claimed: Claimed, cache?: SecretCache) => {
  const { endpoint, event } = claimed
  return Effect.flatMap(Effect.context<WebhookTransport>(), (context) =>
    Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      const current = openCached(cache, endpoint.secret)
      const secrets =
        endpoint.previousSecret !== null && (endpoint.previousSecretUntil ?? 0) > now
          ? Effect.all([current, openCached(cache, endpoint.previousSecret)])
          : Effect.map(current, (s) => [s])
      const body = envelope(event)
      return Effect.flatMap(secrets, (opened) =>
        Effect.flatMap(Signature.headers(opened, event.id, Math.floor(now / 1000), body), (signed) =>
          Effect.flatMap(
            Context.get(context, WebhookTransport).send({
              url: endpoint.url,
              headers: { ...signed, "content-type": "application/json", "user-agent": userAgent },
              body
            }),
            (response) => {
              const recording = record(owner, claimed, response)
              // A success for an endpoint that was not failing changes nothing but the delivery:
              // the store's `complete` is one unit by itself. Otherwise the outcome and what it
              // does to the endpoint (a 410, 5 days of failures) commit together: the outcome
              // makes the shipment's next delivery claimable, and no claim may send it to an
              // endpoint that is being disabled. What follows (logs, telling the owner) runs
              // after the commit.
              const recorded =
                response._tag === "Answered" && isOk(response.status) && endpoint.failingSince === null
                  ? recording
                  : Effect.flatMap(Effect.serviceOption(Transactor), (transactor) =>
                      Option.isSome(transactor) ? transactor.value.withTransaction(recording) : recording
                    )
              return Effect.flatMap(recorded, ([ok, after]) => Effect.as(after, ok))
            }
          )
        )
      )
    })
  )
}

/**
 * {@link deliver}, where one broken delivery (say, a secret sealed under a KeyRing secret that
 * is gone) must not stop the others: it is logged, its lease expires and it is tried again.
 */
const deliverSafely = (owner: string, c: Claimed, cache?: SecretCache) =>
  deliver(owner, c, cache).pipe(
    Effect.catchAllCause((cause) =>
      Effect.as(
        Effect.logError("waybill webhooks: delivery failed unexpectedly", cause).pipe(
          Effect.annotateLogs({ endpoint: c.endpoint.id, event: c.event.id })
        ),
        false
      )
    )
  )

/**
 * The dispatcher's work loop, without rounds: it claims as many deliveries as it has free
 * slots, starts each at once, and claims again as soon as one finishes, so a delivery that
 * takes its full 15 s never waits for, or makes wait, anything else. Each endpoint has a lane
 * of `perEndpoint` sends; endpoints whose lane is full are left out of the claim, so one
 * endpoint's backlog can take at most its lane. A send still waiting after `slowMs` gives its
 * slot back (keeping its lane place), so even many hanging endpoints leave the slots to the
 * others. Order within a shipment holds because the store never hands out a shipment's next
 * delivery while an earlier one is pending.
 */
const pump = (
  options: DispatchOptions & { readonly idle: Duration.DurationInput }
): Effect.Effect<never, never, WebhookStore | WebhookTransport | KeyRing | Entropy> =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const concurrency = Math.max(1, options.concurrency ?? 16)
    const perEndpoint = Math.max(1, options.perEndpoint ?? Math.ceil(concurrency / 2))
    const batch = Math.max(1, options.batch ?? 64)
    const leaseMs = options.leaseMs ?? 60_000
    const slowMs = Math.max(1, options.slowMs ?? 2_000)
    const maxInFlight = Math.max(concurrency, options.maxInFlight ?? concurrency * 8)
    const claimAtLeast = Math.max(1, Math.floor(concurrency / 4))
    const lanes = new Map<string, number>()
    const secrets: SecretCache = new Map()
    /** Deliveries holding one of the `concurrency` slots (not yet slow). */
    let busy = 0
    const inFlight = new Set<{
      readonly startedAt: number
      readonly endpointId: string
      readonly eventId: string
      counted: boolean
    }>()
    const running = yield* FiberSet.make<boolean>()
    // Wakes the loop when a delivery ends or turns slow; one pending wake-up is enough.
    const wakeUp = yield* Queue.sliding<void>(1)
    const uncount = (entry: { counted: boolean }) => {
      if (!entry.counted) return
      entry.counted = false
      busy--
    }
    // A delivery still in flight after `slowMs` is waiting on its endpoint, not working: it
    // gives its slot back (keeping its lane), so endpoints that hang, however many, cannot take
    // every slot. `maxInFlight` bounds what they can hold in all.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(Duration.millis(Math.max(50, Math.floor(slowMs / 4)))),
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            let freed = false
            for (const entry of inFlight) {
              if (entry.counted && now - entry.startedAt >= slowMs) {
                uncount(entry)
                freed = true
              }
            }
            return freed ? Queue.offer(wakeUp, undefined) : Effect.void
          })
        )
      )
    )
    // Every third of a lease, the leases of the sends in flight are pushed a full lease ahead:
    // a receiver slower than the lease never lets another dispatcher send the attempt again
    // while this one is still waiting for the answer. A dispatcher that dies stops renewing,
    // and its leases run out within one lease.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(Duration.millis(Math.max(50, Math.floor(leaseMs / 3)))),
          Effect.suspend(() => {
            if (inFlight.size === 0) return Effect.void
            const deliveries = [...inFlight].map(({ endpointId, eventId }) => ({ endpointId, eventId }))
            return Effect.flatMap(Clock.currentTimeMillis, (now) =>
              store.renewLeases({ owner: options.owner, deliveries, leaseUntil: now + leaseMs })
            ).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("waybill webhooks: renewing leases failed", cause)),
              Effect.asVoid
            )
          })
        )
      )
    )
    const start = (c: Claimed, now: number) => {
      const id = c.endpoint.id
      const entry = { startedAt: now, endpointId: id, eventId: c.event.id, counted: true }
      inFlight.add(entry)
      lanes.set(id, (lanes.get(id) ?? 0) + 1)
      busy++
      return FiberSet.run(
        running,
        deliverSafely(options.owner, c, secrets).pipe(
          Effect.ensuring(
            Effect.suspend(() => {
              uncount(entry)
              inFlight.delete(entry)
              const left = (lanes.get(id) ?? 1) - 1
              if (left === 0) lanes.delete(id)
              else lanes.set(id, left)
              return Queue.offer(wakeUp, undefined)
            })
          )
        )
      )
    }
    const claimRound = Effect.gen(function* () {
      const free = Math.min(concurrency - busy, maxInFlight - inFlight.size)
      // Claims in groups while busy: a claim scans for due work, and one scan per freed slot
      // costs more than the deliveries it finds.
      if (free <= 0 || (free < claimAtLeast && busy > 0)) return "full" as const
      const now = yield* Clock.currentTimeMillis
      const wanted = Math.min(batch, free)
      const skipEndpoints = [...lanes].filter(([, n]) => n >= perEndpoint).map(([id]) => id)
      const claimed = yield* store.claimDue({
        owner: options.owner,
        now,
        leaseMs,
        limit: wanted,
        perEndpoint,
        ...(skipEndpoints.length > 0 ? { skipEndpoints } : {})
      })
      for (const c of claimed) yield* start(c, now)
      return claimed.length === wanted ? ("more" as const) : ("drained" as const)
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("waybill webhooks: claiming deliveries failed", cause), "drained" as const)
      )
    )
    return yield* Effect.forever(
      Effect.flatMap(claimRound, (state) => {
        if (state === "more") return Effect.yieldNow()
        // Full: wait for a slot. Drained: wait for a slot (its shipment's next event may be due
        // now) or for `idle`, when new deliveries may have been queued.
        const wake = Queue.take(wakeUp)
        return state === "full" ? wake : Effect.race(wake, Effect.sleep(options.idle))
      })
    )
  }).pipe(Effect.scoped)

/** The work of {@link dispatchOnce}, inside its span. */
const dispatchRound = Effect.fnUntraced(function* (options: DispatchOptions) {
  const store = yield* WebhookStore
  const now = yield* Clock.currentTimeMillis
  const claimed = yield* store.claimDue({
    owner: options.owner,
    now,
    leaseMs: options.leaseMs ?? 60_000,
    limit: options.batch ?? 64
  })
  const results = yield* Effect.forEach(claimed, (c) => deliverSafely(options.owner, c), {
    concurrency: options.concurrency ?? 16
  })
  const delivered = results.filter((ok) => ok).length
  return { claimed: claimed.length, delivered, failed: claimed.length - delivered }
})

/**
 * One round: lease due deliveries, send them (shipments in parallel, each shipment's events in
 * order, because only the oldest pending delivery of a shipment is ever claimable), record.
 */
export const dispatchOnce = (
  options: DispatchOptions
): Effect.Effect<DispatchSummary, StorageError, WebhookStore | WebhookTransport | KeyRing | Entropy> =>
  dispatchRound(options).pipe(Effect.withSpan("Webhooks.dispatchOnce"))

/**
 * The dispatcher loop, for a host to fork as a fiber: it keeps up to `concurrency` deliveries
 * in flight, at most `perEndpoint` per endpoint, claiming more as each one ends (see
 * {@link pump}); with nothing due it looks again after `idle` (default 1 s); a storage failure
 * is logged and retried after `idle`. Interrupting it is safe at any point: it stops claiming,
 * stops its sends and releases the leases it holds, so another dispatcher takes those deliveries
 * at once (after a crash, where nothing is released or renewed, they wait for the lease to
 * expire). While a send is in flight its lease is renewed every third of `leaseMs`. A send
 * cut off after its request went out is sent again: delivery stays at-least-once.
 */
export const runDispatcher = (
  options: Omit<DispatchOptions, "owner"> & { readonly owner?: string; readonly idle?: Duration.DurationInput } = {}
): Effect.Effect<never, never, WebhookStore | WebhookTransport | KeyRing | Entropy> =>
  Effect.scoped(
    Effect.gen(function* () {
      const owner = options.owner ?? `dispatcher_${yield* Ulid.make}`
      const idle = options.idle ?? Duration.seconds(1)
      // Closed last (after the work loop's own scope has stopped every send): leases this
      // dispatcher still holds are given back, so a host that stops cleanly leaves nothing
      // waiting for its leases to run out.
      const store = yield* WebhookStore
      yield* Effect.addFinalizer(() =>
        store
          .releaseLeases(owner)
          .pipe(Effect.catchAllCause((cause) => Effect.logWarning("waybill webhooks: releasing leases failed", cause)))
      )
      // Housekeeping beside the loop: forget finished deliveries and log lines after 30 days.
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.flatMap(WebhookStore, (store) => store.prune(now - retentionMs))
          ).pipe(Effect.catchAllCause((cause) => Effect.logWarning("waybill webhooks: pruning failed", cause))),
          EffectSchedule.spaced(Duration.hours(1))
        )
      )
      return yield* pump({ ...options, owner, idle })
    })
  )

/** What the endpoint-management programs need (the dispatcher also needs a `WebhookTransport`). */
export type WebhooksRequirements = WebhookStore | AccountStore | EventOutbox | Transactor | KeyRing | Entropy
