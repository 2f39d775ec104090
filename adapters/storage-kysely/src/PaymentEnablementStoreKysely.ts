/**
 * @module PaymentEnablementStoreKysely
 *
 * `Provisioning.PaymentEnablementStore` over Kysely: the payment enablements operators record,
 * one row per customer and provider in `waybill_payment_enablements` (no row: not enabled).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Connection } from "./internal/connection.js"
import type { PaymentEnablementStoreShape } from "./internal/core.js"

/** `PaymentEnablementStore` over Kysely. */
export const makePaymentEnablementStore = (conn: Connection): PaymentEnablementStoreShape => {
  const { first, write } = conn
  return {
    find: (customerNo, provider) =>
      first("payment_enablements.find", (c) =>
        c
          .selectFrom("waybill_payment_enablements")
          .selectAll()
          .where("customer_no", "=", customerNo)
          .where("provider", "=", provider)
      ).pipe(
        Effect.map((row) =>
          Option.map(Option.fromNullable(row), (r) => ({
            customerNo: r.customer_no,
            provider: r.provider,
            enabledAt: Number(r.enabled_at)
          }))
        )
      ),
    put: (e) =>
      write("payment_enablements.put", (c) =>
        c
          .insertInto("waybill_payment_enablements")
          .values({ customer_no: e.customerNo, provider: e.provider, enabled_at: e.enabledAt })
          // Recording it again keeps the first time it was recorded.
          .onConflict((oc) => oc.columns(["customer_no", "provider"]).doNothing())
      ).pipe(Effect.asVoid),
    remove: (customerNo, provider) =>
      write("payment_enablements.remove", (c) =>
        c
          .deleteFrom("waybill_payment_enablements")
          .where("customer_no", "=", customerNo)
          .where("provider", "=", provider)
      ).pipe(Effect.map((n) => n > 0))
  }
}
