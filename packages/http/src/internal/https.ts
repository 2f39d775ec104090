/**
 * Whether a request arrived over HTTPS (DECISIONS.md): the URL scheme the server adapter built
 * (`https:` for TLS sockets), or `X-Forwarded-Proto: https` from a trusted proxy only, so a
 * client cannot claim HTTPS by sending the header itself. With several values (`https, http`)
 * the last one counts: it is the one the proxy next to us wrote.
 */
import * as Option from "effect/Option"
import { ClientIp } from "@waybill/core"
import type { RouteContext } from "../routes/Route.js"

const parsed = new WeakMap<ReadonlyArray<string>, ReadonlyArray<ClientIp.Cidr>>()

const trustedOf = (list: ReadonlyArray<string> | undefined): ReadonlyArray<ClientIp.Cidr> => {
  if (list === undefined || list.length === 0) return []
  let cidrs = parsed.get(list)
  if (cidrs === undefined) {
    cidrs = list.flatMap((entry) => Option.toArray(ClientIp.parseCidr(entry)))
    parsed.set(list, cidrs)
  }
  return cidrs
}

/** Whether the peer is one of the host's trusted proxies. */
const fromTrustedProxy = (ctx: Pick<RouteContext, "info" | "options">): boolean => {
  const peer = ctx.info.remoteAddress
  if (peer === undefined) return false
  const address = ClientIp.parse(peer)
  if (Option.isNone(address)) return false
  return trustedOf(ctx.options.trustedProxies).some((c) => ClientIp.contains(c, address.value))
}

/** The request came over HTTPS: its own scheme, or a trusted proxy says so. */
export const isHttps = (ctx: Pick<RouteContext, "request" | "url" | "info" | "options">): boolean => {
  if (ctx.url.protocol === "https:") return true
  const header = ctx.request.headers.get("x-forwarded-proto")
  if (header === null || !fromTrustedProxy(ctx)) return false
  const last = header.split(",").at(-1)?.trim().toLowerCase()
  return last === "https"
}

/**
 * The public origin for links the API returns: the host's `baseUrl`, else the request's origin
 * (as `https` when a trusted proxy terminated TLS for it).
 */
export const publicBase = (ctx: Pick<RouteContext, "request" | "url" | "info" | "options">): string => {
  if (ctx.options.baseUrl !== undefined) return ctx.options.baseUrl.replace(/\/+$/, "")
  return ctx.url.protocol !== "https:" && isHttps(ctx) ? `https://${ctx.url.host}` : ctx.url.origin
}
