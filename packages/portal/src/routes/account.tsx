/**
 * @module routes/account
 *
 * The account: its details (the registration profile from provisioning's `step1`/`step2`, or
 * just the name for an account an operator made), its users, and its IP allowlist.
 *
 * Owners invite users (a separate page that needs a recent password, like regenerating a key:
 * core `Users.invite` mails a one-time link built on the portal's public origin), remove users
 * (after a confirmation page; core `Users.remove`) and edit the allowlist (core
 * `Accounts.setIpAllowlist`, which checks every entry by the rule the API's allowlist check uses).
 * Members see everything and change nothing.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Accounts, Provisioning, Sessions, type User, Users } from "@waybill/core"
import { page, redirect } from "../internal/answer.js"
import { type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import {
  Badge,
  Button,
  Details,
  EmailField,
  LinkButton,
  MAX_EMAIL,
  PostForm,
  SelectField,
  Table,
  TextAreaField
} from "../views/components.js"
import { ErrorPage } from "../views/ErrorPage.js"
import type { Flash } from "../views/flash.js"
import { Layout } from "../views/Layout.js"
import { confirmHref } from "./confirm.js"
import { formatTime } from "./keys.js"

type AccountProfile = Provisioning.AccountProfile

/** The longest allowlist text accepted (100 entries of an IPv6 CIDR, with line breaks). */
const MAX_ALLOWLIST_TEXT = 5000

/** The non-empty parts joined by `separator`. */
const joined = (separator: string, ...parts: ReadonlyArray<string | undefined>): string =>
  parts.filter((p) => p !== undefined && p.trim() !== "").join(separator)

/** An address on one line: `233 S Wacker Dr, Chicago, IL 60606`. */
const address = (
  line: string | undefined,
  city: string | undefined,
  state: string | undefined,
  zip: string | undefined
) => joined(", ", line, city, joined(" ", state, zip))

/** The rows of the account's details: what provisioning stored, or only the name. */
const detailRows = (profile: AccountProfile): ReadonlyArray<readonly [string, string]> => {
  const p = profile.profile
  const rows: Array<readonly [string, string]> = [
    ["Company", profile.name.trim() === "" ? "—" : profile.name],
    ["Customer number", profile.customerNo],
    ["Created", formatTime(profile.createdAt)]
  ]
  if (p === undefined) return rows
  const contact = joined(" ", p.firstName, p.lastName)
  if (contact !== "") rows.push(["Contact", contact])
  if (profile.email !== undefined) rows.push(["Registered with", profile.email])
  if (p.localPhone !== undefined) rows.push(["Phone", p.localPhone])
  const local = address(p.localAddr1, p.localCity, p.localState, p.localZip)
  if (local !== "") rows.push(["Address", local])
  const billing = address(p.billingAddr2, p.billingCity, p.billingState, p.billingZip)
  rows.push(["Billing address", billing === "" ? "Same as the address" : billing])
  return rows
}

interface AllowlistForm {
  readonly text: string
  readonly error?: string | undefined
}

const AccountPage = (props: {
  readonly ctx: ViewerContext
  readonly profile: AccountProfile
  readonly users: ReadonlyArray<User.UserSummary>
  readonly allowlist: ReadonlyArray<string>
  readonly form: AllowlistForm | undefined
  readonly messages?: ReadonlyArray<Flash>
}) => {
  const { ctx } = props
  const owner = ctx.user.role === "owner"
  return (
    <Layout chrome={ctx.chrome} title="Account" section="account" messages={props.messages ?? []}>
      <h2>Company details</h2>
      <div class="card">
        <Details label="Company details" rows={detailRows(props.profile)} />
      </div>

      <h2 id="users">Users</h2>
      <Table<User.UserSummary>
        caption="Users of the account"
        rows={props.users}
        rowKey={(u) => u.userId}
        columns={[
          { header: "E-mail", cell: (u) => u.email },
          { header: "Role", cell: (u) => u.role },
          {
            header: "Status",
            cell: (u) => (u.active ? <Badge tone="success">active</Badge> : <Badge tone="warning">invited</Badge>)
          },
          { header: "Added", cell: (u) => <span class="nowrap">{formatTime(u.createdAt)}</span> },
          {
            header: "Actions",
            cell: (u) =>
              owner && u.userId !== ctx.user.userId ? (
                <a href={ctx.href(`/account/users/${encodeURIComponent(u.userId)}/remove`)}>Remove {u.email}</a>
              ) : (
                <span class="muted">{u.userId === ctx.user.userId ? "You" : "—"}</span>
              )
          }
        ]}
      />
      {owner ? (
        <p>
          <LinkButton href={ctx.href("/account/invite")} variant="secondary">
            Invite a user
          </LinkButton>
        </p>
      ) : (
        <p class="muted">Only an owner of the account can invite and remove users.</p>
      )}

      <h2 id="allowlist">IP allowlist</h2>
      <p class="muted">
        With entries, API calls with this account's keys are accepted only from these addresses; an empty list accepts
        every address.
      </p>
      {props.allowlist.length === 0 ? (
        <p>Every address is accepted.</p>
      ) : (
        <ul class="allowlist">
          {props.allowlist.map((entry) => (
            <li key={entry}>
              <code>{entry}</code>
            </li>
          ))}
        </ul>
      )}
      {owner ? (
        <div class="card">
          <PostForm action={ctx.href("/account/allowlist")} csrf={ctx.chrome.csrf} label="Edit the IP allowlist">
            <TextAreaField
              name="allowlist"
              label="Allowed addresses"
              hint="One IP address or CIDR per line (203.0.113.7, 198.51.100.0/24, 2001:db8::/32); empty accepts every address."
              value={props.form?.text ?? props.allowlist.join("\n")}
              error={props.form?.error}
              rows={5}
              maxLength={MAX_ALLOWLIST_TEXT}
            />
            <Button>Save the allowlist</Button>
          </PostForm>
        </div>
      ) : null}
    </Layout>
  )
}

