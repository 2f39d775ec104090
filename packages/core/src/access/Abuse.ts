/**
 * @module Abuse
 *
 * Automatic IP blocking (interface 5 rule 6; DECISIONS.md "Quote and track"): an address that,
 * within one window (default an hour), looks up the shipments of more than
 * `limits.abuse.maxUnrelatedAccounts` accounts without their key, or misses (unknown or
 * malformed tracking numbers, another customer's order on cancel) more than
 * `limits.abuse.maxMisses` times, is blocked through `IpBlocks`, for `blockSeconds[0]` the first
 * time and longer on each repeat (1 h, 6 h, 24 h by default).
 *
 * Counting goes through the `RateLimiter` port, so hosts sharing the SQL store share the counts:
 * a scraper spread over several hosts behind one balancer is still seen as one address.
 * Distinct accounts are counted with a marker per (address, account): only the first touch of an
 * account in a window moves the account counter. Both counters use the same epoch-aligned
 * window, so they reset together and the count is exact.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as ClientIp from "./ClientIp.js"
import { Metrics, WaybillConfig } from "../shared/index.js"
import * as IpBlocks from "./IpBlocklist.js"
import { RateLimiter } from "./RateLimiter.js"

/** Counter keys of one address (by `ClientIp.blockKey`). */
export const counterKeys = (ipKey: string) => ({
  misses: `abuse:miss:${ipKey}`,
  accounts: `abuse:accounts:${ipKey}`,
  touch: (customerNo: string) => `abuse:touch:${ipKey}:${customerNo}`
})

/**
 * The duration of the `strikes`-th block: `blockSeconds[strikes - 1]`, the last entry for every
 * later one.
 */
export const blockSecondsFor = (strikes: number, blockSeconds: ReadonlyArray<number>): number =>
  blockSeconds[Math.min(Math.max(1, strikes), blockSeconds.length) - 1] ?? 3600

/**
 * Blocks the address for its next strike's duration. An address already blocked is left alone,
 * so requests that were in flight when the threshold was crossed do not add strikes.
 */
const escalate = Effect.fnUntraced(function* (address: ClientIp.Address, reason: string) {
  const config = yield* WaybillConfig
  const list = yield* IpBlocks.IpBlocklist
  const now = yield* Clock.currentTimeMillis
  const previous = yield* list.find(ClientIp.blockKey(address))
  if (Option.isSome(previous) && previous.value.until > now) return
  const strikes = Option.match(previous, { onNone: () => 1, onSome: (p) => p.strikes + 1 })
  const seconds = blockSecondsFor(strikes, config.limits.abuse.blockSeconds)
  const block = yield* IpBlocks.block(ClientIp.format(address), seconds * 1000, reason).pipe(
    // A formatted address always parses back.
    Effect.catchTag("InvalidIp", (e) => Effect.die(e))
  )
  yield* Metric.increment(Metrics.addressesBlocked)
  yield* Effect.logWarning("waybill: address blocked", block.ipKey, reason, `strike ${block.strikes}`)
})

/**
 * Counts a miss of the client: a tracking number that is malformed, unknown, or (on cancel) not
 * the caller's. Unknown addresses are not counted.
 */
export const recordMiss = Effect.fnUntraced(function* (client: Option.Option<ClientIp.Address>) {
  if (Option.isNone(client)) return
  const config = yield* WaybillConfig
  const { abuse } = config.limits
  const limiter = yield* RateLimiter
  const keys = counterKeys(ClientIp.blockKey(client.value))
  const quota = yield* limiter.hit(keys.misses, abuse.maxMisses, abuse.windowSeconds * 1000)
  if (!quota.allowed) {
    yield* escalate(client.value, `abuse: more than ${abuse.maxMisses} misses in ${abuse.windowSeconds} s`)
  }
})

/**
 * Counts a look at a shipment of `customerNo` by a client without that account's key (no key,
 * or another account's). The first touch of each account in a window counts once.
 */
export const recordTouch = Effect.fnUntraced(function* (client: Option.Option<ClientIp.Address>, customerNo: string) {
  if (Option.isNone(client)) return
  const config = yield* WaybillConfig
  const { abuse } = config.limits
  const limiter = yield* RateLimiter
  const windowMs = abuse.windowSeconds * 1000
  const keys = counterKeys(ClientIp.blockKey(client.value))
  const marker = yield* limiter.hit(keys.touch(customerNo), 1, windowMs)
  if (marker.count !== 1) return
  const accounts = yield* limiter.hit(keys.accounts, abuse.maxUnrelatedAccounts, windowMs)
  if (!accounts.allowed) {
    yield* escalate(
      client.value,
      `abuse: shipments of more than ${abuse.maxUnrelatedAccounts} unrelated accounts in ${abuse.windowSeconds} s`
    )
  }
})

/**
 * Lifts an address's block and forgets its abuse counts, so an operator's unblock is not undone
 * by the next miss of a window that is still over the threshold. True when a block was lifted.
 */
export const forgive = Effect.fn("Abuse.forgive")(function* (ip: string) {
  const lifted = yield* IpBlocks.unblock(ip)
  const address = Option.getOrThrow(ClientIp.parse(ip)) // unblock has validated it
  const keys = counterKeys(ClientIp.blockKey(address))
  const limiter = yield* RateLimiter
  yield* limiter.reset(keys.misses)
  yield* limiter.reset(keys.accounts)
  return lifted
})
