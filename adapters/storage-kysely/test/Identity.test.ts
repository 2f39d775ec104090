/**
 * The identity use cases (`Sessions`, `Users`) over the real storage on every target: sign-in
 * and its limits, session timeouts, invitations, resets, password changes and removal. The
 * password hasher is a fast fake (the real one is scrypt, tested in the host) that counts
 * verifications, so the timing rule (a hash is verified for unknown e-mails too) is checked.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import {
  AccountStore,
  Entropy,
  Mailer,
  type MailMessage,
  PasswordHasher,
  Sessions,
  type UserRecord,
  UserStore,
  Users
} from "@waybill/core"
import type { Kysely } from "kysely"
import { migrate, StorageKysely } from "../src/index.js"
import { Migrations } from "../src/index.js"
import { storageLayer, targets } from "./dialects.js"
import { Migrator, sql } from "kysely"

const T0 = 1_800_000_000_000
const GOOD = Redacted.make("a long and unusual passphrase 7")
const LINK_BASE = "https://portal.example.test"

const world = (target: (typeof targets)[number]) => {
  const mails: Array<MailMessage> = []
  const verifications = { n: 0 }
  const layer = Layer.mergeAll(
    storageLayer(target),
    Entropy.webCrypto,
    Layer.succeed(Mailer, { send: (m) => Effect.sync(() => void mails.push(m)) }),
    Layer.succeed(PasswordHasher, {
      hash: (p) => Effect.succeed(`fake$${Redacted.value(p)}`),
      verify: (p, stored) =>
        Effect.sync(() => {
          verifications.n += 1
          return stored === `fake$${Redacted.value(p)}`
        })
    })
  )
  const run = <A, E>(
    program: Effect.Effect<A, E, Layer.Layer.Success<typeof layer>>
  ): Effect.Effect<A, E | Layer.Layer.Error<typeof layer>> =>
    Effect.provide(Effect.zipRight(TestClock.setTime(T0), program), layer)
  return { mails, verifications, run }
}

let n = 0
const account = (customerNo: string) =>
  Effect.flatMap(AccountStore, (s) =>
    s.insertAccount({
      customerNo,
      name: "Acme Freight",
      cancelMode: "local",
      rateCard: null,
      ipAllowlist: [],
      createdAt: T0
    })
  )

/** An account with an owner user whose password is {@link GOOD}. */
const owner = Effect.gen(function* () {
  n += 1
  const customerNo = `${5_000_000 + n * 7 + Math.floor(Math.random() * 1000)}`
  yield* account(customerNo)
  const user: UserRecord = {
    userId: `usr_owner${n}_${customerNo}`,
    customerNo,
    email: `Owner.${n}.${customerNo}@acme-freight.com`,
    role: "owner",
    passwordHash: `fake$${Redacted.value(GOOD)}`,
    passwordVersion: 1,
    passwordChangedAt: T0,
    invitedBy: null,
    createdAt: T0 - 1000
  }
  yield* Effect.flatMap(UserStore, (s) => s.insertUser(user))
  return user
})

const signIn = (email: string, password = GOOD, clientIp = "203.0.113.7") =>
  Sessions.signIn({ email, password, clientIp })

const linkToken = (m: MailMessage | undefined) => {
  if (m === undefined || (m._tag !== "Invite" && m._tag !== "PasswordReset")) throw new Error("no link mail")
  return Redacted.make(new URL(Redacted.value(m.link)).searchParams.get("token")!)
}

const failure = <A, E>(exit: Exit.Exit<A, E>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const e = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  return e as { _tag: string; reason?: string; message?: string }
}

