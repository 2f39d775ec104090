/**
 * @module @waybill/portal
 *
 * The Waybill account portal: server-rendered pages (Preact templates rendered to strings, no
 * client-side script) as one Fetch function a host mounts under `/portal/`, next to
 * `@waybill/http`'s handler. Customers sign in with e-mail and password and manage their keys,
 * webhooks, shipments and account; every action is a core use case.
 *
 * ```ts
 * const portal = createPortal(layer, { publicOrigin: "https://waybill.example.com" })
 * // route /portal and /portal/... to portal.handler, everything else to the API handler
 * ```
 */
export { createPortal, type ConnectionInfo, type WaybillPortal } from "./Portal.js"
export type { PortalOptions } from "./Options.js"
export {
  checkCsrf,
  coreSessions,
  sameOrigin,
  type PortalRequirements,
  type Role,
  type SignedIn,
  type SignInInput,
  type SignInRefused,
  type StorageFailure,
  type Viewer,
  type ViewerResolver
} from "./internal/session.js"
export { CONTENT_SECURITY_POLICY } from "./internal/headers.js"
