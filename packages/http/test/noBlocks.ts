import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { IpBlocklist } from "@waybill/core"

/** An `IpBlocklist` in which no address is blocked: for handler tests that never block anyone. */
export const noBlocks = Layer.succeed(IpBlocklist, {
  find: () => Effect.succeed(Option.none()),
  put: () => Effect.void,
  remove: () => Effect.succeed(false),
  listActive: () => Effect.succeed({ items: [], hasMore: false })
})