/** Everything the account page shows. */
const loadAccount = (ctx: ViewerContext) =>
  Effect.all({
    profile: Provisioning.accountProfile(ctx.user.customerNo),
    users: Users.list(ctx.user.customerNo),
    shown: Accounts.showAccount(ctx.user.customerNo)
  })

const notFound = (ctx: ViewerContext) => page(404, <ErrorPage chrome={ctx.chrome} status={404} />)

const forbidden = (ctx: ViewerContext, detail: string) =>
  page(403, <ErrorPage chrome={ctx.chrome} status={403} detail={detail} />)

const renderAccount = (ctx: ViewerContext, status: number, form?: AllowlistForm, messages?: ReadonlyArray<Flash>) =>
  loadAccount(ctx).pipe(
    Effect.map(({ profile, users, shown }) =>
      page(
        status,
        <AccountPage
          ctx={ctx}
          profile={profile}
          users={users}
          allowlist={shown.account.ipAllowlist}
          form={form}
          messages={messages ?? []}
        />
      )
    ),
    Effect.catchTag("AccountNotFound", () => Effect.succeed(notFound(ctx)))
  )

/** `GET /account`: details, users, allowlist. */
export const accountPage = viewerRoute("GET", "/account", (ctx) => renderAccount(ctx, 200))

/** `POST /account/allowlist`: replaces the allowlist (owners). */
export const saveAllowlist = viewerRoute("POST", "/account/allowlist", (ctx) => {
  const text = ctx.form.get("allowlist") ?? ""
  if (text.length > MAX_ALLOWLIST_TEXT)
    return renderAccount(ctx, 400, { text: "", error: `Use at most ${MAX_ALLOWLIST_TEXT} characters.` })
  const { entries, invalid } = Accounts.parseIpAllowlist(text)
  const fieldError = (error: string) =>
    renderAccount(ctx, 400, { text, error }, [{ tone: "error", text: "Check the allowlist." }])
  if (invalid.length > 0) return fieldError(`Not an IP address or CIDR: ${invalid.join(", ")}`)
  return Accounts.setIpAllowlist(ctx.user, entries).pipe(
    Effect.as(redirect(`${ctx.href("/account")}#allowlist`, { flash: "allowlist-saved" })),
    Effect.catchTags({
      InvalidAllowlist: (e) => fieldError(e.message),
      NotAllowed: (e) => Effect.succeed(forbidden(ctx, e.message)),
      AccountNotFound: () => Effect.succeed(notFound(ctx))
    })
  )
})

const ROLE_OPTIONS = [
  { value: "member", label: "Member (sees keys, webhooks, shipments)" },
  { value: "owner", label: "Owner (also manages users and keys)" }
] as const

const InvitePage = (props: {
  readonly ctx: ViewerContext
  readonly email: string
  readonly role: string
  readonly errors: { readonly email?: string; readonly role?: string }
  readonly messages?: ReadonlyArray<Flash>
}) => (
  <Layout chrome={props.ctx.chrome} title="Invite a user" section="account" narrow messages={props.messages ?? []}>
    <div class="card">
      <p>The new user gets an e-mail with a link to set a password; the link works for 24 hours.</p>
      <PostForm action={props.ctx.href("/account/invite")} csrf={props.ctx.chrome.csrf} label="Invite a user">
        <EmailField value={props.email} error={props.errors.email} autocomplete="off" />
        <SelectField name="role" label="Role" value={props.role} options={ROLE_OPTIONS} error={props.errors.role} />
        <div class="actions">
          <Button>Send the invitation</Button>
          <a href={`${props.ctx.href("/account")}#users`}>Cancel</a>
        </div>
      </PostForm>
    </div>
  </Layout>
)

