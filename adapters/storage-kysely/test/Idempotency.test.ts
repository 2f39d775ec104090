/**
 * Core's `Idempotency.run` over the real stores, on every target: what commits and what rolls
 * back with the stored answer. The HTTP behaviour (replays, 409, 422) is tested end to end in
 * the example host; these cases need a handle on the work's own writes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { Entropy, Idempotency, IdempotencyStore, IpBlocklist, type StoredAnswer } from "@waybill/core"
import { Fixtures } from "@waybill/testkit"
import { sql } from "kysely"
import pg from "pg"
import { migrate, postgresEngine, StorageKysely } from "../src/index.js"
import { postgresUrl, storageLayer, targets } from "./dialects.js"

const principal = { account: Fixtures.account({ customerNo: "1000001" }), key: Fixtures.apiKey({ mode: "live" }) }
const scope = { customerNo: "1000001", mode: "live" } as const
const ok: StoredAnswer = { status: 200, headers: { "content-type": "application/json" }, body: '{"ok":true}' }

/** The work: one visible write (an IP block named after `label`), then the answer. */
const blockThen = (label: string, answer: StoredAnswer) =>
  Effect.flatMap(IpBlocklist, (blocks) =>
    Effect.as(blocks.put({ ipKey: label, until: 10_000, reason: "test", createdAt: 0, strikes: 1 }), answer)
  )
const blocked = (label: string) =>
  Effect.flatMap(IpBlocklist, (blocks) => blocks.find(label)).pipe(Effect.map(Option.isSome))
const request = (key: string) => ({ principal, key, fingerprint: "f".repeat(64) })
const asAnswer = (exit: Exit.Exit<StoredAnswer, unknown>) =>
  Effect.succeed(Exit.isSuccess(exit) ? exit.value : { status: 400, headers: {}, body: "failed" })

