/**
 * @module routes/confirm
 *
 * Asking for the password again before a sensitive step (regenerating a key, inviting a user):
 * `GET /confirm?next=<path>` shows the form, `POST /confirm` checks the password with core's
 * `Sessions.confirmPassword` (which records the time, so `Sessions.isRecent` holds for the next
 * 10 minutes) and goes on to `next`: a path of the portal only (`safeNext`), never another site.
 * A wrong password counts against the sign-in limits like a failed sign-in.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Sessions } from "@waybill/core"
import { page, redirect } from "../internal/answer.js"
import { type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import { safeNext } from "../internal/next.js"
import { Button, CurrentPasswordField, MAX_PASSWORD, PostForm } from "../views/components.js"
import type { Flash } from "../views/flash.js"
import { Layout } from "../views/Layout.js"

/** The confirm page's URL that goes on to `next` (a path of the portal) once the password is given. */
export const confirmHref = (ctx: Pick<ViewerContext, "href">, next: string): string =>
  `${ctx.href("/confirm")}?next=${encodeURIComponent(next)}`

const ConfirmPage = (props: {
  readonly ctx: ViewerContext
  readonly next: string
  readonly error?: string | undefined
  readonly messages: ReadonlyArray<Flash>
}) => (
  <Layout chrome={props.ctx.chrome} title="Confirm your password" narrow messages={props.messages}>
    <div class="card">
      <p>This step needs your password again (it was not entered in the last 10 minutes).</p>
      <PostForm action={props.ctx.href("/confirm")} csrf={props.ctx.chrome.csrf} label="Confirm your password">
        <input type="hidden" name="next" value={props.next} />
        <input type="hidden" name="username" value={props.ctx.user.email} autocomplete="username" />
        <CurrentPasswordField name="password" label="Password" autofocus error={props.error} />
        <div class="actions">
          <Button>Continue</Button>
          <a href={props.next}>Cancel</a>
        </div>
      </PostForm>
    </div>
  </Layout>
)

/** `GET /confirm?next=`: the password form. */
export const confirmPage = viewerRoute("GET", "/confirm", (ctx) => {
  const next = safeNext(ctx.settings.basePath, ctx.url.searchParams.get("next"))
  return Effect.succeed(page(200, <ConfirmPage ctx={ctx} next={next} messages={[]} />))
})

/** `POST /confirm`: checks the password, then on to `next`. */
export const confirm = viewerRoute("POST", "/confirm", (ctx) => {
  const next = safeNext(ctx.settings.basePath, ctx.form.get("next"))
  const password = ctx.form.get("password") ?? ""
  const again = (error: string) =>
    page(
      200,
      <ConfirmPage ctx={ctx} next={next} error={error} messages={[{ tone: "error", text: "Check the password." }]} />
    )
  if (password === "") return Effect.succeed(again("Enter your password."))
  if (password.length > MAX_PASSWORD) return Effect.succeed(again(`Use at most ${MAX_PASSWORD} characters.`))
  return Sessions.confirmPassword(ctx.user, Redacted.make(password)).pipe(
    Effect.as(redirect(next, { flash: "password-confirmed" })),
    Effect.catchTag("SignInRefused", () => Effect.succeed(again("That is not your password.")))
  )
})

/** The routes of this group. */
export const confirmRoutes: ReadonlyArray<Route> = [confirmPage, confirm]
