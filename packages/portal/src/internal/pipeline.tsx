/**
 * @module pipeline
 *
 * What answers a portal request once `createPortal` has checked its options: the route table,
 * the pages (Preact templates rendered to strings) and the steps of the module `Portal`'s
 * description. `createPortal` loads this module on the portal's first request, so a host that
 * mounts the portal holds none of it until someone opens a page.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ClientIp } from "@waybill/core"
import type { Assets } from "../assets.js"
import { routes } from "../routes/index.js"
import { ErrorPage, type ErrorStatus } from "../views/ErrorPage.js"
import { type Flash, flashOf } from "../views/flash.js"
import type { Chrome } from "../views/Layout.js"
import { type Answer, asset, page, redirect, toResponse, withCookies } from "./answer.js"
import type { ConnectionInfo, PortalContext, PortalSettings, Route, ViewerContext } from "./context.js"
import { clearCookie, dropSession, parseCookies, readSession, setCookie } from "./cookies.js"
import { emptyForm, type Form, readForm } from "./form.js"
import { signInHref } from "./next.js"
import { checkPresession, presessionToken } from "./presession.js"
import { makeRouter } from "./router.js"
import { checkCsrf, type PortalRequirements, sameOrigin, type StorageFailure, type Viewer } from "./session.js"

/** The flash cookie's base name: the key of a message for the next page. */
const FLASH_COOKIE = "waybill_flash"

/** The steps of {@link handle} before its recovery: the answer to one request, or its failure. */
const answerRequest = Effect.fnUntraced(function* (
  request: Request,
  info: ConnectionInfo,
  settings: PortalSettings,
  match: ReturnType<typeof makeRouter<Route>>,
  assets: Assets,
  trusted: ReadonlyArray<ClientIp.Cidr>,
  basePath: string,
  stylesheet: string,
  errorPage: (status: ErrorStatus, detail?: string, extra?: Record<string, string>) => Answer
) {
  const url = new URL(request.url)
  const { pathname } = url
  if (pathname === basePath) return redirect(`${basePath}/${url.search}`, { status: 308 })
  if (!pathname.startsWith(`${basePath}/`)) return errorPage(404)
  const path = pathname.slice(basePath.length)

  if (path.startsWith("/assets/")) {
    if (request.method !== "GET" && request.method !== "HEAD") return errorPage(405, undefined, { allow: "GET, HEAD" })
    return path === assets.cssPath ? asset("text/css; charset=utf-8", assets.css) : errorPage(404)
  }

  const found = match(request.method, path)
  if (found._tag === "NotFound") return errorPage(404)
  if (found._tag === "MethodNotAllowed") return errorPage(405, undefined, { allow: found.allow.join(", ") })
  const route = found.route

  const policy = settings.cookies
  const cookies = parseCookies(request.headers.get("cookie"))
  let form: Form = emptyForm
  if (route.method === "POST") {
    const read = yield* Effect.either(readForm(request))
    if (Either.isLeft(read)) return errorPage(read.left.status, read.left.reason)
    form = read.right
    const origin = { origin: request.headers.get("origin"), referer: request.headers.get("referer") }
    if (!sameOrigin({ ...origin, expected: settings.publicOrigin })) return errorPage(403)
  }

  const token = readSession(policy, cookies)
  const viewer: Option.Option<Viewer> =
    token === undefined ? Option.none() : yield* settings.resolver.authenticate(token)
  // A cookie that names no live session (expired, ended elsewhere) is dropped.
  const stale = token !== undefined && Option.isNone(viewer) ? [dropSession(policy)] : []

  const flashKey = cookies.get(`${policy.insecure ? "" : "__Host-"}${FLASH_COOKIE}`)
  const flash: ReadonlyArray<Flash> = [flashOf(flashKey)].filter((f) => f !== undefined)
  const peer = ClientIp.resolve(info.remoteAddress, request.headers.get("x-forwarded-for"), trusted)
  // No address (a Unix socket, an embedder that passes none) is "": core then keys no
  // per-address limit, rather than one bucket every such client shares.
  const clientIp = Option.isSome(peer) ? ClientIp.format(peer.value) : ""
  const href = (p: string) => `${basePath}${p}`
  const base = { request, url, settings, params: found.params, form, clientIp, cookies, href }

  let answer: Answer
  let extra: ReadonlyArray<string> = stale
  if (route.access === "viewer") {
    if (Option.isNone(viewer) || token === undefined) {
      const back = request.method === "GET" || request.method === "HEAD" ? `${pathname}${url.search}` : `${basePath}/`
      const ended = stale.length > 0 ? [setCookie(policy, FLASH_COOKIE, "session-ended", { maxAgeSeconds: 60 })] : []
      return redirect(signInHref(basePath, back), { cookies: [...stale, ...ended] })
    }
    const user = viewer.value
    if (route.method === "POST" && !checkCsrf(user, form.get("csrf"))) return errorPage(403)
    const ctx: ViewerContext = {
      ...base,
      viewer,
      user,
      sessionToken: token,
      chrome: { basePath, stylesheet, viewer: user, csrf: Redacted.value(user.csrfToken), flash }
    }
    answer = yield* route.run(ctx)
  } else {
    if (route.method === "POST" && !checkPresession(policy, cookies, form.get("csrf"))) return errorPage(403)
    const pre = presessionToken(policy, cookies)
    if (pre.cookie !== undefined) extra = [...extra, pre.cookie]
    const ctx: PortalContext = {
      ...base,
      viewer,
      sessionToken: Option.isSome(viewer) ? token : undefined,
      chrome: { basePath, stylesheet, viewer: Option.getOrUndefined(viewer), csrf: pre.token, flash }
    }
    answer = yield* route.run(ctx)
  }
  if (answer.flash !== undefined)
    extra = [...extra, setCookie(policy, FLASH_COOKIE, answer.flash, { maxAgeSeconds: 60 })]
  else if (flashKey !== undefined && answer.status < 300) extra = [...extra, clearCookie(policy, FLASH_COOKIE)]
  return withCookies(answer, extra)
})

