/**
 * @module routes/webhooks
 *
 * The Webhooks pages: the account's endpoints and the form that adds one (`/webhooks`), and one
 * endpoint's page (`/webhooks/:id`) to edit it, disable, enable or delete it (after a
 * confirmation page), rotate its signing secret, send a test event, recover what it missed since
 * a time, and read its delivery log with a resend button per event. Every action is one of core's
 * `Webhooks.account` programs, scoped by the viewer's account: another account's endpoint or event
 * is "not found", like one that does not exist. Owners and members alike manage webhooks
 * (DECISIONS.md: only users and keys are the owner's).
 *
 * A signing secret is shown once, in the answer to the POST that made it (adding an endpoint,
 * rotating its secret); like every page, that answer is `Cache-Control: no-store`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { Page, type StorageError, type Webhook, Webhooks } from "@waybill/core"
import { type Answer, page, redirect } from "../internal/answer.js"
import { type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import type { PortalRequirements } from "../internal/session.js"
import { formatUtc, isoUtc, parseUtcLocalInput, toUtcLocalInput } from "../internal/utcTime.js"
import { Badge, Button, type Column, Field, OneTimeSecret, Pager, PostForm, Table } from "../views/components.js"
import { ErrorPage } from "../views/ErrorPage.js"
import type { Flash } from "../views/flash.js"
import { Layout } from "../views/Layout.js"
import { EventTypePicker, UtcDateTimeField } from "../views/webhooks.js"

/** Endpoints per page of the list. */
const ENDPOINTS_PER_PAGE = 20

/** Lines per page of an endpoint's delivery log. */
const LOG_PER_PAGE = 25

/** The longest URL core accepts (`Ssrf.checkUrl`). */
const MAX_URL = 2048

/** How many characters of a receiver's answer the log table shows (core keeps up to 512). */
const ANSWER_SHOWN = 160

