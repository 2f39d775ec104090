/**
 * `/ops/v1/accounts/{customer_no}/...`: account administration, the same core programs as the
 * CLI (`key ...`, `account payment ...`).
 *
 * `/ops/v1/accounts/{customer_no}/payment/`: an account's payment enablement with the configured
 * provider, the record `registered-with-<provider>-check` answers from when the host has no
 * payment provider adapter of its own (`Provisioning.PaymentRegistry`).
 *
 * - `GET`    the enablement: `{ customer_no, provider, enabled, enabled_at }`
 * - `PUT`    records it (idempotent: the first time recorded stays)
 * - `DELETE` clears it (idempotent)
 *
 * `POST /ops/v1/accounts/{customer_no}/keys/{live|test}/{rotate|disable|enable}/`: replaces,
 * stops or restores an API key. Only the rotate answer carries a key (the new one, once), and it
 * is `Cache-Control: no-store`.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Accounts, Provisioning } from "@waybill/core"
import { storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import type { Route } from "./Route.js"

const view = (s: Provisioning.PaymentStatus) => ({
  customer_no: s.customerNo,
  provider: s.provider,
  enabled: s.enabled,
  enabled_at: s.enabledAt === null ? null : new Date(s.enabledAt).toISOString()
})

export const opsPaymentRoute: Route = {
  methods: ["GET", "PUT", "DELETE"],
  operator: true,
  run: (ctx) => {
    const customerNo = ctx.params[0]!
    const method = ctx.request.method
    const program =
      method === "GET"
        ? Provisioning.paymentStatus(customerNo)
        : Provisioning.setPaymentEnablement({ customerNo, enabled: method === "PUT" })
    return program.pipe(
      Effect.map((s) => success(view(s))),
      Effect.catchTags({
        AccountNotFound: () => Effect.succeed(failure(404, "No account has this customer number.")),
        PaymentRegistryExternal: () =>
          Effect.succeed(
            failure(409, "Payment enablement comes from this server's payment provider; set it up with the provider.")
          ),
        ...storageErrors
      })
    )
  }
}

const KEY_ACTIONS = ["rotate", "disable", "enable"] as const

/** `/ops/v1/accounts/{customer_no}/keys/{live|test}/{rotate|disable|enable}/` */
export const opsKeyRoute: Route = {
  methods: ["POST"],
  operator: true,
  run: (ctx) => {
    const [customerNo, mode, action] = [ctx.params[0]!, ctx.params[1]!, ctx.params[2]!]
    if (mode !== "live" && mode !== "test") return Effect.succeed(failure(404, "Unknown key mode; one of: live, test."))
    if (!KEY_ACTIONS.some((a) => a === action))
      return Effect.succeed(failure(404, `Unknown key action; one of: ${KEY_ACTIONS.join(", ")}.`))
    const program =
      action === "rotate"
        ? Effect.map(Accounts.rotateKey(customerNo, mode), (rotated) =>
            success(
              {
                customer_no: customerNo,
                mode,
                key: Redacted.value(rotated.key),
                generation: rotated.record.generation
              },
              200,
              { "cache-control": "no-store" }
            )
          )
        : Effect.map(Accounts.setKeyStatus(customerNo, mode, action === "disable" ? "disabled" : "active"), (record) =>
            success({ customer_no: customerNo, mode, status: record.status, generation: record.generation })
          )
    return program.pipe(
      Effect.catchTags({
        AccountNotFound: () => Effect.succeed(failure(404, "No account has this customer number.")),
        // A fresh key collided with a stored one on every retry: vanishingly rare, and retryable.
        DuplicateKey: () => Effect.succeed(failure(503, "The service is busy. Retry.", { "retry-after": "1" })),
        ...storageErrors
      })
    )
  }
}
