/**
 * Authentication and admission, once, for every keyed route. A route states where its key may
 * be besides the Authorization header and how to read its input; this module applies the
 * interface's precedence and calls core's one door (`Admission.admit` / `admitOptional`), so no
 * route authenticates on its own and use cases receive the principal, never the raw request.
 *
 * The Authorization header, when present, alone decides (interface 5) and is authenticated
 * before the route reads its input: an invalid Bearer is refused whatever the body holds, and
 * an unknown caller's body is never read. Without it, the input is read first, because the
 * other places (body, form, query) are inside it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type Account, Admission, constantTimeEqual, Credentials, Sessions } from "@waybill/core"
import type { Reply } from "../Raw.js"
import { failure } from "./respond.js"
import type { RouteContext } from "../routes/Route.js"

/** How a keyed route finds its input and its credential. */
export interface Access<I, E, R> {
  /** Reads what the route needs (body, form, query); its failures are the route's to answer. */
  readonly read: (ctx: RouteContext) => Effect.Effect<I, E, R>
  /** The places a key may be, after the header, in precedence order. */
  readonly candidates: (input: I, ctx: RouteContext) => ReadonlyArray<Credentials.Candidate>
  /** Whether a signed-in portal user's session cookie is accepted when no key is given. */
  readonly session?: boolean
}

/** The route's input and the admitted caller. */
export interface Admitted<I, P> {
  readonly input: I
  readonly principal: P
}

const withCredential = <I, E, R, P extends Account.Principal | Option.Option<Account.Principal>>(
  ctx: RouteContext,
  access: Access<I, E, R>,
  door: (input: Admission.AdmitInput) => Effect.Effect<P, Admission.AdmitError, Admission.AdmitRequirements>
): Effect.Effect<Admitted<I, P>, E | Admission.AdmitError, R | Admission.AdmitRequirements> => {
  const header = Credentials.fromAuthorization(ctx.request.headers.get("authorization"))
  if (header._tag !== "None") {
    return Effect.flatMap(door({ client: ctx.client, resolution: header }), (principal) => {
      note(ctx, principal)
      return Effect.map(access.read(ctx), (input) => ({ principal, input }))
    })
  }
  return Effect.flatMap(access.read(ctx), (input) => {
    const keyed = Credentials.resolve(null, access.candidates(input, ctx))
    const resolution = access.session === true ? Credentials.orSession(keyed, sessionCookie(ctx)) : keyed
    return Effect.map(door({ client: ctx.client, resolution }), (principal) => {
      note(ctx, principal)
      return { principal, input }
    })
  })
}

/** The portal session cookie's value (the first of its name), if the request carries one. */
export const sessionCookie = (ctx: RouteContext): string | undefined => {
  const header = ctx.request.headers.get("cookie")
  if (header === null) return undefined
  const name = Sessions.cookieName(ctx.options.allowInsecureHttp === true)
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** Tells the access log who was admitted (the door answers a principal or an optional one). */
const note = (ctx: RouteContext, principal: Account.Principal | Option.Option<Account.Principal>): void => {
  const p = Option.isOption(principal) ? Option.getOrUndefined(principal) : principal
  if (p !== undefined) ctx.note.customerNo = p.account.customerNo
}

/** A route whose caller must hold a key (booking, cancel, documents). */
export const keyed = <I, E, R>(ctx: RouteContext, access: Access<I, E, R>) =>
  withCredential<I, E, R, Account.Principal>(ctx, access, Admission.admit)

/** A route where the key is optional (quote, track): none is an anonymous, address-limited call. */
export const optionallyKeyed = <I, E, R>(ctx: RouteContext, access: Access<I, E, R>) =>
  withCredential<I, E, R, Option.Option<Account.Principal>>(ctx, access, Admission.admitOptional)

/** Every value of a query parameter (the shape `Credentials`' place lists read). */
export const queryOf =
  (ctx: RouteContext) =>
  (name: string): ReadonlyArray<string> =>
    ctx.url.searchParams.getAll(name)

/**
 * The door of `/ops/v1`, checked by the handler before every route marked `operator`: the
 * operator token, compared in constant time. No token configured: the operator API does not
 * exist (404). `undefined` means the caller may go on.
 */
export const operatorDenial = ({ request, options }: RouteContext): Reply | undefined => {
  if (options.operatorToken === undefined) return failure(404, "Not found.")
  const header = request.headers.get("authorization")
  const m = header === null ? null : /^Bearer (\S+)$/i.exec(header)
  if (m === null)
    return failure(401, "An operator token is required.", { "www-authenticate": 'Bearer realm="waybill-ops"' })
  if (!constantTimeEqual(m[1]!, Redacted.value(options.operatorToken))) return failure(401, "Access denied.")
  return undefined
}
