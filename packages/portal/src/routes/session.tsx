/**
 * @module routes/session
 *
 * Signing in and out, and every page that sets a password. The sign-in form posts e-mail and
 * password with the pre-session CSRF token; the resolver (core's `Sessions.signIn`) checks them
 * and starts a new session, whose token goes into the session cookie only. A refusal shows one
 * message whatever the reason (wrong e-mail, wrong password, too many attempts), so no account
 * can be enumerated.
 *
 * The one-time links mailed by core's `Users` (`/invite/?token=`, `/reset/?token=`) open a form
 * that sets a password (`Users.acceptInvite`, `Users.completeReset`): the new session's cookie
 * signs the browser in. A link that no longer works (unknown, expired, used, replaced, or the
 * password changed since) gets one 410 page that does not say which. `/reset` without a token
 * asks for a link by e-mail and always answers the same. `/password` changes the signed-in
 * user's password (`Users.changePassword`): every session of the user ends, and this browser
 * gets the new one.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { PasswordPolicy, Users } from "@waybill/core"
import { type Answer, page, redirect } from "../internal/answer.js"
import { type PortalContext, publicRoute, type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import { dropSession, writeSession } from "../internal/cookies.js"
import { safeNext } from "../internal/next.js"
import {
  Button,
  CsrfField,
  CurrentPasswordField,
  Field,
  MAX_EMAIL,
  MAX_PASSWORD,
  EmailField
} from "../views/components.js"
import type { Flash } from "../views/flash.js"
import { Layout } from "../views/Layout.js"

/** The one message of a refused sign-in (DECISIONS.md). */
export const SIGN_IN_REFUSED = "E-mail or password is incorrect."

interface SignInErrors {
  readonly email?: string
  readonly password?: string
}

