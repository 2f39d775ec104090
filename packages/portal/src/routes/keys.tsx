/**
 * @module routes/keys
 *
 * API Access and Activity, the portal's start page: the account's two key slots (production and
 * test) with regenerate, disable and enable for owners, and the account's recent API calls with
 * filters and a cursor pager.
 *
 * Regenerating asks first (`GET /keys/:mode/regenerate`, a page with the consequences and one
 * button); without a recent password (core `Sessions.isRecent`) that step goes through
 * `/confirm` and comes back. The POST answers the new key on the page itself, once (the answer is
 * `no-store` like every page); nothing keeps it. Every action is a core use case
 * (`Accounts.regenerateKey`, `Accounts.changeKeyStatus`, `Accounts.keySlots`, `Activity.list`),
 * which checks the role again against the store.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Accounts, Activity, Page, Sessions } from "@waybill/core"
import { page, redirect } from "../internal/answer.js"
import { type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import {
  Badge,
  type BadgeTone,
  Button,
  Details,
  LinkButton,
  OneTimeSecret,
  Pager,
  PostForm,
  SelectField,
  Table,
  Field
} from "../views/components.js"
import { ErrorPage } from "../views/ErrorPage.js"
import type { Flash } from "../views/flash.js"
import { Layout } from "../views/Layout.js"
import { confirmHref } from "./confirm.js"

/** A key slot's mode: `live` (production) or `test`. */
type KeyMode = Accounts.KeySlot["mode"]

/** How a key mode reads on the page. */
export const MODE_LABEL: Readonly<Record<KeyMode, string>> = { live: "Production (live)", test: "Test" }

const isMode = (raw: string | undefined): raw is KeyMode => raw === "live" || raw === "test"

/** An instant as the portal shows it: `2026-11-24 19:33 UTC` (the server knows no reader's zone). */
export const formatTime = (ms: number | null): string =>
  ms === null ? "—" : `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`

/** The same with seconds (the activity log, where calls come in bursts). */
const formatSeconds = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`

const statusTone = (status: Accounts.KeySlot["status"]): BadgeTone =>
  status === "active" ? "success" : status === "disabled" ? "warning" : "neutral"

const httpTone = (status: number): BadgeTone => (status < 300 ? "success" : status < 500 ? "warning" : "danger")

/** The activity filter as the page's GET form carries it. */
interface ActivityForm {
  readonly mode: string
  readonly status: string
}

const KeySlotCard = (props: { readonly ctx: ViewerContext; readonly slot: Accounts.KeySlot }) => {
  const { ctx, slot } = props
  const owner = ctx.user.role === "owner"
  const headingId = `slot-${slot.mode}`
  return (
    <section class="card slot" aria-labelledby={headingId}>
      <h3 id={headingId}>{MODE_LABEL[slot.mode]} key</h3>
      <Details
        rows={[
          ["Status", <Badge tone={statusTone(slot.status)}>{slot.status}</Badge>],
          ["Key", slot.last4 === null ? "—" : <code>…{slot.last4}</code>],
          ["Created", formatTime(slot.createdAt)],
          ["Last used", slot.lastUsedAt === null ? "Not used in the last 30 days" : formatTime(slot.lastUsedAt)]
        ]}
      />
      {owner && slot.status !== "blank" ? (
        <div class="actions">
          <LinkButton href={ctx.href(`/keys/${slot.mode}/regenerate`)} variant="secondary">
            Regenerate {slot.mode} key
          </LinkButton>
          <PostForm action={ctx.href(`/keys/${slot.mode}/status`)} csrf={ctx.chrome.csrf}>
            <input type="hidden" name="status" value={slot.status === "active" ? "disabled" : "active"} />
            <Button variant={slot.status === "active" ? "danger" : "secondary"}>
              {slot.status === "active" ? `Disable ${slot.mode} key` : `Enable ${slot.mode} key`}
            </Button>
          </PostForm>
        </div>
      ) : null}
    </section>
  )
}

const KeysPage = (props: {
  readonly ctx: ViewerContext
  readonly slots: ReadonlyArray<Accounts.KeySlot>
  readonly filter: ActivityForm
  readonly errors: { readonly mode?: string; readonly status?: string }
  readonly activity: Page.Page<Activity.ActivityEntry> | undefined
  readonly firstHref: string | undefined
  readonly nextHref: string | null
  readonly messages: ReadonlyArray<Flash>
}) => {
  const { ctx } = props
  return (
    <Layout chrome={ctx.chrome} title="API Access and Activity" section="keys" messages={props.messages}>
      <h2>API keys</h2>
      <p class="muted">
        Send a key as <code>Authorization: Bearer …</code>. The production key books real shipments; the test key books
        test ones. Waybill keeps only a hash of each key: a lost key cannot be shown again, only regenerated.
        {ctx.user.role === "owner" ? null : " Only an owner of the account can regenerate, disable or enable keys."}
      </p>
      <div class="slots">
        {props.slots.map((slot) => (
          <KeySlotCard ctx={ctx} slot={slot} key={slot.mode} />
        ))}
      </div>
      <h2 id="activity">Activity</h2>
      <p class="muted">The account's API calls of the last 30 days, newest first.</p>
      <form method="get" action={ctx.href("/keys")} class="filters" aria-label="Filter the activity">
        <SelectField
          name="mode"
          label="Key"
          value={props.filter.mode}
          error={props.errors.mode}
          options={[
            { value: "", label: "All keys" },
            { value: "live", label: MODE_LABEL.live },
            { value: "test", label: MODE_LABEL.test }
          ]}
        />
        <Field
          name="status"
          label="Status"
          value={props.filter.status}
          hint="2xx, 4xx, 5xx or one status (401)"
          maxLength={3}
          error={props.errors.status}
        />
        <Button variant="secondary">Filter</Button>
      </form>
      <Table<Activity.ActivityEntry>
        caption="Recent API calls"
        rows={props.activity?.items ?? []}
        rowKey={(e) => e.id}
        empty={
          props.activity === undefined
            ? "No calls to show."
            : props.filter.mode === "" && props.filter.status === ""
              ? "No API calls in the last 30 days."
              : "No calls match."
        }
        columns={[
          { header: "Time", cell: (e) => <span class="nowrap">{formatSeconds(e.at)}</span> },
          {
            header: "Endpoint",
            cell: (e) => (
              <code>
                {e.method} {e.path}
              </code>
            )
          },
          { header: "Key", cell: (e) => (e.keyMode === null ? "session" : e.keyMode) },
          { header: "Status", cell: (e) => <Badge tone={httpTone(e.status)}>{String(e.status)}</Badge> },
          { header: "Client address", cell: (e) => <code>{e.clientIp === "" ? "unknown" : e.clientIp}</code> },
          { header: "Request id", cell: (e) => <code>{e.requestId}</code> }
        ]}
      />
      <Pager label="Activity pages" firstHref={props.firstHref} nextHref={props.nextHref} />
    </Layout>
  )
}

/** The `/keys` URL of a filter, optionally at a cursor. */
const keysHref = (ctx: ViewerContext, filter: ActivityForm, cursor?: string): string => {
  const query = new URLSearchParams()
  if (filter.mode !== "") query.set("mode", filter.mode)
  if (filter.status !== "") query.set("status", filter.status)
  if (cursor !== undefined) query.set("starting_after", cursor)
  const search = query.toString()
  return `${ctx.href("/keys")}${search === "" ? "" : `?${search}`}#activity`
}