/** The first letter up and a final period: core's messages are lower-case clauses. */
const sentence = (message: string): string => {
  const text = message.trim()
  const capital = text.charAt(0).toUpperCase() + text.slice(1)
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

interface EndpointFormErrors {
  readonly url?: string
  readonly eventTypes?: string
}

/** What the URL and event-type fields hold, as submitted (or as stored). */
interface EndpointFormValues {
  readonly url: string
  readonly eventTypes: ReadonlyArray<string>
}

const readEndpointForm = (ctx: ViewerContext): EndpointFormValues => ({
  url: (ctx.form.get("url") ?? "").trim(),
  eventTypes: ctx.form.getAll("eventTypes")
})

/** What the form itself can tell before asking core (which checks HTTPS, SSRF and the types). */
const checkEndpointForm = (values: EndpointFormValues): EndpointFormErrors => ({
  ...(values.url === "" ? { url: "Enter the endpoint's HTTPS URL." } : {}),
  ...(values.url.length > MAX_URL ? { url: `Use at most ${MAX_URL} characters.` } : {}),
  ...(values.eventTypes.length === 0 ? { eventTypes: "Pick at least one event type." } : {})
})

/** Core's refusal (`InvalidWebhook`) next to the field it is about. */
const invalidToErrors = (message: string): EndpointFormErrors =>
  /event type/.test(message) ? { eventTypes: sentence(message) } : { url: sentence(message) }

const hasErrors = (errors: object) => Object.keys(errors).length > 0

/** An endpoint's URL and event types: the fields of the add and edit forms. */
const EndpointFields = (props: {
  readonly values: EndpointFormValues
  readonly errors: EndpointFormErrors
  readonly hint?: string
}) => (
  <>
    <Field
      name="url"
      label="Endpoint URL"
      type="url"
      inputMode="url"
      {...(props.hint === undefined ? {} : { hint: props.hint })}
      value={props.values.url}
      maxLength={MAX_URL}
      required
      error={props.errors.url}
    />
    <EventTypePicker catalog={Webhooks.catalog} selected={props.values.eventTypes} error={props.errors.eventTypes} />
  </>
)

const CHECK_FIELDS: Flash = { tone: "error", text: "Check the fields marked below." }

const notFound = (ctx: ViewerContext): Answer =>
  page(404, <ErrorPage chrome={ctx.chrome} status={404} detail="There is no such webhook endpoint in your account." />)

const badPage = (ctx: ViewerContext, message: string): Answer =>
  page(400, <ErrorPage chrome={ctx.chrome} status={400} detail={message} />)

/** The page query of a list's URL (`starting_after`), or the 400 page of a malformed one. */
const pageQuery = (ctx: ViewerContext, limit: number): Either.Either<Page.Query, Answer> =>
  Either.mapLeft(
    Either.map(Page.parseQuery(null, ctx.url.searchParams.get("starting_after")), (q) => ({ ...q, limit })),
    (e) => badPage(ctx, e.message)
  )

const endpointHref = (ctx: ViewerContext, id: string, rest = "") =>
  ctx.href(`/webhooks/${encodeURIComponent(id)}${rest}`)

const EndpointStatus = (props: { readonly endpoint: Webhook.EndpointRecord }) => {
  const { endpoint } = props
  if (endpoint.enabled) return <Badge tone="success">Enabled</Badge>
  const why =
    endpoint.disabledReason === "gone"
      ? " (the receiver answered 410 Gone)"
      : endpoint.disabledReason === "failing"
        ? " (failing for 5 days)"
        : ""
  return <Badge tone="neutral">{`Disabled${why}`}</Badge>
}

const Time = (props: { readonly ms: number }) => <time dateTime={isoUtc(props.ms)}>{formatUtc(props.ms)}</time>

// ---------------------------------------------------------------------------------------------
// The list and the add form

const AddForm = (props: {
  readonly ctx: ViewerContext
  readonly values: EndpointFormValues
  readonly errors: EndpointFormErrors
}) => (
  <section class="card" aria-labelledby="add-endpoint">
    <h2 id="add-endpoint">Add an endpoint</h2>
    <p class="muted">
      Waybill sends each event you pick to this URL as a signed POST (Standard Webhooks). The URL must use HTTPS and
      reach a public address.
    </p>
    <PostForm action={props.ctx.href("/webhooks")} csrf={props.ctx.chrome.csrf} label="Add an endpoint">
      <EndpointFields
        values={props.values}
        errors={props.errors}
        hint="For example https://example.com/waybill/webhooks"
      />
      <Button>Add endpoint</Button>
    </PostForm>
  </section>
)

const endpointColumns = (ctx: ViewerContext): ReadonlyArray<Column<Webhook.EndpointRecord>> => [
  {
    header: "URL",
    cell: (e) => (
      <a href={endpointHref(ctx, e.id)} class="break">
        {e.url}
      </a>
    )
  },
  {
    header: "Event types",
    cell: (e) => (
      <ul class="plain">
        {e.eventTypes.map((t) => (
          <li key={t}>
            <code>{t}</code>
          </li>
        ))}
      </ul>
    )
  },
  { header: "Status", cell: (e) => <EndpointStatus endpoint={e} /> },
  { header: "Created", cell: (e) => <Time ms={e.createdAt} /> }
]

const ListPage = (props: {
  readonly ctx: ViewerContext
  readonly endpoints: Page.Page<Webhook.EndpointRecord>
  readonly values: EndpointFormValues
  readonly errors: EndpointFormErrors
  readonly messages?: ReadonlyArray<Flash>
}) => {
  const { ctx, endpoints } = props
  const list = ctx.href("/webhooks")
  return (
    <Layout chrome={ctx.chrome} title="Webhooks" section="webhooks" messages={props.messages ?? []}>
      <p>
        Endpoints of account {ctx.user.customerNo}. Each delivery is signed with the endpoint's secret; see{" "}
        <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> in each request.
      </p>
      <Table
        caption="Endpoints"
        columns={endpointColumns(ctx)}
        rows={endpoints.items}
        rowKey={(e) => e.id}
        empty="No endpoint yet: add one below."
      />
      <Pager
        label="Endpoint pages"
        firstHref={ctx.url.searchParams.has("starting_after") ? list : undefined}
        nextHref={
          endpoints.nextCursor === null ? null : `${list}?starting_after=${encodeURIComponent(endpoints.nextCursor)}`
        }
      />
      <AddForm ctx={ctx} values={props.values} errors={props.errors} />
    </Layout>
  )
}

const listEndpoints = (ctx: ViewerContext, query: Page.Query) => Webhooks.account.list(ctx.user.customerNo, query)

/** `GET /webhooks`: the account's endpoints, newest first, and the add form. */
export const webhooksPage = viewerRoute("GET", "/webhooks", (ctx) =>
  Either.match(pageQuery(ctx, ENDPOINTS_PER_PAGE), {
    onLeft: Effect.succeed,
    onRight: (query) =>
      listEndpoints(ctx, query).pipe(
        Effect.map((endpoints) =>
          page(200, <ListPage ctx={ctx} endpoints={endpoints} values={{ url: "", eventTypes: [] }} errors={{}} />)
        ),
        Effect.catchTag("InvalidPage", (e) => Effect.succeed(badPage(ctx, e.message)))
      )
  })
)

/** The page that shows a new secret once (after adding an endpoint, or rotating its secret). */
const SecretPage = (props: {
  readonly ctx: ViewerContext
  readonly title: string
  readonly endpoint: Webhook.EndpointRecord
  readonly secret: string
  readonly rotated: boolean
}) => (
  <Layout chrome={props.ctx.chrome} title={props.title} section="webhooks">
    <OneTimeSecret title="Signing secret" secret={props.secret}>
      <p>
        Give it to the receiver at <code class="break">{props.endpoint.url}</code>: it checks every delivery's{" "}
        <code>webhook-signature</code> with it.
      </p>
      {props.rotated ? (
        <p>
          The previous secret keeps signing too for 24 hours (each delivery carries both signatures), so the receiver
          can switch over without missing an event.
        </p>
      ) : null}
    </OneTimeSecret>
    <p>
      <a href={endpointHref(props.ctx, props.endpoint.id)}>Go to the endpoint</a> ·{" "}
      <a href={props.ctx.href("/webhooks")}>All endpoints</a>
    </p>
  </Layout>
)

/** `POST /webhooks`: adds an endpoint; the answer shows its signing secret once. */
export const addEndpoint = viewerRoute("POST", "/webhooks", (ctx) => {
  const values = readEndpointForm(ctx)
  const again = (errors: EndpointFormErrors) =>
    listEndpoints(ctx, { limit: ENDPOINTS_PER_PAGE }).pipe(
      Effect.map((endpoints) =>
        page(
          400,
          <ListPage ctx={ctx} endpoints={endpoints} values={values} errors={errors} messages={[CHECK_FIELDS]} />
        )
      )
    )
  const errors = checkEndpointForm(values)
  if (hasErrors(errors)) return again(errors).pipe(Effect.catchTag("InvalidPage", (e) => Effect.die(e)))
  return Webhooks.account.add(ctx.user.customerNo, values, ctx.settings.webhookPolicy).pipe(
    Effect.map((created) =>
      page(
        200,
        <SecretPage
          ctx={ctx}
          title="Endpoint added"
          endpoint={created.endpoint}
          secret={Redacted.value(created.secret)}
          rotated={false}
        />
      )
    ),
    Effect.catchTag("InvalidWebhook", (e) => again(invalidToErrors(e.message))),
    // The viewer's own account is gone: nothing on this page can help.
    Effect.catchTag("AccountNotFound", () => Effect.succeed(notFound(ctx))),
    Effect.catchTag("InvalidPage", (e) => Effect.die(e))
  )
})

// ---------------------------------------------------------------------------------------------
// One endpoint

interface DetailState {
  readonly status?: number
  readonly edit?: { readonly values: EndpointFormValues; readonly errors: EndpointFormErrors }
  readonly recover?: { readonly value: string; readonly error: string }
  readonly messages?: ReadonlyArray<Flash>
}

const answerText = (line: Webhooks.LogLine) =>
  line.response.length > ANSWER_SHOWN ? `${line.response.slice(0, ANSWER_SHOWN)}…` : line.response

const logColumns = (ctx: ViewerContext): ReadonlyArray<Column<Webhooks.LogLine>> => [
  { header: "Time", cell: (l) => <Time ms={l.at} /> },
  {
    header: "Event",
    cell: (l) => (
      <>
        <code>{l.eventType ?? "(event no longer stored)"}</code>
        <br />
        <span class="mono muted break">{l.eventId}</span>
      </>
    )
  },
  {
    header: "Status",
    cell: (l) => (
      <Badge tone={l.ok ? "success" : "danger"}>{l.status === null ? "No answer" : `HTTP ${l.status}`}</Badge>
    )
  },
  { header: "Attempt", cell: (l) => String(l.attempt) },
  { header: "Duration", cell: (l) => `${l.durationMs} ms` },
  {
    header: "Answer",
    cell: (l) => (l.response === "" ? <span class="muted">(empty)</span> : <code class="break">{answerText(l)}</code>)
  },
  {
    header: "Action",
    cell: (l) => (
      // No accessible name: one event's attempts share a row's form, and named forms are
      // landmarks that must be unique; the row says which event the button resends.
      <PostForm action={endpointHref(ctx, l.endpointId, "/resend")} csrf={ctx.chrome.csrf} class="inline">
        <input type="hidden" name="event" value={l.eventId} />
        <Button variant="secondary">Resend</Button>
      </PostForm>
    )
  }
]

const DetailPage = (props: {
  readonly ctx: ViewerContext
  readonly now: number
  readonly endpoint: Webhook.EndpointRecord
  readonly log: Page.Page<Webhooks.LogLine>
  readonly state: DetailState
}) => {
  const { ctx, endpoint, log, state } = props
  const here = endpointHref(ctx, endpoint.id)
  const edit = state.edit ?? { values: { url: endpoint.url, eventTypes: endpoint.eventTypes }, errors: {} }
  const overlap =
    endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > props.now
      ? endpoint.previousSecretUntil
      : undefined
  return (
    <Layout chrome={ctx.chrome} title="Webhook endpoint" section="webhooks" messages={state.messages ?? []}>
      <p>
        <a href={ctx.href("/webhooks")}>All endpoints</a>
      </p>
      <section class="card" aria-labelledby="endpoint-summary">
        <h2 id="endpoint-summary" class="break">
          {endpoint.url}
        </h2>
        <dl class="facts-rows">
          <dt>Status</dt>
          <dd>
            <EndpointStatus endpoint={endpoint} />
          </dd>
          <dt>Endpoint id</dt>
          <dd>
            <code>{endpoint.id}</code>
          </dd>
          <dt>Created</dt>
          <dd>
            <Time ms={endpoint.createdAt} />
          </dd>
          {overlap === undefined ? null : (
            <>
              <dt>Previous secret</dt>
              <dd>
                Still signing until <Time ms={overlap} />
              </dd>
            </>
          )}
        </dl>
      </section>

      <section class="card" aria-labelledby="endpoint-actions">
        <h2 id="endpoint-actions">Actions</h2>
        <div class="actions">
          <PostForm action={`${here}/test`} csrf={ctx.chrome.csrf} class="inline" label="Send a test event">
            <Button variant="secondary">Send test event</Button>
          </PostForm>
          <PostForm action={`${here}/rotate`} csrf={ctx.chrome.csrf} class="inline" label="Rotate the secret">
            <Button variant="secondary">Rotate secret</Button>
          </PostForm>
          {endpoint.enabled ? (
            <PostForm action={`${here}/disable`} csrf={ctx.chrome.csrf} class="inline" label="Disable the endpoint">
              <Button variant="secondary">Disable</Button>
            </PostForm>
          ) : (
            <PostForm action={`${here}/enable`} csrf={ctx.chrome.csrf} class="inline" label="Enable the endpoint">
              <Button variant="secondary">Enable</Button>
            </PostForm>
          )}
          <a class="button button-danger" href={`${here}/delete`}>
            Delete…
          </a>
        </div>
        <p class="muted">
          A test event is a <code>webhook.test</code> sent to this endpoint only. Rotating makes a new signing secret,
          shown once; the old one keeps signing for 24 hours.
        </p>
      </section>

      <h2 id="deliveries">Deliveries</h2>
      <Table
        caption="Delivery attempts, newest first"
        columns={logColumns(ctx)}
        rows={log.items}
        rowKey={(l) => `${l.eventId}:${l.attempt}:${l.at}`}
        empty="Nothing was sent to this endpoint yet."
      />
      <Pager
        label="Delivery pages"
        firstHref={ctx.url.searchParams.has("starting_after") ? `${here}#deliveries` : undefined}
        nextHref={
          log.nextCursor === null ? null : `${here}?starting_after=${encodeURIComponent(log.nextCursor)}#deliveries`
        }
      />

      <section class="card" aria-labelledby="endpoint-edit">
        <h2 id="endpoint-edit">Edit</h2>
        <PostForm action={here} csrf={ctx.chrome.csrf} label="Edit the endpoint">
          <EndpointFields values={edit.values} errors={edit.errors} />
          <Button>Save</Button>
        </PostForm>
      </section>

      <section class="card" aria-labelledby="endpoint-recover">
        <h2 id="endpoint-recover">Recover missed events</h2>
        <p class="muted">
          Queues again every event since the time below that this endpoint selects and did not get (failed, or never
          sent). Times are UTC.
        </p>
        <PostForm action={`${here}/recover`} csrf={ctx.chrome.csrf} label="Recover missed events">
          <UtcDateTimeField
            name="since"
            label="Since (UTC)"
            value={state.recover?.value ?? toUtcLocalInput(props.now - 24 * 60 * 60 * 1000)}
            hint="Date and time in UTC, for example 2026-11-24T08:00."
            error={state.recover?.error}
          />
          <Button variant="secondary">Recover</Button>
        </PostForm>
      </section>
    </Layout>
  )
}

/** The endpoint's page with the log page `query` (404 for an endpoint not of the account). */
const detail = Effect.fnUntraced(
  function* (ctx: ViewerContext, query: Page.Query, state: DetailState = {}) {
    const now = yield* Clock.currentTimeMillis
    const { endpoint, page: log } = yield* Webhooks.account.log(ctx.user.customerNo, ctx.params["id"]!, query)
    return page(state.status ?? 200, <DetailPage ctx={ctx} now={now} endpoint={endpoint} log={log} state={state} />)
  },
  (effect, ctx) =>
    effect.pipe(
      Effect.catchTags({
        WebhookNotFound: () => Effect.succeed(notFound(ctx)),
        InvalidPage: (e) => Effect.succeed(badPage(ctx, e.message))
      })
    )
)

/** `GET /webhooks/:id`: the endpoint, its actions, and its delivery log (cursor pages). */
export const endpointPage = viewerRoute("GET", "/webhooks/:id", (ctx) =>
  Either.match(pageQuery(ctx, LOG_PER_PAGE), { onLeft: Effect.succeed, onRight: (query) => detail(ctx, query) })
)

const firstLogPage: Page.Query = { limit: LOG_PER_PAGE }

/** `POST /webhooks/:id`: changes the URL and event types. */
export const updateEndpoint = viewerRoute("POST", "/webhooks/:id", (ctx) => {
  const values = readEndpointForm(ctx)
  const again = (errors: EndpointFormErrors) =>
    detail(ctx, firstLogPage, { status: 400, edit: { values, errors }, messages: [CHECK_FIELDS] })
  const errors = checkEndpointForm(values)
  if (hasErrors(errors)) return again(errors)
  return Webhooks.account.update(ctx.user.customerNo, ctx.params["id"]!, values, ctx.settings.webhookPolicy).pipe(
    Effect.as(redirect(endpointHref(ctx, ctx.params["id"]!), { flash: "webhook-updated" })),
    Effect.catchTags({
      InvalidWebhook: (e) => again(invalidToErrors(e.message)),
      WebhookNotFound: () => Effect.succeed(notFound(ctx))
    })
  )
})

/** A POST of one endpoint's page that runs `program` and goes back to the page with `flash`. */
const endpointAction = (
  path: string,
  program: (
    customerNo: string,
    id: string,
    ctx: ViewerContext
  ) => Effect.Effect<unknown, Webhooks.WebhookNotFound | StorageError, PortalRequirements>,
  flash: "webhook-enabled" | "webhook-disabled" | "webhook-test-sent" | "webhook-resent"
) =>
  viewerRoute("POST", `/webhooks/:id${path}`, (ctx) =>
    program(ctx.user.customerNo, ctx.params["id"]!, ctx).pipe(
      Effect.as(redirect(endpointHref(ctx, ctx.params["id"]!), { flash })),
      Effect.catchTag("WebhookNotFound", () => Effect.succeed(notFound(ctx)))
    )
  )

/** `POST /webhooks/:id/enable`: sends to the endpoint again (its failure history starts afresh). */
export const enableEndpoint = endpointAction(
  "/enable",
  (customerNo, id) => Webhooks.account.setEnabled(customerNo, id, true),
  "webhook-enabled"
)

/** `POST /webhooks/:id/disable`: stops sending to the endpoint; deliveries wait until it is enabled. */
export const disableEndpoint = endpointAction(
  "/disable",
  (customerNo, id) => Webhooks.account.setEnabled(customerNo, id, false),
  "webhook-disabled"
)

/** `POST /webhooks/:id/test`: queues a `webhook.test` event for this endpoint only. */
export const sendTest = endpointAction("/test", Webhooks.account.sendTest, "webhook-test-sent")

/** `POST /webhooks/:id/resend`: sends the event in the `event` field again to this endpoint (same `webhook-id`). */
export const resendEvent = endpointAction(
  "/resend",
  (customerNo, id, ctx) => Webhooks.account.resend(customerNo, id, (ctx.form.get("event") ?? "").trim()),
  "webhook-resent"
)

/** `POST /webhooks/:id/rotate`: a new signing secret, shown once; the old one signs for 24 more hours. */
export const rotateSecret = viewerRoute("POST", "/webhooks/:id/rotate", (ctx) =>
  Webhooks.account.rotateSecret(ctx.user.customerNo, ctx.params["id"]!).pipe(
    Effect.map((rotated) =>
      page(
        200,
        <SecretPage
          ctx={ctx}
          title="Secret rotated"
          endpoint={rotated.endpoint}
          secret={Redacted.value(rotated.secret)}
          rotated
        />
      )
    ),
    Effect.catchTag("WebhookNotFound", () => Effect.succeed(notFound(ctx)))
  )
)

/** `POST /webhooks/:id/recover`: queues again what the endpoint missed since a UTC time. */
export const recoverEvents = viewerRoute(
  "POST",
  "/webhooks/:id/recover",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    const value = (ctx.form.get("since") ?? "").trim()
    const since = parseUtcLocalInput(value)
    const now = yield* Clock.currentTimeMillis
    const error =
      value === ""
        ? "Enter a date and time (UTC)."
        : since === undefined
          ? "Enter a date and time as YYYY-MM-DDTHH:MM (UTC)."
          : since > now
            ? "Pick a time in the past."
            : undefined
    if (error !== undefined || since === undefined)
      return yield* detail(ctx, firstLogPage, {
        status: 400,
        recover: { value, error: error ?? "Enter a date and time (UTC)." },
        messages: [CHECK_FIELDS]
      })
    return yield* Webhooks.account.recover(ctx.user.customerNo, ctx.params["id"]!, since).pipe(
      Effect.map((queued) =>
        redirect(endpointHref(ctx, ctx.params["id"]!), {
          flash: queued === 0 ? "webhook-nothing-to-recover" : "webhook-recovered"
        })
      ),
      Effect.catchTag("WebhookNotFound", () => Effect.succeed(notFound(ctx)))
    )
  })
)

