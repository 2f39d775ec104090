/**
 * @module IdempotencyStoreKysely
 *
 * `IdempotencyStore` over Kysely: `waybill_idempotency_keys`, one row per account, key mode and
 * key. A claim is one `insert ... on conflict do nothing` on the primary key, so of two hosts
 * claiming one key exactly one inserts; every later write names the claim's token in its
 * `where`, so it is a compare-and-set that a taken-over claim cannot pass. No statement raises a
 * unique violation, so none of them aborts a PostgreSQL transaction they run in.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Connection } from "./internal/connection.js"
import { StorageError, type IdempotencyRecord, type IdempotencyStoreShape } from "./internal/core.js"
import type { IdempotencyKeysTable } from "./Tables.js"

type Row = { readonly [K in keyof IdempotencyKeysTable]: unknown }

const toRecord = (row: Row): IdempotencyRecord => ({
  scope: { customerNo: String(row.customer_no), mode: row.mode === "live" ? "live" : "test" },
  key: String(row.idem_key),
  fingerprint: String(row.fingerprint),
  token: String(row.token),
  createdAt: Number(row.created_at),
  lockedUntil: Number(row.locked_until),
  expiresAt: Number(row.expires_at),
  answer:
    row.status === null || row.status === undefined
      ? Option.none()
      : Option.some({
          status: Number(row.status),
          headers: JSON.parse(String(row.headers ?? "{}")) as Record<string, string>,
          body: String(row.body ?? "")
        })
})

/** The columns a claim writes, by a first insert or by taking over a lapsed row: no answer yet. */
const claimColumns = (claim: Parameters<IdempotencyStoreShape["claim"]>[0]) => ({
  fingerprint: claim.fingerprint,
  token: claim.token,
  created_at: claim.createdAt,
  locked_until: claim.lockedUntil,
  expires_at: claim.expiresAt,
  status: null,
  headers: null,
  body: null
})

/** `IdempotencyStore` over Kysely. */
export const makeIdempotencyStore = (conn: Connection): IdempotencyStoreShape => {
  const { first, write } = conn
  const find = (customerNo: string, mode: string, key: string) =>
    first("idempotency.find", (c) =>
      c
        .selectFrom("waybill_idempotency_keys")
        .selectAll()
        .where("customer_no", "=", customerNo)
        .where("mode", "=", mode)
        .where("idem_key", "=", key)
    )

  const claimKey = Effect.fnUntraced(function* (claim: Parameters<IdempotencyStoreShape["claim"]>[0]) {
    // The row found by a lost insert may be deleted (released, purged) before it is read:
    // then the key is free again and the insert is tried once more.
    for (let round = 0; round < 3; round++) {
      const inserted = yield* write("idempotency.claim", (c) =>
        c
          .insertInto("waybill_idempotency_keys")
          .values({
            customer_no: claim.scope.customerNo,
            mode: claim.scope.mode,
            idem_key: claim.key,
            ...claimColumns(claim)
          })
          .onConflict((oc) => oc.columns(["customer_no", "mode", "idem_key"]).doNothing())
      )
      if (inserted > 0) return Option.none()
      const row = yield* find(claim.scope.customerNo, claim.scope.mode, claim.key)
      if (row !== undefined) return Option.some(toRecord(row))
    }
    return yield* new StorageError({
      operation: "idempotency.claim",
      cause: new Error("the key's row kept vanishing between insert and read")
    })
  })

  return {
    claim: (claim) => claimKey(claim),

    takeOver: (claim, previousToken) =>
      write("idempotency.take-over", (c) =>
        c
          .updateTable("waybill_idempotency_keys")
          .set(claimColumns(claim))
          .where("customer_no", "=", claim.scope.customerNo)
          .where("mode", "=", claim.scope.mode)
          .where("idem_key", "=", claim.key)
          .where("token", "=", previousToken)
          // Re-checked on the row as it is when the update runs (PostgreSQL re-evaluates the
          // condition after waiting for a concurrent writer), so an answer stored meanwhile wins.
          .where((eb) =>
            eb.or([
              eb("expires_at", "<=", claim.createdAt),
              eb.and([eb("status", "is", null), eb("locked_until", "<=", claim.createdAt)])
            ])
          )
      ).pipe(Effect.map((n) => n > 0)),

    complete: (scope, key, token, answer) =>
      write("idempotency.complete", (c) =>
        c
          .updateTable("waybill_idempotency_keys")
          .set({ status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body })
          .where("customer_no", "=", scope.customerNo)
          .where("mode", "=", scope.mode)
          .where("idem_key", "=", key)
          .where("token", "=", token)
          .where("status", "is", null)
      ).pipe(Effect.map((n) => n > 0)),

    release: (scope, key, token) =>
      write("idempotency.release", (c) =>
        c
          .deleteFrom("waybill_idempotency_keys")
          .where("customer_no", "=", scope.customerNo)
          .where("mode", "=", scope.mode)
          .where("idem_key", "=", key)
          .where("token", "=", token)
          .where("status", "is", null)
      ).pipe(Effect.asVoid),

    deleteExpired: (now, limit) =>
      write("idempotency.delete-expired", (c) =>
        c
          .deleteFrom("waybill_idempotency_keys")
          // A bounded batch: one huge delete would hold SQLite's lock (and the batch) too long.
          .where(({ eb, refTuple, selectFrom }) =>
            eb(
              refTuple("customer_no", "mode", "idem_key"),
              "in",
              selectFrom("waybill_idempotency_keys as k")
                .select(["k.customer_no", "k.mode", "k.idem_key"])
                .where("k.expires_at", "<=", now)
                .limit(limit)
                .$asTuple("customer_no", "mode", "idem_key")
            )
          )
          .where("expires_at", "<=", now)
      )
  }
}