/** `GET /keys`: the key slots and a page of the activity. Bad filters or cursors: a notice, never a 500. */
export const keysPage = viewerRoute(
  "GET",
  "/keys",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    const params = ctx.url.searchParams
    const filter: ActivityForm = {
      mode: (params.get("mode") ?? "").slice(0, 10),
      status: (params.get("status") ?? "").trim().slice(0, 10)
    }
    const errors: { mode?: string; status?: string } = {}
    if (filter.mode !== "" && !isMode(filter.mode)) errors.mode = "Choose all keys, live or test."
    const status = Activity.parseStatus(filter.status)
    if (Option.isNone(status)) errors.status = "Use 2xx, 4xx, 5xx or a three-digit status."
    const invalid = Object.keys(errors).length > 0
    const slots = yield* Accounts.keySlots(ctx.user.customerNo).pipe(
      Effect.catchTag("AccountNotFound", () => Effect.succeed([] as ReadonlyArray<Accounts.KeySlot>))
    )
    const wanted: Activity.ActivityFilter = {
      ...(isMode(filter.mode) ? { mode: filter.mode } : {}),
      ...(Option.isSome(status) && status.value !== undefined ? { status: status.value } : {})
    }
    const newest = Activity.list(ctx.user.customerNo, wanted, { limit: Page.defaultLimit })
    const startingAfter = params.get("starting_after")
    const atCursor = startingAfter !== null && startingAfter !== ""

    const messages: Array<Flash> = []
    let activity: Page.Page<Activity.ActivityEntry> | undefined
    if (invalid) messages.push({ tone: "error", text: "Check the filters marked below." })
    else {
      // A cursor that is not one of this list's (edited, or from another filter): the newest page
      // of the same filter, with a notice, rather than an error page.
      const query = Page.parseQuery(null, startingAfter)
      const listed = Either.isLeft(query)
        ? Either.left(query.left)
        : yield* Effect.either(Activity.list(ctx.user.customerNo, wanted, query.right))
      if (Either.isRight(listed)) activity = listed.right
      else {
        messages.push({ tone: "error", text: "That page of the activity does not exist. Showing the newest calls." })
        activity = yield* newest.pipe(Effect.catchTag("InvalidPage", () => Effect.succeed(undefined)))
      }
    }
    const onLaterPage = atCursor && messages.length === 0
    return page(
      invalid ? 400 : 200,
      <KeysPage
        ctx={ctx}
        slots={slots}
        filter={filter}
        errors={errors}
        activity={activity}
        firstHref={onLaterPage ? keysHref(ctx, filter) : undefined}
        nextHref={activity?.nextCursor == null ? null : keysHref(ctx, filter, activity.nextCursor)}
        messages={messages}
      />
    )
  })
)