const SignInPage = (props: {
  readonly ctx: PortalContext
  readonly next: string
  readonly email: string
  readonly errors: SignInErrors
  readonly messages: ReadonlyArray<Flash>
}) => (
  <Layout chrome={props.ctx.chrome} title="Sign in" narrow messages={props.messages}>
    <div class="card">
      <form method="post" action={props.ctx.href("/signin")} aria-label="Sign in">
        <CsrfField token={props.ctx.chrome.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <EmailField value={props.email} error={props.errors.email} autocomplete="username" />
        <CurrentPasswordField name="password" label="Password" error={props.errors.password} />
        <Button>Sign in</Button>
      </form>
      <p class="link-row">
        <a href={props.ctx.href("/reset")}>Forgot your password?</a>
      </p>
    </div>
  </Layout>
)

/** The `next` a sign-in form carries: a safe path of the portal. */
const nextOf = (ctx: PortalContext, raw: string | null | undefined) => safeNext(ctx.settings.basePath, raw)

/** `GET /signin`: the form, or straight on for a signed-in user. */
export const signInPage = publicRoute("GET", "/signin", (ctx) => {
  const next = nextOf(ctx, ctx.url.searchParams.get("next"))
  if (Option.isSome(ctx.viewer)) return Effect.succeed(redirect(next))
  return Effect.succeed(page(200, <SignInPage ctx={ctx} next={next} email="" errors={{}} messages={[]} />))
})

/** `POST /signin`: checks the form, then the resolver; a new session cookie and on to `next`. */
export const signIn = publicRoute("POST", "/signin", (ctx) => {
  const next = nextOf(ctx, ctx.form.get("next"))
  const email = (ctx.form.get("email") ?? "").trim()
  const password = ctx.form.get("password") ?? ""
  const errors: SignInErrors = {
    ...(email === "" ? { email: "Enter your e-mail address." } : {}),
    ...(email.length > MAX_EMAIL ? { email: `Use at most ${MAX_EMAIL} characters.` } : {}),
    ...(password === "" ? { password: "Enter your password." } : {}),
    ...(password.length > MAX_PASSWORD ? { password: `Use at most ${MAX_PASSWORD} characters.` } : {})
  }
  const again = (status: number, errs: SignInErrors, messages: ReadonlyArray<Flash>) =>
    page(status, <SignInPage ctx={ctx} next={next} email={email} errors={errs} messages={messages} />)
  if (Object.keys(errors).length > 0)
    return Effect.succeed(again(400, errors, [{ tone: "error", text: "Check the fields marked below." }]))
  return ctx.settings.resolver.signIn({ email, password: Redacted.make(password), clientIp: ctx.clientIp }).pipe(
    // The session this browser held (someone else's, on a shared computer) ends on the server too.
    Effect.tap(() => (ctx.sessionToken === undefined ? Effect.void : ctx.settings.resolver.signOut(ctx.sessionToken))),
    Effect.map((signed) => redirect(next, { cookies: [writeSession(ctx.settings.cookies, signed.token)] })),
    Effect.catchTag("SignInRefused", () => Effect.succeed(again(200, {}, [{ tone: "error", text: SIGN_IN_REFUSED }])))
  )
})

/** `POST /signout`: ends the session and drops its cookie. */
export const signOut = viewerRoute("POST", "/signout", (ctx) =>
  ctx.settings.resolver
    .signOut(ctx.sessionToken)
    .pipe(
      Effect.as(redirect(ctx.href("/signin"), { cookies: [dropSession(ctx.settings.cookies)], flash: "signed-out" }))
    )
)

// ---------------------------------------------------------------------------------------------
// One-time links and passwords
// ---------------------------------------------------------------------------------------------

/** The status of a link that no longer works: Gone. */
const GONE = 410

/** The longest token looked up (core's are 43 characters; anything longer is not one). */
const MAX_TOKEN = 128

/** The portal's shortest new password (core's `PasswordPolicy.PORTAL`). */
const MIN_NEW_PASSWORD = PasswordPolicy.PORTAL.minLength

/** What a one-time link is for, and how its pages read. */
interface LinkKind {
  readonly purpose: "invite" | "reset"
  readonly path: string
  readonly title: string
}

const INVITE: LinkKind = { purpose: "invite", path: "/invite/", title: "Set your password" }
const RESET: LinkKind = { purpose: "reset", path: "/reset/", title: "Choose a new password" }

/** The page of a link that no longer works; it never says why (unknown, expired, used, replaced). */
const DeadLinkPage = (props: { readonly ctx: PortalContext }) => (
  <Layout chrome={props.ctx.chrome} title="This link no longer works" narrow>
    <div class="card">
      <p>
        Links in Waybill's e-mails work once, and only for a while. Ask for a new link, or sign in if your password is
        already set.
      </p>
      <p class="link-row">
        <a href={props.ctx.href("/reset")}>Get a new link to set your password</a>
      </p>
      <p class="link-row">
        <a href={props.ctx.href("/signin")}>Sign in</a>
      </p>
    </div>
  </Layout>
)

const deadLink = (ctx: PortalContext): Answer => page(GONE, <DeadLinkPage ctx={ctx} />)

interface PasswordErrors {
  readonly current?: string
  readonly password?: string
  readonly confirm?: string
}

/** The two fields of a new password. */
const NewPasswordFields = (props: { readonly errors: PasswordErrors }) => (
  <>
    <Field
      name="password"
      label="New password"
      type="password"
      autocomplete="new-password"
      hint={`At least ${MIN_NEW_PASSWORD} characters. A few unrelated words make a good one.`}
      maxLength={MAX_PASSWORD}
      required
      error={props.errors.password}
    />
    <Field
      name="confirm"
      label="New password again"
      type="password"
      autocomplete="new-password"
      maxLength={MAX_PASSWORD}
      required
      error={props.errors.confirm}
    />
  </>
)

/** The set-password form of an invite or reset link. */
const SetPasswordPage = (props: {
  readonly ctx: PortalContext
  readonly kind: LinkKind
  readonly token: string
  readonly email: string
  readonly errors: PasswordErrors
  readonly messages: ReadonlyArray<Flash>
}) => (
  <Layout chrome={props.ctx.chrome} title={props.kind.title} narrow messages={props.messages}>
    <div class="card">
      <form method="post" action={props.ctx.href(props.kind.path)} aria-label={props.kind.title}>
        <CsrfField token={props.ctx.chrome.csrf} />
        <input type="hidden" name="token" value={props.token} />
        <p>
          For <strong id="link-email">{props.email}</strong>
        </p>
        <NewPasswordFields errors={props.errors} />
        <Button>Set password</Button>
      </form>
    </div>
  </Layout>
)

/** The form's new password and its confirmation: field errors, or the password. */
const newPassword = (ctx: PortalContext): { readonly errors: PasswordErrors; readonly password: string } => {
  const password = ctx.form.get("password") ?? ""
  const confirm = ctx.form.get("confirm") ?? ""
  if (password === "") return { errors: { password: "Enter a new password." }, password }
  if (password.length > MAX_PASSWORD)
    return { errors: { password: `Use at most ${MAX_PASSWORD} characters.` }, password }
  if (confirm !== password) return { errors: { confirm: "The two passwords are not the same." }, password }
  return { errors: {}, password }
}

const hasErrors = (errors: PasswordErrors) => Object.keys(errors).length > 0

const CHECK_FIELDS: Flash = { tone: "error", text: "Check the fields marked below." }

/** A token from a query or form: a plausible one, else undefined (never looked up). */
const tokenOf = (raw: string | null | undefined): string | undefined =>
  raw === null || raw === undefined || raw === "" || raw.length > MAX_TOKEN ? undefined : raw

/** `GET /invite/?token=` and `GET /reset/?token=`: the set-password form, or the dead-link page. */
const linkPage = (ctx: PortalContext, kind: LinkKind, raw: string) =>
  Users.inspectToken(Redacted.make(raw), kind.purpose).pipe(
    Effect.map((found) =>
      Option.isNone(found)
        ? deadLink(ctx)
        : page(
            200,
            <SetPasswordPage ctx={ctx} kind={kind} token={raw} email={found.value.email} errors={{}} messages={[]} />
          )
    )
  )

/** `POST /invite/` and `POST /reset/` with a token: sets the password and signs in. */
const completeLink = (ctx: PortalContext, kind: LinkKind, raw: string) => {
  const again = (errors: PasswordErrors) =>
    Users.inspectToken(Redacted.make(raw), kind.purpose).pipe(
      Effect.map((found) =>
        Option.isNone(found)
          ? deadLink(ctx)
          : page(
              400,
              <SetPasswordPage
                ctx={ctx}
                kind={kind}
                token={raw}
                email={found.value.email}
                errors={errors}
                messages={[CHECK_FIELDS]}
              />
            )
      )
    )
  const { errors, password } = newPassword(ctx)
  if (hasErrors(errors)) return again(errors)
  const complete = kind.purpose === "invite" ? Users.acceptInvite : Users.completeReset
  return complete(Redacted.make(raw), Redacted.make(password)).pipe(
    // The browser may have held another user's session: it ends, this link's user is signed in.
    Effect.tap(() => (ctx.sessionToken === undefined ? Effect.void : ctx.settings.resolver.signOut(ctx.sessionToken))),
    Effect.map((signed) =>
      redirect(ctx.href("/"), { cookies: [writeSession(ctx.settings.cookies, signed.token)], flash: "password-set" })
    ),
    Effect.catchTags({
      TokenInvalid: () => Effect.succeed(deadLink(ctx)),
      PasswordRejected: (e) => again({ password: e.message })
    })
  )
}

/** `GET /invite/?token=`: the invitation's set-password form. */
export const invitePage = publicRoute("GET", "/invite", (ctx) => {
  const raw = tokenOf(ctx.url.searchParams.get("token"))
  return raw === undefined ? Effect.succeed(deadLink(ctx)) : linkPage(ctx, INVITE, raw)
})

/** `POST /invite/`: sets the invited user's password (`Users.acceptInvite`) and signs in. */
export const acceptInvite = publicRoute("POST", "/invite", (ctx) => {
  const raw = tokenOf(ctx.form.get("token"))
  return raw === undefined ? Effect.succeed(deadLink(ctx)) : completeLink(ctx, INVITE, raw)
})

/** The form that asks for a reset link. */
const RequestResetPage = (props: {
  readonly ctx: PortalContext
  readonly email: string
  readonly error?: string | undefined
}) => (
  <Layout
    chrome={props.ctx.chrome}
    title="Reset your password"
    narrow
    messages={props.error === undefined ? [] : [CHECK_FIELDS]}
  >
    <div class="card">
      <p>Enter the e-mail address you sign in with: we send a link to choose a new password.</p>
      <form method="post" action={props.ctx.href("/reset")} aria-label="Reset your password">
        <CsrfField token={props.ctx.chrome.csrf} />
        <EmailField value={props.email} error={props.error} autocomplete="username" />
        <Button>Send the link</Button>
      </form>
      <p class="link-row">
        <a href={props.ctx.href("/signin")}>Back to sign in</a>
      </p>
    </div>
  </Layout>
)

/** `GET /reset`: asks for a link; `GET /reset/?token=`: the reset link's set-password form. */
export const resetPage = publicRoute("GET", "/reset", (ctx) => {
  if (!ctx.url.searchParams.has("token")) return Effect.succeed(page(200, <RequestResetPage ctx={ctx} email="" />))
  const raw = tokenOf(ctx.url.searchParams.get("token"))
  return raw === undefined ? Effect.succeed(deadLink(ctx)) : linkPage(ctx, RESET, raw)
})

/**
 * `POST /reset`: with a `token`, sets the new password (`Users.completeReset`: every session ends)
 * and signs in; without, mails a reset link (`Users.requestReset`) and answers the same whether
 * or not the address has a user. Links are built on the portal's public origin, never on the
 * request's Host.
 */
export const reset = publicRoute("POST", "/reset", (ctx) => {
  if (ctx.form.get("token") !== undefined) {
    const raw = tokenOf(ctx.form.get("token"))
    return raw === undefined ? Effect.succeed(deadLink(ctx)) : completeLink(ctx, RESET, raw)
  }
  const email = (ctx.form.get("email") ?? "").trim()
  const error =
    email === ""
      ? "Enter your e-mail address."
      : email.length > MAX_EMAIL
        ? `Use at most ${MAX_EMAIL} characters.`
        : undefined
  if (error !== undefined) return Effect.succeed(page(400, <RequestResetPage ctx={ctx} email={email} error={error} />))
  // The answer does not wait for the e-mail: an address with a user (a token written, a mail
  // sent) must not take longer to answer than one without.
  return Users.requestReset({ email, linkBase: ctx.settings.publicOrigin }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("portal: reset request failed", cause)),
    Effect.forkDaemon,
    Effect.as(redirect(ctx.href("/signin"), { flash: "reset-requested" }))
  )
})

