/**
 * `/ops/v1/accounts/{customer_no}/payment/`: an account's payment enablement with the configured
 * provider, the record `registered-with-<provider>-check` answers from when the host has no
 * payment provider adapter of its own (`Provisioning.PaymentRegistry`).
 *
 * - `GET`    the enablement: `{ customer_no, provider, enabled, enabled_at }`
 * - `PUT`    records it (idempotent: the first time recorded stays)
 * - `DELETE` clears it (idempotent)
 */
import * as Effect from "effect/Effect"
import { Provisioning } from "@waybill/core"
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
