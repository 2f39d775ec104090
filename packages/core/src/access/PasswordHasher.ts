/**
 * @module PasswordHasher
 *
 * Password hashing as a port. The decided hash is scrypt (N=2^17, r=8, p=1), which WebCrypto
 * does not offer, so core (pure, Web-standard APIs only) cannot compute it: the host provides it
 * (`@waybill/password-scrypt` over `node:crypto`, with a concurrency cap because each hash takes
 * 128 MiB and a noticeable slice of a CPU). Hashes are self-describing strings
 * (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`), so parameters can change without a migration.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"

export interface PasswordHasherShape {
  readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
  readonly verify: (password: Redacted.Redacted<string>, stored: string) => Effect.Effect<boolean>
}

/** Optional for the handler: without it provisioning is switched off. */
export class PasswordHasher extends Context.Tag("@waybill/core/PasswordHasher")<
  PasswordHasher,
  PasswordHasherShape
>() {}
