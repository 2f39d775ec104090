/**
 * Portal users for browser tests: a user with a known password put straight into the host's
 * store (hashed by scrypt as the host's `PasswordHasher` does: the harness's `run` has no hasher), and signing a page in through the real
 * sign-in form. Tests of the invite and reset flows make their users through the e-mails instead.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type { Page } from "playwright-core"
import { type Role, Ulid, UserStore } from "@waybill/core"
import { makeScrypt } from "@waybill/password-scrypt"
import type { TestAccount, TestHost } from "../harness.js"

/** A password the portal's policy accepts (long, not common, not the e-mail). */
export const PORTAL_PASSWORD = "lantern orchard 7 quietly"

export interface PortalUser {
  readonly account: TestAccount
  readonly userId: string
  readonly email: string
  readonly password: string
  readonly role: Role
}

/** A user of `account` (a new account when not given) who can sign in with {@link PORTAL_PASSWORD}. */
export const portalUser = async (
  h: TestHost,
  options: { readonly account?: TestAccount; readonly role?: Role; readonly email?: string } = {}
): Promise<PortalUser> => {
  const account = options.account ?? (await h.newAccount())
  const email = options.email ?? `user-${randomUUID().slice(0, 8)}@example.com`
  const role = options.role ?? "owner"
  const userId = await h.run(
    Effect.gen(function* () {
      const hasher = yield* makeScrypt()
      const store = yield* UserStore
      const userId = `usr_${yield* Ulid.make}`
      const passwordHash = yield* hasher.hash(Redacted.make(PORTAL_PASSWORD))
      const inserted = yield* store.insertUser({
        userId,
        customerNo: account.customerNo,
        email,
        role,
        passwordHash,
        passwordVersion: 1,
        passwordChangedAt: null,
        invitedBy: null,
        createdAt: Date.now()
      })
      if (!inserted) return yield* Effect.die(new Error(`a user ${email} already exists`))
      return userId
    })
  )
  return { account, userId, email, password: PORTAL_PASSWORD, role }
}

/** Signs `page` in through the sign-in form and waits for the portal's first page. */
export const signIn = async (page: Page, h: TestHost, user: Pick<PortalUser, "email" | "password">) => {
  await page.goto(`${h.url}/portal/signin`)
  await page.getByLabel("E-mail").fill(user.email)
  await page.getByLabel("Password", { exact: true }).fill(user.password)
  await Promise.all([
    page.waitForURL((url) => url.pathname !== "/portal/signin"),
    page.getByRole("button", { name: "Sign in" }).click()
  ])
}
