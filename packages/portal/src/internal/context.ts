/**
 * @module context
 *
 * What a route receives and what it is: {@link PortalContext} (the request, its form, the
 * viewer, the page chrome) and {@link Route} (method, path pattern, who may call it, and the
 * program that answers). Routes are made with {@link publicRoute} and {@link viewerRoute}.
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { Webhooks } from "@waybill/core"
import type { Chrome } from "../views/Layout.js"
import type { Answer } from "./answer.js"
import type { CookiePolicy } from "./cookies.js"
import type { Form } from "./form.js"
import type { PortalRequirements, StorageFailure, Viewer, ViewerResolver } from "./session.js"

/** What the connection tells beyond the request (the peer address). */
export interface ConnectionInfo {
  readonly remoteAddress?: string
}

/** The portal's settings, resolved once from `PortalOptions`. */
export interface PortalSettings {
  /** Without the final slash: `/portal`. */
  readonly basePath: string
  /** The origin forms must come from: `https://portal.example.com`. */
  readonly publicOrigin: string
  readonly cookies: CookiePolicy
  readonly resolver: ViewerResolver
  /** What webhook endpoint URLs may point to (the `webhookAllowPrivate` option). */
  readonly webhookPolicy: Webhooks.UrlPolicy
}

/** A request as a route sees it. */
export interface PortalContext {
  readonly request: Request
  readonly url: URL
  readonly settings: PortalSettings
  /** The `:name` segments of the route's pattern, decoded. */
  readonly params: Readonly<Record<string, string>>
  /** The submitted form of a POST (checked for CSRF already); empty for GET. */
  readonly form: Form
  /** The client address (through the trusted proxies), `unknown` when the peer is not known. */
  readonly clientIp: string
  readonly cookies: ReadonlyMap<string, string>
  /** The signed-in user, if any (public routes may be called either way). */
  readonly viewer: Option.Option<Viewer>
  /** The session token of the request's cookie, when it names a live session. */
  readonly sessionToken: Redacted.Redacted<string> | undefined
  /** What the page frame needs: pass it to `Layout`. */
  readonly chrome: Chrome
  /** A path of the portal: `href("/keys")` is `/portal/keys`. */
  readonly href: (path: string) => string
}

/** The context of a route only a signed-in user reaches. */
export interface ViewerContext extends PortalContext {
  readonly viewer: Option.Some<Viewer>
  readonly user: Viewer
  readonly sessionToken: Redacted.Redacted<string>
}

/** What a route's program may fail with: the store is down (the page answers 503). */
export type RouteFailure = StorageFailure

interface RouteBase {
  readonly method: "GET" | "POST"
  /** A path below the base path, with `:name` segments. */
  readonly path: string
}

/** A page anyone may reach (sign-in, the invite and reset forms). POSTs carry the pre-session token. */
export interface PublicRoute extends RouteBase {
  readonly access: "public"
  readonly run: (ctx: PortalContext) => Effect.Effect<Answer, RouteFailure, PortalRequirements>
}

/**
 * A page of a signed-in user. Without a session a GET goes to the sign-in page (and back after
 * it); a POST's `csrf` field must be the session's token.
 */
export interface ViewerRoute extends RouteBase {
  readonly access: "viewer"
  readonly run: (ctx: ViewerContext) => Effect.Effect<Answer, RouteFailure, PortalRequirements>
}

export type Route = PublicRoute | ViewerRoute

/** A route anyone may reach. */
export const publicRoute = (method: "GET" | "POST", path: string, run: PublicRoute["run"]): PublicRoute => ({
  method,
  path,
  access: "public",
  run
})

/** A route of a signed-in user. */
export const viewerRoute = (method: "GET" | "POST", path: string, run: ViewerRoute["run"]): ViewerRoute => ({
  method,
  path,
  access: "viewer",
  run
})
