/**
 * @module access
 *
 * The only door into `access/`: other capability folders and the package entry import from here.
 */
export * as Account from "./Account.js"
export * as ApiKey from "./ApiKey.js"
export * as Accounts from "./Accounts.js"
export * as Credentials from "./Credentials.js"
export * as Admission from "./Admission.js"
export * as ClientIp from "./ClientIp.js"
export * as IpBlocklist from "./IpBlocklist.js"
export * as Abuse from "./Abuse.js"
export * as Idempotency from "./Idempotency.js"
export { type AccountRecord, type ApiKeyRecord, type KeyMode, type Principal, type RateCard } from "./Account.js"
export { AccountStore } from "./AccountStore.js"
export { AccountNotFound } from "./Accounts.js"
export { PasswordHasher } from "./PasswordHasher.js"
export { RateLimiter } from "./RateLimiter.js"
export {
  IdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyScope,
  type IdempotencyStoreShape,
  type StoredAnswer
} from "./IdempotencyStore.js"
