/** The shape every route module exports. */
import type * as Effect from "effect/Effect"
import type { ConnectionInfo, HandlerOptions, HandlerRequirements } from "../Handler.js"

export interface RouteContext {
  readonly request: Request
  readonly url: URL
  readonly info: ConnectionInfo
  readonly options: HandlerOptions
  /** Path parameters captured by a pattern route. */
  readonly params: ReadonlyArray<string>
}

export interface Route {
  readonly methods: ReadonlyArray<string>
  readonly run: (ctx: RouteContext) => Effect.Effect<Response, never, HandlerRequirements>
}
