/**
 * @module Transactor
 *
 * Runs an Effect inside one storage transaction: every store call made by the effect joins it,
 * and a failure or defect rolls all of it back. Nested calls join the outer transaction.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StorageError } from "./Errors.js"

export interface TransactorShape {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}

export class Transactor extends Context.Tag("@waybill/core/Transactor")<Transactor, TransactorShape>() {}
