/** The shape every route module exports. */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { ClientIp } from "@waybill/core"
import type { ConnectionInfo, HandlerOptions, HandlerRequirements } from "../Options.js"
import type { Reply, WaybillRequest } from "../Raw.js"

export interface RouteContext {
  readonly request: WaybillRequest
  readonly url: URL
  readonly info: ConnectionInfo
  readonly options: HandlerOptions
  /** The client address, from the socket or a trusted proxy's X-Forwarded-For. */
  readonly client: Option.Option<ClientIp.Address>
  /** Path parameters captured by a pattern route. */
  readonly params: ReadonlyArray<string>
  /** What the request's access log line reports besides the reply; filled in along the way. */
  readonly note: RequestNote
}

/** Facts a route learns that the access log reports (mutable: one per request). */
export interface RequestNote {
  /** The admitted caller's customer number. */
  customerNo: string | null
}

export interface Route {
  readonly methods: ReadonlyArray<string>
  /** An `/ops/v1` route: the handler checks the operator token (`operatorDenial`) before `run`. */
  readonly operator?: boolean
  readonly run: (ctx: RouteContext) => Effect.Effect<Reply, never, HandlerRequirements>
  /** Probes and scrapes (`/healthz`, `/readyz`, `/metrics`): their access log line is debug, not info. */
  readonly quiet?: boolean
  /** The answer to a method not in `methods`, for routes whose errors are not the JSON envelope. */
  readonly methodNotAllowed?: (method: string) => Reply
}
