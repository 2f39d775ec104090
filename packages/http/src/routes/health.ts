/**
 * The operations routes outside `/api/v1`: `GET /healthz` (the process answers), `GET /readyz`
 * (the host's readiness checks) and `GET /metrics` (the host's metrics page, behind the operator
 * token). Probes are unauthenticated and tiny; none of them touches the database unless the
 * host's readiness hook does.
 */
import type { UnknownException } from "effect/Cause"
import * as Effect from "effect/Effect"
import type { ReadinessCheck } from "../Options.js"
import type { Reply } from "../Raw.js"
import { failure, json } from "../internal/respond.js"
import type { Route } from "./Route.js"

const noStore = { "cache-control": "no-store" }

/**
 * What kind of error a host hook rejected with, for the log: its class name only, since a
 * driver's message may quote a connection string with its password.
 */
const kindOf = (e: UnknownException): string => {
  const error = e.error
  return error instanceof Error ? error.name : typeof error
}

/** `GET /healthz`: 200 whenever the process can answer at all. */
export const healthzRoute: Route = {
  methods: ["GET"],
  quiet: true,
  run: () => Effect.succeed(json(200, { status: "ok" }, noStore))
}

/** The `/readyz` answer for a set of checks: 200 when every one is ok, else 503 naming the failures. */
export const readinessReply = (checks: ReadonlyArray<ReadinessCheck>): Reply => {
  const ready = checks.every((c) => c.ok)
  const body: Record<string, { ok: boolean; detail?: string }> = {}
  for (const c of checks) body[c.name] = c.detail === undefined ? { ok: c.ok } : { ok: c.ok, detail: c.detail }
  return json(ready ? 200 : 503, { status: ready ? "ready" : "not ready", checks: body }, noStore)
}

/**
 * `GET /readyz`: the host's checks. A hook that rejects is reported as a failed `readiness`
 * check without its message, which may say more than an unauthenticated caller should read.
 */
export const readyzRoute: Route = {
  methods: ["GET"],
  quiet: true,
  run: ({ options }) => {
    const hook = options.readiness
    if (hook === undefined) return Effect.succeed(readinessReply([]))
    return Effect.tryPromise(hook).pipe(
      Effect.map(readinessReply),
      Effect.catchAll((e) =>
        Effect.logWarning("readiness hook failed", kindOf(e)).pipe(
          Effect.as(readinessReply([{ name: "readiness", ok: false, detail: "the readiness check failed" }]))
        )
      )
    )
  }
}

/** `GET /metrics` (operator token checked by the handler): the host's rendered metrics. */
export const metricsRoute: Route = {
  methods: ["GET"],
  operator: true,
  quiet: true,
  run: ({ options }) => {
    const page = options.metrics
    if (page === undefined) return Effect.succeed(failure(404, "Not found."))
    return Effect.tryPromise(page).pipe(
      Effect.map(
        (m): Reply => ({
          status: 200,
          headers: { "content-type": m.contentType, "cache-control": "no-store" },
          body: m.body
        })
      ),
      Effect.catchAll((e) =>
        Effect.logError("metrics hook failed", kindOf(e)).pipe(Effect.as(failure(500, "Internal error.")))
      )
    )
  }
}