for (const target of targets) {
  describe(`identity use cases (storage-kysely: ${target.name})`, () => {
    it.scoped("signs in the owner: a 256-bit token stored only as its SHA-256, a CSRF token, a live session", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          const { token, viewer } = yield* signIn(u.email.toUpperCase())
          const raw = Redacted.value(token)
          expect(raw).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(viewer).toMatchObject({ userId: u.userId, customerNo: u.customerNo, role: "owner", createdAt: T0 })
          expect(viewer.sessionId).toBe(yield* Sessions.hashToken(raw))
          expect(viewer.sessionId).not.toContain(raw)
          expect(Redacted.value(viewer.csrfToken)).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(Sessions.checkCsrf(viewer, Redacted.value(viewer.csrfToken))).toBe(true)
          const seen = Option.getOrThrow(yield* Sessions.authenticate(token))
          expect(seen.sessionId).toBe(viewer.sessionId)
          // A second sign-in is a new session with a new token.
          const again = yield* signIn(u.email)
          expect(Redacted.value(again.token)).not.toBe(raw)
          yield* Sessions.signOut(token)
          expect(Option.isNone(yield* Sessions.authenticate(token))).toBe(true)
          expect(Option.isSome(yield* Sessions.authenticate(again.token))).toBe(true)
          expect(Option.isNone(yield* Sessions.authenticate(Redacted.make("not-a-token")))).toBe(true)
        })
      )
    })

    it.scoped(
      "one generic refusal for a wrong e-mail, a wrong password and a user without a password; a hash verified each time",
      () => {
        const w = world(target)
        return w.run(
          Effect.gen(function* () {
            const u = yield* owner
            yield* Users.invite({
              customerNo: u.customerNo,
              email: `new.${u.customerNo}@acme-freight.com`,
              linkBase: LINK_BASE
            })
            const attempts = [
              signIn(`nobody.${u.customerNo}@acme-freight.com`),
              signIn(u.email, Redacted.make("wrong password here")),
              signIn(`new.${u.customerNo}@acme-freight.com`)
            ]
            const reasons: Array<string | undefined> = []
            for (const attempt of attempts) {
              const before = w.verifications.n
              const e = failure(yield* Effect.exit(attempt))
              expect(e._tag).toBe("SignInRefused")
              expect(e.message).toBe("E-mail or password is incorrect.")
              expect(w.verifications.n).toBe(before + 1)
              reasons.push(e.reason)
            }
            expect(reasons).toEqual(["unknown-email", "wrong-password", "no-password"])
          })
        )
      }
    )

    it.scoped("10 failures lock the sign-in name for 15 minutes, the right password included; then it works", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          for (let i = 0; i < 10; i++) {
            expect(failure(yield* Effect.exit(signIn(u.email, Redacted.make(`wrong password ${i}`)))).reason).toBe(
              "wrong-password"
            )
          }
          const locked = failure(yield* Effect.exit(signIn(u.email, GOOD, "198.51.100.9")))
          expect([locked._tag, locked.reason, locked.message]).toEqual([
            "SignInRefused",
            "locked",
            "E-mail or password is incorrect."
          ])
          yield* TestClock.adjust(14 * 60_000)
          expect(failure(yield* Effect.exit(signIn(u.email))).reason).toBe("locked")
          yield* TestClock.adjust(60_000)
          expect(Option.isSome(yield* Effect.option(signIn(u.email)))).toBe(true)
        })
      )
    })

    it.scoped("50 failures from one address lock that address for every name, unknown names counted too", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          for (let i = 0; i < 50; i++) {
            yield* Effect.exit(signIn(`guess${i}.${u.customerNo}@acme-freight.com`, GOOD, "2001:db8:1:2::5"))
          }
          // Another address in the same /64 is the same address.
          expect(failure(yield* Effect.exit(signIn(u.email, GOOD, "2001:db8:1:2::99"))).reason).toBe("locked")
          expect(Option.isSome(yield* Effect.option(signIn(u.email, GOOD, "2001:db8:1:3::1")))).toBe(true)
        })
      )
    })

    it.scoped(
      "idle timeout after 30 minutes, absolute after 12 hours; lastSeenAt written at most once a minute",
      () => {
        const w = world(target)
        return w.run(
          Effect.gen(function* () {
            const u = yield* owner
            const store = yield* UserStore
            const idle = yield* signIn(u.email)
            yield* TestClock.adjust(30 * 60_000)
            expect(Option.isNone(yield* Sessions.authenticate(idle.token))).toBe(true)
            // Dead sessions are deleted.
            expect(Option.isNone(yield* store.findSession(idle.viewer.sessionId))).toBe(true)

            const busy = yield* signIn(u.email)
            yield* TestClock.adjust(30_000)
            yield* Sessions.authenticate(busy.token)
            const seen = Option.getOrThrow(yield* store.findSession(busy.viewer.sessionId)).session.lastSeenAt
            expect(seen).toBe(busy.viewer.createdAt)
            for (let t = 0; t < 12 * 3; t++) {
              yield* TestClock.adjust(20 * 60_000)
              const alive = yield* Sessions.authenticate(busy.token)
              expect(Option.isSome(alive)).toBe((t + 1) * 20 * 60_000 + 30_000 < 12 * 3_600_000)
            }
            // The periodic cleanup takes sessions nobody comes back for.
            const forgotten = yield* signIn(u.email)
            yield* TestClock.adjust(Sessions.IDLE_MS)
            expect(yield* Sessions.purgeExpired()).toBeGreaterThanOrEqual(1)
            expect(Option.isNone(yield* store.findSession(forgotten.viewer.sessionId))).toBe(true)
          })
        )
      }
    )

    it.scoped("confirmPassword renews recent authentication; a wrong password is a counted refusal", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          const { token, viewer } = yield* signIn(u.email)
          yield* TestClock.adjust(11 * 60_000)
          const now = T0 + 11 * 60_000
          expect(Sessions.isRecent(viewer, now)).toBe(false)
          expect(
            failure(yield* Effect.exit(Sessions.confirmPassword(viewer, Redacted.make("nope nope nope")))).reason
          ).toBe("wrong-password")
          const confirmed = yield* Sessions.confirmPassword(viewer, GOOD)
          expect(Sessions.isRecent(confirmed, now)).toBe(true)
          expect(Option.getOrThrow(yield* Sessions.authenticate(token)).authenticatedAt).toBe(now)
        })
      )
    })

    it.scoped("without a role, an account's first invited user is its owner and the next a member", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          n += 1
          const customerNo = `${6_000_000 + n * 7 + Math.floor(Math.random() * 1000)}`
          yield* account(customerNo)
          const first = yield* Users.invite({
            customerNo,
            email: `first.${customerNo}@acme-freight.com`,
            linkBase: LINK_BASE
          })
          const second = yield* Users.invite({
            customerNo,
            email: `second.${customerNo}@acme-freight.com`,
            linkBase: LINK_BASE
          })
          expect([first.role, second.role]).toEqual(["owner", "member"])
          const roles = (yield* Users.list(customerNo)).map((u) => [u.userId, u.role])
          expect(roles).toEqual(
            expect.arrayContaining([
              [first.userId, "owner"],
              [second.userId, "member"]
            ])
          )
        })
      )
    })

    it.scoped(
      "an operator invites; the link sets a password once and signs in; members and stale owners cannot invite",
      () => {
        const w = world(target)
        return w.run(
          Effect.gen(function* () {
            const u = yield* owner
            const email = `Ada.${u.customerNo}@acme-freight.com`
            const { userId } = yield* Users.invite({ customerNo: u.customerNo, email, linkBase: LINK_BASE })
            const mail = w.mails.at(-1)!
            expect(mail).toMatchObject({
              _tag: "Invite",
              to: email,
              accountName: "Acme Freight",
              expiresAt: T0 + Users.INVITE_MS
            })
            expect(mail._tag === "Invite" && mail.invitedBy).toBe(undefined)
            expect(Redacted.value((mail as { link: Redacted.Redacted<string> }).link)).toMatch(
              /^https:\/\/portal\.example\.test\/portal\/invite\/\?token=[A-Za-z0-9_-]{43}$/
            )
            const token = linkToken(mail)
            expect(yield* Users.inspectToken(token, "invite")).toEqual(Option.some({ email }))
            expect(Option.isNone(yield* Users.inspectToken(token, "reset"))).toBe(true)
            const weak = failure(yield* Effect.exit(Users.acceptInvite(token, Redacted.make("password1234"))))
            expect([weak._tag, weak.message]).toEqual([
              "PasswordRejected",
              "The password is too common. Choose a longer, less predictable passphrase."
            ])
            const short = failure(yield* Effect.exit(Users.acceptInvite(token, Redacted.make("short pass"))))
            expect(short.message).toBe("The password must have at least 12 characters.")
            const accepted = yield* Users.acceptInvite(token, GOOD)
            expect(accepted.viewer).toMatchObject({ userId, role: "member", email })
            expect(failure(yield* Effect.exit(Users.acceptInvite(token, GOOD)))._tag).toBe("TokenInvalid")
            expect(Option.isSome(yield* Effect.option(signIn(email)))).toBe(true)

            // The member cannot invite; the owner can, with recent authentication.
            const member = accepted.viewer
            const byMember = failure(
              yield* Effect.exit(
                Users.invite({
                  customerNo: u.customerNo,
                  email: `x.${u.customerNo}@acme-freight.com`,
                  invitedBy: member,
                  linkBase: LINK_BASE
                })
              )
            )
            expect([byMember._tag, byMember.reason]).toEqual(["NotAllowed", "not-owner"])
            const bossSession = yield* signIn(u.email)
            const boss = bossSession.viewer
            yield* TestClock.adjust(Sessions.RECENT_AUTH_MS)
            const stale = failure(
              yield* Effect.exit(
                Users.invite({
                  customerNo: u.customerNo,
                  email: `x.${u.customerNo}@acme-freight.com`,
                  invitedBy: boss,
                  linkBase: LINK_BASE
                })
              )
            )
            expect(stale._tag).toBe("RecentAuthRequired")
            const fresh = yield* Sessions.confirmPassword(boss, GOOD)
            yield* Users.invite({
              customerNo: u.customerNo,
              email: `x.${u.customerNo}@acme-freight.com`,
              invitedBy: fresh,
              linkBase: LINK_BASE
            })
            expect(w.mails.at(-1)).toMatchObject({ _tag: "Invite", invitedBy: u.email })
            // One sign-in name is one user: the address is taken, in any case, from any account.
            const other = yield* owner
            const taken = failure(
              yield* Effect.exit(
                Users.invite({ customerNo: other.customerNo, email: email.toUpperCase(), linkBase: LINK_BASE })
              )
            )
            expect(taken._tag).toBe("UserExists")
            expect((yield* Users.list(u.customerNo)).map((s) => [s.email, s.role, s.active])).toEqual([
              [u.email, "owner", true],
              [email, "member", true],
              [`x.${u.customerNo}@acme-freight.com`, "member", false]
            ])
            expect(
              failure(
                yield* Effect.exit(Users.invite({ customerNo: "1000000", email: "a@b.example", linkBase: LINK_BASE }))
              )._tag
            ).toBe("AccountNotFound")
          })
        )
      }
    )

    it.scoped(
      "reset: same answer for unknown addresses; the link ends every session and dies with a password change",
      () => {
        const w = world(target)
        return w.run(
          Effect.gen(function* () {
            const u = yield* owner
            const before = w.mails.length
            yield* Users.requestReset({ email: `nobody.${u.customerNo}@acme-freight.com`, linkBase: LINK_BASE })
            expect(w.mails.length).toBe(before)
            const first = yield* signIn(u.email)
            yield* Users.requestReset({ email: u.email.toLowerCase(), linkBase: LINK_BASE })
            const mail = w.mails.at(-1)!
            expect(mail).toMatchObject({ _tag: "PasswordReset", to: u.email, expiresAt: T0 + Users.RESET_MS })
            const reset = linkToken(mail)
            const next = Redacted.make("another quite unusual phrase 9")
            const done = yield* Users.completeReset(reset, next)
            expect(Option.isNone(yield* Sessions.authenticate(first.token))).toBe(true)
            expect(Option.isSome(yield* Sessions.authenticate(done.token))).toBe(true)
            expect(failure(yield* Effect.exit(signIn(u.email)))._tag).toBe("SignInRefused")
            expect(Option.isSome(yield* Effect.option(signIn(u.email, next)))).toBe(true)

            // A reset link dies when the password changes by another route.
            yield* Users.requestReset({ email: u.email, linkBase: LINK_BASE })
            const unused = linkToken(w.mails.at(-1))
            const changed = yield* Users.changePassword(done.viewer, next, GOOD)
            expect(Option.isNone(yield* Users.inspectToken(unused, "reset"))).toBe(true)
            expect(failure(yield* Effect.exit(Users.completeReset(unused, next)))._tag).toBe("TokenInvalid")
            // An expired link is dead too.
            yield* Users.requestReset({ email: u.email, linkBase: LINK_BASE })
            const late = linkToken(w.mails.at(-1))
            expect(Option.isSome(yield* Sessions.authenticate(changed.token))).toBe(true)
            yield* TestClock.adjust(Users.RESET_MS)
            expect(Option.isNone(yield* Users.inspectToken(late, "reset"))).toBe(true)
          })
        )
      }
    )

    it.scoped("changePassword ends every session, this one included, and hands back a new one", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          const a = yield* signIn(u.email)
          const b = yield* signIn(u.email)
          const wrong = failure(
            yield* Effect.exit(Users.changePassword(a.viewer, Redacted.make("not it at all"), GOOD))
          )
          expect(wrong._tag).toBe("SignInRefused")
          const mine = failure(yield* Effect.exit(Users.changePassword(a.viewer, GOOD, Redacted.make(`${u.email}!!`))))
          expect(mine._tag).toBe("PasswordRejected")
          const next = Redacted.make("yet another long passphrase 3")
          const changed = yield* Users.changePassword(a.viewer, GOOD, next)
          expect(Option.isNone(yield* Sessions.authenticate(a.token))).toBe(true)
          expect(Option.isNone(yield* Sessions.authenticate(b.token))).toBe(true)
          expect(Option.getOrThrow(yield* Sessions.authenticate(changed.token)).userId).toBe(u.userId)
        })
      )
    })

    it.scoped("remove: owners only, never yourself, never the last owner; the removed user's sessions end", () => {
      const w = world(target)
      return w.run(
        Effect.gen(function* () {
          const u = yield* owner
          const email = `member.${u.customerNo}@acme-freight.com`
          const { userId } = yield* Users.invite({ customerNo: u.customerNo, email, linkBase: LINK_BASE })
          const member = yield* Users.acceptInvite(linkToken(w.mails.at(-1)), GOOD)
          const bossSession = yield* signIn(u.email)
          const boss = bossSession.viewer
          expect(failure(yield* Effect.exit(Users.remove(member.viewer, u.userId))).reason).toBe("not-owner")
          expect(failure(yield* Effect.exit(Users.remove(boss, u.userId))).reason).toBe("self")
          expect(failure(yield* Effect.exit(Users.remove(boss, "usr_nobody")))._tag).toBe("UserNotFound")
          // A second owner can remove the first; then the second is the last owner.
          const coEmail = `co.${u.customerNo}@acme-freight.com`
          yield* Users.invite({ customerNo: u.customerNo, email: coEmail, role: "owner", linkBase: LINK_BASE })
          const co = yield* Users.acceptInvite(linkToken(w.mails.at(-1)), GOOD)
          yield* Users.remove(co.viewer, u.userId)
          expect(Option.isNone(yield* Sessions.authenticate(bossSession.token))).toBe(true)
          yield* Users.remove(co.viewer, userId)
          expect(Option.isNone(yield* Sessions.authenticate(member.token))).toBe(true)
          expect((yield* Users.list(u.customerNo)).map((s) => s.email)).toEqual([coEmail])
          expect(failure(yield* Effect.exit(Users.remove(co.viewer, co.viewer.userId))).reason).toBe("self")
        })
      )
    })
  })

  describe(`migration 0014_users: ${target.name}`, () => {
    it.scoped("gives every provisioned account an owner user with the registration's password hash", () =>
      Effect.gen(function* () {
        const db = yield* target.open()
        const k = db.kysely as unknown as Kysely<any>
        const schema =
          target.dialect === "postgres"
            ? (yield* Effect.promise(() => sql<{ readonly s: string }>`select current_schema() as s`.execute(k)))
                .rows[0]?.s
            : undefined
        const migrator = new Migrator({
          db: k,
          provider: { getMigrations: () => Promise.resolve({ ...Migrations.migrations }) },
          migrationTableName: Migrations.migrationTableName,
          migrationLockTableName: Migrations.migrationLockTableName,
          ...(schema === undefined ? {} : { migrationTableSchema: schema })
        })
        expect((yield* Effect.promise(() => migrator.migrateTo("0013_paging_indexes"))).error).toBeUndefined()
        const row = (idx: string, email: string, customerNo: string | null) => ({
          idx,
          email,
          email_domain: "acme-freight.com",
          password_hash: `fake$pw-${idx}`,
          otp_secret_id: "otp-1",
          stage: customerNo === null ? "verified" : "active",
          state: "{}",
          link_hash: null,
          validation_key_hash: null,
          customer_no: customerNo,
          mail_status: "sent",
          profile: "{}",
          created_at: T0,
          updated_at: T0 + 1000,
          version: 3
        })
        yield* Effect.promise(() =>
          k
            .insertInto("waybill_registrations")
            .values([row("wr_a", "Boss@Acme-Freight.com", "7000001"), row("wr_b", "pending@acme-freight.com", null)])
            .execute()
        )
        yield* migrate(db)
        const { users } = yield* StorageKysely.make(db)
        const found = Option.getOrThrow(yield* users.findUserByEmail("boss@acme-freight.com"))
        expect(found).toEqual({
          userId: "usr_wr_a",
          customerNo: "7000001",
          email: "Boss@Acme-Freight.com",
          role: "owner",
          passwordHash: "fake$pw-wr_a",
          passwordVersion: 1,
          passwordChangedAt: T0 + 1000,
          invitedBy: null,
          createdAt: T0
        })
        expect(Option.isNone(yield* users.findUserByEmail("pending@acme-freight.com"))).toBe(true)
      })
    )
  })
}