const DeletePage = (props: { readonly ctx: ViewerContext; readonly endpoint: Webhook.EndpointRecord }) => {
  const here = endpointHref(props.ctx, props.endpoint.id)
  return (
    <Layout chrome={props.ctx.chrome} title="Delete the endpoint?" section="webhooks" narrow>
      <div class="card">
        <p>
          <code class="break">{props.endpoint.url}</code>
        </p>
        <p>
          Nothing more is sent to it: deliveries still queued are dropped, and its delivery log is removed. This cannot
          be undone. To stop deliveries for a while instead, disable it.
        </p>
        <div class="actions">
          <PostForm action={`${here}/delete`} csrf={props.ctx.chrome.csrf} class="inline" label="Delete the endpoint">
            <Button variant="danger">Delete endpoint</Button>
          </PostForm>
          <a class="button button-secondary" href={here}>
            Cancel
          </a>
        </div>
      </div>
    </Layout>
  )
}

/** `GET /webhooks/:id/delete`: the confirmation step before deleting. */
export const deletePage = viewerRoute("GET", "/webhooks/:id/delete", (ctx) =>
  Webhooks.account.get(ctx.user.customerNo, ctx.params["id"]!).pipe(
    Effect.map((endpoint) => page(200, <DeletePage ctx={ctx} endpoint={endpoint} />)),
    Effect.catchTag("WebhookNotFound", () => Effect.succeed(notFound(ctx)))
  )
)

/** `POST /webhooks/:id/delete`: deletes the endpoint with its queued deliveries and log. */
export const deleteEndpoint = viewerRoute("POST", "/webhooks/:id/delete", (ctx) =>
  Webhooks.account.delete(ctx.user.customerNo, ctx.params["id"]!).pipe(
    Effect.as(redirect(ctx.href("/webhooks"), { flash: "webhook-deleted" })),
    Effect.catchTag("WebhookNotFound", () => Effect.succeed(notFound(ctx)))
  )
)

/** The routes of this group. */
export const webhookRoutes: ReadonlyArray<Route> = [
  webhooksPage,
  addEndpoint,
  endpointPage,
  updateEndpoint,
  enableEndpoint,
  disableEndpoint,
  sendTest,
  resendEvent,
  rotateSecret,
  recoverEvents,
  deletePage,
  deleteEndpoint
]