for (const target of targets) {
  describe(`Idempotency.run over storage-kysely: ${target.name}`, () => {
    const layer = () => Layer.merge(storageLayer(target), Entropy.webCrypto)

    it.effect("runs once: the answer commits with the work, a retry replays it without running", () =>
      Effect.gen(function* () {
        const first = yield* Idempotency.run(request("once"), blockThen("once-1", ok), asAnswer)
        expect(first).toEqual({ answer: ok, replayed: false })
        const again = yield* Idempotency.run(request("once"), blockThen("once-2", ok), asAnswer)
        expect(again).toEqual({ answer: ok, replayed: true })
        expect(yield* blocked("once-1")).toBe(true)
        expect(yield* blocked("once-2")).toBe(false)
        const other = yield* Effect.flip(
          Idempotency.run({ ...request("once"), fingerprint: "0".repeat(64) }, blockThen("once-3", ok), asAnswer)
        )
        expect(other._tag).toBe("IdempotencyKeyMismatch")
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a 5xx answer rolls the work back, stores nothing, and frees the key", () =>
      Effect.gen(function* () {
        const unavailable = { status: 503, headers: {}, body: "later" }
        const first = yield* Idempotency.run(request("5xx"), blockThen("5xx-1", unavailable), asAnswer)
        expect(first).toEqual({ answer: unavailable, replayed: false })
        expect(yield* blocked("5xx-1")).toBe(false)
        const retry = yield* Idempotency.run(request("5xx"), blockThen("5xx-2", ok), asAnswer)
        expect(retry).toEqual({ answer: ok, replayed: false })
        expect(yield* blocked("5xx-2")).toBe(true)
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a failure answered below 500 commits the work's writes with its stored answer", () =>
      Effect.gen(function* () {
        const failing = Effect.zipRight(blockThen("4xx-1", ok), Effect.fail("refused"))
        const first = yield* Idempotency.run(request("4xx"), failing, asAnswer)
        expect(first.answer.status).toBe(400)
        expect(yield* blocked("4xx-1")).toBe(true)
        const again = yield* Idempotency.run(request("4xx"), blockThen("4xx-2", ok), asAnswer)
        expect(again).toEqual({ answer: first.answer, replayed: true })
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a defect rolls back and frees the key", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          Idempotency.run(request("defect"), Effect.zipRight(blockThen("defect-1", ok), Effect.die("bug")), asAnswer)
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* blocked("defect-1")).toBe(false)
        expect(yield* Idempotency.run(request("defect"), blockThen("defect-2", ok), asAnswer)).toEqual({
          answer: ok,
          replayed: false
        })
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a claim taken over while the work runs: the work rolls back and answers in progress", () =>
      Effect.gen(function* () {
        const store = yield* IdempotencyStore
        // Inside the work, another host takes the key over (its claim's lock ran out).
        const stolen = Effect.gen(function* () {
          const mine = Option.getOrThrow(
            yield* store.claim({
              scope,
              key: "stolen",
              fingerprint: "f".repeat(64),
              token: "probe",
              createdAt: 0,
              lockedUntil: 0,
              expiresAt: 0
            })
          )
          const taken = yield* store.takeOver(
            { ...mine, token: "other-host", createdAt: mine.lockedUntil, lockedUntil: mine.lockedUntil + 60_000 },
            mine.token
          )
          expect(taken).toBe(true)
          return yield* blockThen("stolen-1", ok)
        })
        const lost = yield* Effect.flip(Idempotency.run(request("stolen"), stolen, asAnswer))
        expect(lost._tag).toBe("IdempotencyKeyInProgress")
        expect(yield* blocked("stolen-1")).toBe(false)
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a stale claim of a dead host is taken over once its lock runs out", () =>
      Effect.gen(function* () {
        const store = yield* IdempotencyStore
        yield* store.claim({
          scope,
          key: "stale",
          fingerprint: "f".repeat(64),
          token: "dead-host",
          createdAt: -Idempotency.CLAIM_LOCK_MS,
          lockedUntil: 1,
          expiresAt: Idempotency.RETENTION_MS
        })
        const busy = yield* Effect.flip(Idempotency.run(request("stale"), blockThen("stale-1", ok), asAnswer))
        expect(busy._tag).toBe("IdempotencyKeyInProgress")
        expect(yield* blocked("stale-1")).toBe(false)
        yield* TestClock.adjust("1 millis")
        const later = yield* Idempotency.run(request("stale"), blockThen("stale-2", ok), asAnswer)
        expect(later).toEqual({ answer: ok, replayed: false })
        expect(yield* blocked("stale-2")).toBe(true)
      }).pipe(Effect.provide(layer()))
    )
  })
}

/**
 * Two hosts on one PostgreSQL database (two pools on one schema), racing with one key, in any
 * interleaving (property): exactly one request runs the work; every other one is a replay of its
 * answer or "in progress".
 */
for (const target of targets.filter((t) => t.dialect === "postgres")) {
  describe(`Idempotency.run, two hosts racing: ${target.name}`, () => {
    it.scoped("property: duplicates on two hosts, in any interleaving, run the work exactly once", () =>
      Effect.gen(function* () {
        const first = yield* target.open()
        yield* migrate(first)
        const { rows } = yield* Effect.promise(() =>
          sql<{ schema: string }>`select current_schema() as schema`.execute(first.kysely)
        )
        const schema = rows[0]!.schema
        const second = yield* Effect.acquireRelease(
          Effect.sync(() =>
            postgresEngine(new pg.Pool({ connectionString: postgresUrl, options: `-c search_path=${schema}`, max: 10 }))
          ),
          (engine) => Effect.promise(() => engine.close())
        )
        const hosts = [first, second].map((engine) => Layer.merge(StorageKysely.layer(engine), Entropy.webCrypto))
        let round = 0
        const property = fc.asyncProperty(
          // Per request: which host serves it, and how many scheduler turns it waits first.
          fc.array(fc.record({ host: fc.integer({ min: 0, max: 1 }), turns: fc.integer({ min: 0, max: 5 }) }), {
            minLength: 2,
            maxLength: 12
          }),
          (plan) =>
            Effect.runPromise(
              Effect.gen(function* () {
                const key = `race-${round++}`
                const outcomes = yield* Effect.all(
                  plan.map(({ host, turns }, i) =>
                    Effect.zipRight(
                      Effect.repeatN(Effect.yieldNow(), turns),
                      Idempotency.run(request(key), blockThen(`${key}-${i}`, ok), asAnswer).pipe(
                        Effect.either,
                        Effect.provide(hosts[host]!)
                      )
                    )
                  ),
                  { concurrency: "unbounded" }
                )
                const ran = outcomes.filter((o) => o._tag === "Right" && !o.right.replayed)
                expect(ran).toHaveLength(1)
                for (const o of outcomes) {
                  if (o._tag === "Left") expect(o.left._tag).toBe("IdempotencyKeyInProgress")
                  else expect(o.right.answer).toEqual(ok)
                }
                const written = yield* Effect.promise(() =>
                  first.kysely
                    .selectFrom("waybill_ip_blocks")
                    .select("ip_key")
                    .where("ip_key", "like", `${key}-%`)
                    .execute()
                )
                expect(written).toHaveLength(1)
              })
            )
        )
        yield* Effect.promise(() => fc.assert(property, { numRuns: 30 }))
      })
    )
  })
}