/** The change-password form of a signed-in user. */
const ChangePasswordPage = (props: {
  readonly ctx: ViewerContext
  readonly errors: PasswordErrors
  readonly messages: ReadonlyArray<Flash>
}) => (
  <Layout chrome={props.ctx.chrome} title="Change your password" narrow messages={props.messages}>
    <div class="card">
      <p>Changing your password signs you out everywhere else: every other browser must sign in again.</p>
      <form method="post" action={props.ctx.href("/password")} aria-label="Change your password">
        <CsrfField token={props.ctx.chrome.csrf} />
        <CurrentPasswordField name="current" label="Current password" error={props.errors.current} />
        <NewPasswordFields errors={props.errors} />
        <Button>Change password</Button>
      </form>
    </div>
  </Layout>
)

/** `GET /password`: the change-password form. */
export const passwordPage = viewerRoute("GET", "/password", (ctx) =>
  Effect.succeed(page(200, <ChangePasswordPage ctx={ctx} errors={{}} messages={[]} />))
)

/**
 * `POST /password`: `Users.changePassword` (the current password is asked, so no recent sign-in
 * is needed on top). Every session of the user ends, this one included; the fresh session it
 * returns goes into this browser's cookie.
 */
export const changePassword = viewerRoute("POST", "/password", (ctx) => {
  const current = ctx.form.get("current") ?? ""
  const { errors: fresh, password } = newPassword(ctx)
  const errors: PasswordErrors = {
    ...fresh,
    ...(current === "" ? { current: "Enter your current password." } : {}),
    ...(current.length > MAX_PASSWORD ? { current: `Use at most ${MAX_PASSWORD} characters.` } : {})
  }
  const again = (errs: PasswordErrors) =>
    page(400, <ChangePasswordPage ctx={ctx} errors={errs} messages={[CHECK_FIELDS]} />)
  if (hasErrors(errors)) return Effect.succeed(again(errors))
  return Users.changePassword(ctx.user, Redacted.make(current), Redacted.make(password)).pipe(
    Effect.map((signed) =>
      redirect(ctx.href("/password"), {
        cookies: [writeSession(ctx.settings.cookies, signed.token)],
        flash: "password-changed"
      })
    ),
    Effect.catchTags({
      SignInRefused: () => Effect.succeed(again({ current: "The current password is not correct." })),
      PasswordRejected: (e) => Effect.succeed(again({ password: e.message }))
    })
  )
})

/** The routes of this group. */
export const sessionRoutes: ReadonlyArray<Route> = [
  signInPage,
  signIn,
  signOut,
  invitePage,
  acceptInvite,
  resetPage,
  reset,
  passwordPage,
  changePassword
]