/** `GET /account/invite`: the invite form (owners, with a recent password: else `/confirm` first). */
export const invitePage = viewerRoute(
  "GET",
  "/account/invite",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    if (ctx.user.role !== "owner") return forbidden(ctx, "Only an owner of the account can invite users.")
    if (!Sessions.isRecent(ctx.user, yield* Clock.currentTimeMillis))
      return redirect(confirmHref(ctx, ctx.href("/account/invite")))
    return page(200, <InvitePage ctx={ctx} email="" role="member" errors={{}} />)
  })
)

/** `POST /account/invite`: `Users.invite`, the link built on the portal's public origin. */
export const invite = viewerRoute("POST", "/account/invite", (ctx) => {
  const email = (ctx.form.get("email") ?? "").trim()
  const role = ctx.form.get("role") ?? "member"
  const again = (status: number, errors: { email?: string; role?: string }, text = "Check the fields marked below.") =>
    page(
      status,
      <InvitePage ctx={ctx} email={email} role={role} errors={errors} messages={[{ tone: "error", text }]} />
    )
  if (email === "") return Effect.succeed(again(400, { email: "Enter an e-mail address." }))
  if (email.length > MAX_EMAIL) return Effect.succeed(again(400, { email: `Use at most ${MAX_EMAIL} characters.` }))
  if (role !== "member" && role !== "owner") return Effect.succeed(again(400, { role: "Choose member or owner." }))
  return Users.invite({
    customerNo: ctx.user.customerNo,
    email,
    role,
    invitedBy: ctx.user,
    linkBase: ctx.settings.publicOrigin
  }).pipe(
    Effect.as(redirect(`${ctx.href("/account")}#users`, { flash: "user-invited" })),
    Effect.catchTags({
      InvalidEmail: (e) => Effect.succeed(again(400, { email: e.message })),
      UserExists: () => Effect.succeed(again(409, { email: "This address already has a Waybill user." })),
      RecentAuthRequired: () => Effect.succeed(redirect(confirmHref(ctx, ctx.href("/account/invite")))),
      NotAllowed: (e) => Effect.succeed(forbidden(ctx, e.message)),
      MailFailed: () =>
        Effect.succeed(again(503, {}, "The invitation e-mail could not be sent. Try again in a moment.")),
      AccountNotFound: () => Effect.succeed(notFound(ctx))
    })
  )
})

const RemovePage = (props: { readonly ctx: ViewerContext; readonly user: User.UserSummary }) => (
  <Layout chrome={props.ctx.chrome} title="Remove a user" section="account" narrow>
    <div class="card">
      <p>
        Remove <strong>{props.user.email}</strong> ({props.user.role}) from the account? They are signed out at once and
        can no longer sign in.
      </p>
      <div class="actions">
        <PostForm
          action={props.ctx.href(`/account/users/${encodeURIComponent(props.user.userId)}/remove`)}
          csrf={props.ctx.chrome.csrf}
        >
          <Button variant="danger">Remove {props.user.email}</Button>
        </PostForm>
        <a href={`${props.ctx.href("/account")}#users`}>Cancel</a>
      </div>
    </div>
  </Layout>
)

/** `GET /account/users/:userId/remove`: asks before removing (owners). */
export const removeAsk = viewerRoute(
  "GET",
  "/account/users/:userId/remove",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    if (ctx.user.role !== "owner") return forbidden(ctx, "Only an owner of the account can remove users.")
    const users = yield* Users.list(ctx.user.customerNo)
    const target = users.find((u) => u.userId === ctx.params["userId"])
    if (target === undefined) return notFound(ctx)
    if (target.userId === ctx.user.userId) return forbidden(ctx, "You cannot remove yourself.")
    return page(200, <RemovePage ctx={ctx} user={target} />)
  })
)

/** `POST /account/users/:userId/remove`: `Users.remove`. */
export const remove = viewerRoute("POST", "/account/users/:userId/remove", (ctx) =>
  Users.remove(ctx.user, ctx.params["userId"] ?? "").pipe(
    Effect.as(redirect(`${ctx.href("/account")}#users`, { flash: "user-removed" })),
    Effect.catchTags({
      NotAllowed: (e) => Effect.succeed(forbidden(ctx, e.message)),
      UserNotFound: () => Effect.succeed(notFound(ctx))
    })
  )
)

/** The routes of this group. */
export const accountRoutes: ReadonlyArray<Route> = [accountPage, saveAllowlist, invitePage, invite, removeAsk, remove]
