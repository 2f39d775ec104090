/**
 * @module Errors
 *
 * Domain errors are `Schema.TaggedError`s a client may learn about (through the HTTP error
 * table); infrastructure errors are `Data.TaggedError`s that never reach a client raw.
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"

/** No credential was supplied where one is required. */
export class MissingCredential extends Schema.TaggedError<MissingCredential>()("MissingCredential", {}) {}

/**
 * The credential was supplied but cannot be used: malformed, unknown, disabled, blank, or an
 * Authorization header that is not exactly `Bearer <token>`. The reason is for logs only; the
 * client always sees the same answer so keys cannot be probed.
 */
export class InvalidCredential extends Schema.TaggedError<InvalidCredential>()("InvalidCredential", {
  reason: Schema.Literal("malformed-header", "malformed-key", "unknown", "disabled", "blank", "duplicate", "session")
}) {}

/** The request cannot be interpreted at all (bad JSON, wrong shape, too many shipments). */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  message: Schema.String
}) {}

/** Every shipment of a request failed validation; `problems` name the fields. */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  problems: Schema.Array(Schema.String)
}) {}

/** A shipment changed between read and write (optimistic version check lost). */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("VersionConflict", {
  trackNo: Schema.String
}) {}

/** Storage failed (I/O, constraint the domain did not expect, driver error). Never shown raw. */
export class StorageError extends Data.TaggedError("StorageError")<{
  readonly operation: string
  readonly cause: unknown
}> {}

/** A unique key was already taken (tracking number, customer number). Callers retry. */
export class DuplicateKey extends Data.TaggedError("DuplicateKey")<{
  readonly what: "track_no" | "customer_no" | "key"
}> {}
