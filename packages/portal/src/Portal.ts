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
 *
 * This module only checks the options and holds the runtime: the steps, the route table and the
 * pages (Preact and its renderer with them) are `internal/pipeline.tsx`, loaded by the portal's
 * first request, so a host that mounts the portal but is never asked for a page does not hold
 * them.
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { ClientIp, Ssrf } from "@waybill/core"
import { loadAssets } from "./assets.js"
import type { ConnectionInfo, PortalSettings } from "./internal/context.js"
import { SECURITY_HEADERS } from "./internal/headers.js"
import type { Pipeline } from "./internal/pipeline.js"
import { coreSessions, type PortalRequirements } from "./internal/session.js"
import type { PortalOptions } from "./Options.js"

export type { ConnectionInfo } from "./internal/context.js"

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

/**
 * Builds the portal from a layer that provides {@link PortalRequirements}. The layer is built once,
 * on the first request, and shared; `dispose` releases it. With `options.memoMap` (the same as
 * the API handler's), the services are the handler's own, built once for both. A layer that cannot be built makes every
 * request answer a 503 page. Options are checked here: a malformed `publicOrigin`, `basePath` or
 * trusted proxy is an error at startup, not a broken page later. The pages load with the first
 * request; if they cannot (a broken install), that request and each one after it answers 503
 * with the reason in the log, and the next request tries again.
 */
export const createPortal = <E>(
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
  const runtime = ManagedRuntime.make(layer, options.memoMap)
  let pipeline: Promise<Pipeline> | undefined
  const load = (): Promise<Pipeline> =>
    (pipeline ??= import("./internal/pipeline.js").then(
      (m) => m.makePipeline(runtime, settings, assets, trusted),
      (error: unknown) => {
        pipeline = undefined
        throw error
      }
    ))
  const unavailable = (error: unknown): Promise<Response> =>
    runtime
      .runPromise(Effect.logError("portal: the pages could not be loaded", error))
      .catch(() => undefined)
      .then(
        () =>
          new Response("The portal is unavailable.\n", {
            status: 503,
            headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", "retry-after": "5" }
          })
      )
  const handler = (request: Request, info: ConnectionInfo = {}) =>
    load().then((answer) => answer(request, info), unavailable)
  return {
    handler,
    basePath,
    handles: (pathname) => pathname === basePath || pathname.startsWith(`${basePath}/`),
    dispose: () => runtime.dispose()
  }
}
