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
export * as PasswordPolicy from "./PasswordPolicy.js"
export * as User from "./User.js"
export * as Sessions from "./Sessions.js"
export * as Users from "./Users.js"
export * as Activity from "./Activity.js"
export { type AccountRecord, type ApiKeyRecord, type KeyMode, type Principal, type RateCard } from "./Account.js"
export { AccountStore } from "./AccountStore.js"
export {
  ActivityStore,
  type ActivityEntry,
  type ActivityFilter,
  type ActivityQuery,
  type ActivityStoreShape,
  type StatusFilter,
  type StatusRange
} from "./ActivityStore.js"
export { AccountNotFound } from "./Accounts.js"
export { PasswordHasher } from "./PasswordHasher.js"
export { RateLimiter } from "./RateLimiter.js"
export { UserStore, type UserStoreShape } from "./UserStore.js"
export {
  InvalidEmail,
  NotAllowed,
  PasswordRejected,
  RecentAuthRequired,
  SignInRefused,
  TokenInvalid,
  UserExists,
  UserNotFound,
  type OneTimeTokenRecord,
  type Role,
  type SessionRecord,
  type TokenPurpose,
  type UserRecord,
  type UserSummary,
  type Viewer
} from "./User.js"
export {
  IdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyScope,
  type IdempotencyStoreShape,
  type StoredAnswer
} from "./IdempotencyStore.js"