/** The pipeline of one request (see the module's description). */
const handle = (
  request: Request,
  info: ConnectionInfo,
  settings: PortalSettings,
  match: ReturnType<typeof makeRouter<Route>>,
  assets: Assets,
  trusted: ReadonlyArray<ClientIp.Cidr>
): Effect.Effect<Answer, never, PortalRequirements> => {
  const { basePath } = settings
  const stylesheet = `${basePath}${assets.cssPath}`
  const bareChrome: Chrome = { basePath, stylesheet, viewer: undefined, csrf: "", flash: [] }
  const errorPage = (status: ErrorStatus, detail?: string, extra: Record<string, string> = {}): Answer => {
    const answer = page(status, <ErrorPage chrome={bareChrome} status={status} detail={detail} />)
    return { ...answer, headers: { ...answer.headers, ...extra } }
  }
  const unavailable = (_: StorageFailure) => Effect.succeed(errorPage(503, undefined, { "retry-after": "5" }))

  return answerRequest(request, info, settings, match, assets, trusted, basePath, stylesheet, errorPage).pipe(
    Effect.catchTag("StorageError", unavailable),
    Effect.catchAllDefect((defect) =>
      Effect.logError("portal: unexpected defect", defect).pipe(Effect.as(errorPage(500)))
    )
  )
}

/** Answers the portal's requests through `runtime` (see {@link handle}). */
export type Pipeline = (request: Request, info: ConnectionInfo) => Promise<Response>

/**
 * The portal's request pipeline over `runtime`. A request whose program cannot run (the layer
 * could not be built) gets the 503 page.
 */
export const makePipeline = <E,>(
  runtime: ManagedRuntime.ManagedRuntime<PortalRequirements, E>,
  settings: PortalSettings,
  assets: Assets,
  trusted: ReadonlyArray<ClientIp.Cidr>
): Pipeline => {
  const match = makeRouter(routes)
  const { basePath } = settings
  const fallback = (request: Request) => {
    const chrome: Chrome = {
      basePath,
      stylesheet: `${basePath}${assets.cssPath}`,
      viewer: undefined,
      csrf: "",
      flash: []
    }
    return toResponse(page(503, <ErrorPage chrome={chrome} status={503} />), request.method)
  }
  return (request, info) =>
    runtime
      .runPromise(handle(request, info, settings, match, assets, trusted))
      .then((answer) => toResponse(answer, request.method))
      .catch(() => fallback(request))
}