const notOwner = (ctx: ViewerContext) =>
  page(403, <ErrorPage chrome={ctx.chrome} status={403} detail="Only an owner of the account can change its keys." />)

const RegeneratePage = (props: { readonly ctx: ViewerContext; readonly mode: KeyMode }) => (
  <Layout chrome={props.ctx.chrome} title={`Regenerate the ${props.mode} key`} section="keys" narrow>
    <div class="card">
      <p>
        A new {MODE_LABEL[props.mode].toLowerCase()} key is made and shown once. The current key stops working at once,
        and so does every document download link issued under it: update every system that uses it.
      </p>
      <div class="actions">
        <PostForm action={props.ctx.href(`/keys/${props.mode}/regenerate`)} csrf={props.ctx.chrome.csrf}>
          <Button variant="danger">Regenerate the {props.mode} key</Button>
        </PostForm>
        <a href={props.ctx.href("/keys")}>Cancel</a>
      </div>
    </div>
  </Layout>
)

const NewKeyPage = (props: { readonly ctx: ViewerContext; readonly mode: KeyMode; readonly secret: string }) => (
  <Layout chrome={props.ctx.chrome} title={`New ${props.mode} key`} section="keys" narrow>
    <OneTimeSecret title={`Your new ${MODE_LABEL[props.mode].toLowerCase()} key`} secret={props.secret}>
      <p>The previous {props.mode} key no longer works.</p>
    </OneTimeSecret>
    <p>
      <a href={props.ctx.href("/keys")}>Back to API Access and Activity</a>
    </p>
  </Layout>
)

/** The path of the regenerate step, for `/confirm?next=`. */
const regenerateStep = (ctx: ViewerContext, mode: KeyMode) => ctx.href(`/keys/${mode}/regenerate`)

/** `GET /keys/:mode/regenerate`: asks before regenerating; first the password when it is not recent. */
export const regenerateAsk = viewerRoute(
  "GET",
  "/keys/:mode/regenerate",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    const mode = ctx.params["mode"]
    if (!isMode(mode)) return page(404, <ErrorPage chrome={ctx.chrome} status={404} />)
    if (ctx.user.role !== "owner") return notOwner(ctx)
    const now = yield* Clock.currentTimeMillis
    if (!Sessions.isRecent(ctx.user, now)) return redirect(confirmHref(ctx, regenerateStep(ctx, mode)))
    return page(200, <RegeneratePage ctx={ctx} mode={mode} />)
  })
)

/** `POST /keys/:mode/regenerate`: a new key (`Accounts.regenerateKey`), shown on this answer only. */
export const regenerate = viewerRoute("POST", "/keys/:mode/regenerate", (ctx) => {
  const mode = ctx.params["mode"]
  if (!isMode(mode)) return Effect.succeed(page(404, <ErrorPage chrome={ctx.chrome} status={404} />))
  return Accounts.regenerateKey(ctx.user, mode).pipe(
    Effect.map((issued) => page(200, <NewKeyPage ctx={ctx} mode={mode} secret={Redacted.value(issued.key)} />)),
    Effect.catchTags({
      RecentAuthRequired: () => Effect.succeed(redirect(confirmHref(ctx, regenerateStep(ctx, mode)))),
      NotAllowed: () => Effect.succeed(notOwner(ctx)),
      AccountNotFound: () => Effect.succeed(page(404, <ErrorPage chrome={ctx.chrome} status={404} />))
    })
  )
})

/** `POST /keys/:mode/status`: disables or enables a key (`Accounts.changeKeyStatus`). */
export const keyStatus = viewerRoute("POST", "/keys/:mode/status", (ctx) => {
  const mode = ctx.params["mode"]
  const status = ctx.form.get("status")
  if (!isMode(mode)) return Effect.succeed(page(404, <ErrorPage chrome={ctx.chrome} status={404} />))
  if (status !== "active" && status !== "disabled")
    return Effect.succeed(page(400, <ErrorPage chrome={ctx.chrome} status={400} />))
  return Accounts.changeKeyStatus(ctx.user, mode, status).pipe(
    Effect.as(redirect(ctx.href("/keys"), { flash: status === "active" ? "key-enabled" : "key-disabled" })),
    Effect.catchTags({
      NotAllowed: () => Effect.succeed(notOwner(ctx)),
      AccountNotFound: () => Effect.succeed(page(404, <ErrorPage chrome={ctx.chrome} status={404} />))
    })
  )
})

/** The routes of this group. */
export const keysRoutes: ReadonlyArray<Route> = [keysPage, regenerateAsk, regenerate, keyStatus]
