/**
 * @module Portal
 *
 * The account portal as one Fetch function: `createPortal(layer, options)` mirrors `@waybill/http`'s
 * `createHandler` (one `ManagedRuntime` built from the layer on first use, shared by every
 * request). A request goes through small steps, each its own module:
 *
 * 1. the base path (`/portal` redirects to `/portal/`; anything outside it is a 404);
 * 2. the stylesheet under its content-hashed path (`assets.ts`);
 * 3. the route table (`internal/router.ts`): 404 and 405 pages;
 * 4. a POST's form (`internal/form.ts`): 400 / 413 pages, and its origin (`sameOrigin`): 403;
 * 5. the session cookie (`internal/cookies.ts`) -> the viewer (`internal/session.ts`, the resolver);
 * 6. a viewer route without a session: to the sign-in page and back; with one, a POST's `csrf`
 *    field must be the session's token (`checkCsrf`): 403. A public POST must carry the
 *    pre-session token of its cookie (`internal/presession.ts`): 403;
 * 7. the route's program; a store that is down is a 503 page, a defect a 500 page;
 * 8. the answer with the security fields of every answer (`internal/headers.ts`).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ClientIp, Ssrf } from "@waybill/core"
import { type Assets, loadAssets } from "./assets.js"
import { type Answer, asset, page, redirect, toResponse, withCookies } from "./internal/answer.js"
import type { PortalContext, PortalSettings, Route, ViewerContext } from "./internal/context.js"
import { clearCookie, dropSession, parseCookies, readSession, setCookie } from "./internal/cookies.js"
import { emptyForm, type Form, readForm } from "./internal/form.js"
import { signInHref } from "./internal/next.js"
import { checkPresession, presessionToken } from "./internal/presession.js"
import { makeRouter } from "./internal/router.js"
import {
  checkCsrf,
  coreSessions,
  type PortalRequirements,
  sameOrigin,
  type Viewer,
  type StorageFailure
} from "./internal/session.js"
import type { PortalOptions } from "./Options.js"
import { routes } from "./routes/index.js"
import { ErrorPage, type ErrorStatus } from "./views/ErrorPage.js"
import { type Flash, flashOf } from "./views/flash.js"
import type { Chrome } from "./views/Layout.js"

/** What the connection tells beyond the request (the peer address). */
export interface ConnectionInfo {
  readonly remoteAddress?: string
}

export interface WaybillPortal {
  /** Answers one request for a path under the base path. Never rejects: failures are error pages. */
  readonly handler: (request: Request, info?: ConnectionInfo) => Promise<Response>
  /** Whether a request path is the portal's: the base path, or anything below it. */
  readonly handles: (pathname: string) => boolean
  /** The base path (`/portal`). */
  readonly basePath: string
  /** Releases the layer's resources. */
  readonly dispose: () => Promise<void>
}

/** The flash cookie's base name: the key of a message for the next page. */
const FLASH_COOKIE = "waybill_flash"

const parseTrusted = (list: ReadonlyArray<string> = []): ReadonlyArray<ClientIp.Cidr> =>
  list.map((entry) =>
    Option.getOrElse(ClientIp.parseCidr(entry), () => {
      throw new Error(`createPortal: trustedProxies: "${entry}" is not an IP address or CIDR`)
    })
  )

const parseAllowPrivate = (list: ReadonlyArray<string> = []): ReadonlyArray<ClientIp.Cidr> =>
  Option.getOrElse(Ssrf.parseAllowList(list.join(",")), () => {
    throw new Error(`createPortal: webhookAllowPrivate: "${list.join(",")}" is not a list of addresses or CIDRs`)
  })

const normalizeBasePath = (basePath = "/portal"): string => {
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(basePath) || basePath.endsWith("/") || basePath.includes("//"))
    throw new Error(`createPortal: basePath "${basePath}" must start with / and not end with one`)
  return basePath
}

const originOf = (publicOrigin: string): string => {
  let url: URL
  try {
    url = new URL(publicOrigin)
  } catch {
    throw new Error(`createPortal: publicOrigin "${publicOrigin}" is not a URL`)
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error(`createPortal: publicOrigin "${publicOrigin}" must be http(s)`)
  return url.origin
}

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

  return Effect.gen(function* () {
    const url = new URL(request.url)
    const { pathname } = url
    if (pathname === basePath) return redirect(`${basePath}/${url.search}`, { status: 308 })
    if (!pathname.startsWith(`${basePath}/`)) return errorPage(404)
    const path = pathname.slice(basePath.length)

    if (path.startsWith("/assets/")) {
      if (request.method !== "GET" && request.method !== "HEAD")
        return errorPage(405, undefined, { allow: "GET, HEAD" })
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
  }).pipe(
    Effect.catchTag("StorageError", unavailable),
    Effect.catchAllDefect((defect) =>
      Effect.logError("portal: unexpected defect", defect).pipe(Effect.as(errorPage(500)))
    )
  )
}

/**
 * Builds the portal from a layer that provides {@link PortalRequirements}. The layer is built once,
 * on the first request, and shared; `dispose` releases it. With `options.memoMap` (the same as
 * the API handler's), the services are the handler's own, built once for both. A layer that cannot be built makes every
 * request answer a 503 page. Options are checked here: a malformed `publicOrigin`, `basePath` or
 * trusted proxy is an error at startup, not a broken page later.
 */
export const createPortal = <E,>(
  layer: Layer.Layer<PortalRequirements, E, never>,
  options: PortalOptions
): WaybillPortal => {
  const basePath = normalizeBasePath(options.basePath)
  const settings: PortalSettings = {
    basePath,
    publicOrigin: originOf(options.publicOrigin),
    cookies: { insecure: options.allowInsecureHttp === true },
    resolver: options.resolver ?? coreSessions,
    webhookPolicy: { allowPrivate: parseAllowPrivate(options.webhookAllowPrivate) }
  }
  const trusted = parseTrusted(options.trustedProxies)
  const assets = loadAssets()
  const match = makeRouter(routes)
  const runtime = ManagedRuntime.make(layer, options.memoMap)
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
  const handler = (request: Request, info: ConnectionInfo = {}) =>
    runtime
      .runPromise(handle(request, info, settings, match, assets, trusted))
      .then((answer) => toResponse(answer, request.method))
      .catch(() => fallback(request))
  return {
    handler,
    basePath,
    handles: (pathname) => pathname === basePath || pathname.startsWith(`${basePath}/`),
    dispose: () => runtime.dispose()
  }
}
