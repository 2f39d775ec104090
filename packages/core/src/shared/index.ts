/**
 * @module shared
 *
 * The only door into `shared/`: other capability folders and the package entry import from here.
 */
export * as Config from "./Config.js"
export * as JsonInput from "./JsonInput.js"
export * as Look from "./Look.js"
export * as Page from "./Page.js"
export * as Ulid from "./Ulid.js"
export * as Errors from "./Errors.js"
export * as Metrics from "./Metrics.js"
export * as Tracing from "./Tracing.js"
export {
  type BusinessHours,
  type DocumentLimits,
  type Fees,
  type ProvisioningLimits,
  type RateLimitRule,
  type Routing,
  type ServiceOption,
  type VehicleOption,
  type VehicleRates,
  WaybillConfig,
  type WaybillConfigShape,
  provisioningDefaults
} from "./Config.js"
export { Entropy, type EntropyShape, decimalNumber, decimalNumberFrom, digits, uniformInt } from "./Entropy.js"
export {
  BadRequest,
  DuplicateKey,
  InvalidCredential,
  MissingCredential,
  StorageError,
  ValidationFailed,
  VersionConflict
} from "./Errors.js"
export { KeyRing, type KeySecret } from "./KeyRing.js"
export { Mailer, type InviteMessage, type MailerShape, type MailMessage, type PasswordResetMessage } from "./Mailer.js"
export { Transactor } from "./Transactor.js"
export { deleteInBatches } from "./Purge.js"
export { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "./internal/base64.js"
export { constantTimeEqual, toHex, utf8 } from "./internal/bytes.js"
