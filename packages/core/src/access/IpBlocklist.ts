/**
 * @module IpBlocklist
 *
 * Blocked client addresses (by `ClientIp.blockKey`), with an end time. Blocked addresses get the
 * interface's answers: cancel "IP address is blocked" (403), documents 403. Operators block and
 * unblock by hand; abuse detection (a later capability) adds blocks with growing durations,
 * which is what `strikes` counts.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ClientIp from "./ClientIp.js"
import { Metrics, Page, type StorageError } from "../shared/index.js"

export interface IpBlock {
  readonly ipKey: string
  /** Epoch ms; the block is over at this instant. */
  readonly until: number
  readonly reason: string
  readonly createdAt: number
  /** How many times this key has been blocked (for growing durations). */
  readonly strikes: number
}

export interface IpBlocklistShape {
  readonly find: (ipKey: string) => Effect.Effect<Option.Option<IpBlock>, StorageError>
  /** Inserts or replaces the block of `ipKey`. */
  readonly put: (block: IpBlock) => Effect.Effect<void, StorageError>
  /** True when a block was removed. */
  readonly remove: (ipKey: string) => Effect.Effect<boolean, StorageError>
  /** A page of the blocks still in force at `now`, newest first by `(createdAt, ipKey)`. */
  readonly listActive: (
    now: number,
    page: Page.Request<Page.TimeKey>
  ) => Effect.Effect<Page.Slice<IpBlock>, StorageError>
}

export class IpBlocklist extends Context.Tag("@waybill/core/IpBlocklist")<IpBlocklist, IpBlocklistShape>() {}

/** The calling address is blocked. */
export class IpBlocked extends Schema.TaggedError<IpBlocked>()("IpBlocked", {
  until: Schema.Number
}) {}

/** The operator gave something that is not an IP address. */
export class InvalidIp extends Schema.TaggedError<InvalidIp>()("InvalidIp", { input: Schema.String }) {}

const keyOf = (ip: string) =>
  Option.match(ClientIp.parse(ip), {
    onNone: () => Effect.fail(new InvalidIp({ input: ip })),
    onSome: (a) => Effect.succeed(ClientIp.blockKey(a))
  })

/** Fails with {@link IpBlocked} when the client (if known) is blocked now. */
export const check = (
  client: Option.Option<ClientIp.Address>
): Effect.Effect<void, IpBlocked | StorageError, IpBlocklist> =>
  Option.isNone(client) ? Effect.void : Effect.flatMap(IpBlocklist, (list) => checkIn(list, client))

/** {@link check} against a blocklist already in hand. */
export const checkIn = (
  list: IpBlocklistShape,
  client: Option.Option<ClientIp.Address>
): Effect.Effect<void, IpBlocked | StorageError> =>
  Option.isNone(client)
    ? Effect.void
    : Effect.flatMap(list.find(ClientIp.blockKey(client.value)), (found) =>
        Option.isNone(found)
          ? Effect.void
          : Effect.flatMap(Clock.currentTimeMillis, (now) =>
              found.value.until > now
                ? Effect.zipRight(
                    Metric.increment(Metrics.refusalsBy.ip_blocked),
                    Effect.fail(new IpBlocked({ until: found.value.until }))
                  )
                : Effect.void
            )
      )

/** Blocks an address (an IPv6 address blocks its /64) for `durationMs`. */
export const block = Effect.fn("IpBlocklist.block")(function* (ip: string, durationMs: number, reason: string) {
  const ipKey = yield* keyOf(ip)
  const list = yield* IpBlocklist
  const now = yield* Clock.currentTimeMillis
  const previous = yield* list.find(ipKey)
  const entry: IpBlock = {
    ipKey,
    until: now + durationMs,
    reason,
    createdAt: now,
    strikes: Option.match(previous, { onNone: () => 1, onSome: (p) => p.strikes + 1 })
  }
  yield* list.put(entry)
  return entry
})

/** Lifts a block; true when there was one. */
export const unblock = Effect.fn("IpBlocklist.unblock")(function* (ip: string) {
  const ipKey = yield* keyOf(ip)
  return yield* Effect.flatMap(IpBlocklist, (l) => l.remove(ipKey))
})

/** How blocks are paged: newest first by `(createdAt, ipKey)`. */
export const keying: Page.Keying<Page.TimeKey, IpBlock> = {
  schema: Page.TimeKeySchema,
  of: (b) => [b.createdAt, b.ipKey]
}

/** A page of the blocks in force now, newest first. */
export const active = Effect.fn("IpBlocklist.active")(function* (query: Page.Query) {
  const now = yield* Clock.currentTimeMillis
  const list = yield* IpBlocklist
  return yield* Page.read(query, keying, (page) => list.listActive(now, page))
})
