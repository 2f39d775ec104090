/**
 * @module UserStoreKysely
 *
 * `UserStore` over Kysely: portal users (`waybill_users`), their sessions (`waybill_sessions`),
 * one-time link tokens (`waybill_user_tokens`) and sign-in locks (`waybill_sign_in_locks`).
 * E-mail addresses are kept as entered next to their comparison key (`User.emailKey`), which
 * is unique: one sign-in name is one user across all accounts. An insert that would take a
 * key already taken does nothing (`on conflict do nothing`) rather than fail, so a caller inside
 * a PostgreSQL transaction can go on (a failed statement would abort the transaction).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Kysely, type Migration, type Selectable, sql } from "kysely"
import type { Connection } from "./internal/connection.js"
import {
  emailKey,
  type OneTimeTokenRecord,
  type SessionRecord,
  type UserRecord,
  type UserStoreShape
} from "./internal/core.js"
import type { UsersTable, UserTokensTable } from "./Tables.js"

/**
 * Migration `0014_users`: the four tables, and an owner user for every account made by
 * provisioning (a registration with a customer number), with the registration's password hash,
 * so the primary user of an existing account signs in to the portal like a new one.
 */
export const usersMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("waybill_users")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("email_key", "text", (c) => c.notNull().unique())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("password_hash", "text")
      .addColumn("password_version", "integer", (c) => c.notNull())
      .addColumn("password_changed_at", "bigint")
      .addColumn("invited_by", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("waybill_users_customer_idx")
      .on("waybill_users")
      .columns(["customer_no", "created_at"])
      .execute()
    await db.schema
      .createTable("waybill_sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("csrf_token", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("last_seen_at", "bigint", (c) => c.notNull())
      .addColumn("authenticated_at", "bigint", (c) => c.notNull())
      .addColumn("password_version", "integer", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("waybill_sessions_user_idx").on("waybill_sessions").column("user_id").execute()
    await db.schema
      .createTable("waybill_user_tokens")
      .addColumn("hash", "text", (c) => c.primaryKey())
      .addColumn("purpose", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("customer_no", "text", (c) => c.notNull())
      .addColumn("password_version", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addColumn("used_at", "bigint")
      .execute()
    await db.schema.createIndex("waybill_user_tokens_user_idx").on("waybill_user_tokens").column("user_id").execute()
    await db.schema
      .createTable("waybill_sign_in_locks")
      .addColumn("lock_key", "text", (c) => c.primaryKey())
      .addColumn("locked_until", "bigint", (c) => c.notNull())
      .execute()
    // The primary users of accounts made before this migration. The registration's idx is
    // random and unique, so it makes a unique user id.
    await sql`insert into waybill_users
        (user_id, customer_no, email, email_key, role, password_hash, password_version, password_changed_at, invited_by, created_at)
      select 'usr_' || r.idx, r.customer_no, r.email, lower(r.email), 'owner', r.password_hash, 1, r.updated_at, null, r.created_at
        from waybill_registrations r
       where r.customer_no is not null
      on conflict do nothing`.execute(db)
  },
  async down(db: Kysely<any>) {
    for (const table of ["waybill_sign_in_locks", "waybill_user_tokens", "waybill_sessions", "waybill_users"]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}

const toUserRow = (u: UserRecord) => ({
  user_id: u.userId,
  customer_no: u.customerNo,
  email: u.email,
  email_key: emailKey(u.email),
  role: u.role,
  password_hash: u.passwordHash,
  password_version: u.passwordVersion,
  password_changed_at: u.passwordChangedAt,
  invited_by: u.invitedBy,
  created_at: u.createdAt
})

const fromUserRow = (row: Selectable<UsersTable>): UserRecord => ({
  userId: row.user_id,
  customerNo: row.customer_no,
  email: row.email,
  role: row.role === "owner" ? "owner" : "member",
  passwordHash: row.password_hash,
  passwordVersion: Number(row.password_version),
  passwordChangedAt: row.password_changed_at === null ? null : Number(row.password_changed_at),
  invitedBy: row.invited_by,
  createdAt: Number(row.created_at)
})

const fromTokenRow = (row: Selectable<UserTokensTable>): OneTimeTokenRecord => ({
  hash: row.hash,
  purpose: row.purpose === "invite" ? "invite" : "reset",
  userId: row.user_id,
  customerNo: row.customer_no,
  passwordVersion: Number(row.password_version),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  usedAt: row.used_at === null ? null : Number(row.used_at)
})

/** `UserStore` over Kysely. */
export const makeUserStore = (conn: Connection): UserStoreShape => {
  const { first, rows, write, withTransaction } = conn
  const user = (operation: string, build: Parameters<typeof first<Selectable<UsersTable>>>[1]) =>
    first(operation, build).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), fromUserRow)))

  const removeUserRows = Effect.fnUntraced(function* (customerNo: string, userId: string) {
    const n = yield* write("users.remove", (c) =>
      c.deleteFrom("waybill_users").where("customer_no", "=", customerNo).where("user_id", "=", userId)
    )
    yield* write("users.removeSessions", (c) =>
      c.deleteFrom("waybill_sessions").where("customer_no", "=", customerNo).where("user_id", "=", userId)
    )
    yield* write("users.removeTokens", (c) =>
      c.deleteFrom("waybill_user_tokens").where("customer_no", "=", customerNo).where("user_id", "=", userId)
    )
    return n > 0
  })

  const purgeExpiredRows = Effect.fnUntraced(function* ({
    begunBefore,
    idleBefore,
    now
  }: Parameters<UserStoreShape["purgeExpired"]>[0]) {
    const sessions = yield* write("sessions.purge", (c) =>
      c
        .deleteFrom("waybill_sessions")
        .where((eb) => eb.or([eb("last_seen_at", "<", idleBefore), eb("created_at", "<", begunBefore)]))
    )
    const tokens = yield* write("tokens.purge", (c) =>
      c.deleteFrom("waybill_user_tokens").where("expires_at", "<", now)
    )
    const locks = yield* write("signInLocks.purge", (c) =>
      c.deleteFrom("waybill_sign_in_locks").where("locked_until", "<=", now)
    )
    return sessions + tokens + locks
  })

  return {
    insertUser: (u) =>
      write("users.insert", (c) =>
        c
          .insertInto("waybill_users")
          .values(toUserRow(u))
          .onConflict((oc) => oc.doNothing())
      ).pipe(Effect.map((n) => n === 1)),
    findUserByEmail: (email) =>
      user("users.findByEmail", (c) =>
        c.selectFrom("waybill_users").selectAll().where("email_key", "=", emailKey(email))
      ),
    findUser: (customerNo, userId) =>
      user("users.find", (c) =>
        c.selectFrom("waybill_users").selectAll().where("customer_no", "=", customerNo).where("user_id", "=", userId)
      ),
    listUsers: (customerNo) =>
      rows("users.list", (c) =>
        c
          .selectFrom("waybill_users")
          .selectAll()
          .where("customer_no", "=", customerNo)
          .orderBy("created_at")
          .orderBy("user_id")
      ).pipe(Effect.map((list) => list.map(fromUserRow))),
    setPassword: (input) =>
      write("users.setPassword", (c) =>
        c
          .updateTable("waybill_users")
          .set({
            password_hash: input.passwordHash,
            password_version: input.expectedVersion + 1,
            password_changed_at: input.changedAt
          })
          .where("customer_no", "=", input.customerNo)
          .where("user_id", "=", input.userId)
          .where("password_version", "=", input.expectedVersion)
      ).pipe(Effect.map((n) => n === 1)),
    removeUser: (customerNo, userId) => withTransaction(removeUserRows(customerNo, userId)),

    insertSession: (s: SessionRecord) =>
      write("sessions.insert", (c) =>
        c.insertInto("waybill_sessions").values({
          id: s.id,
          user_id: s.userId,
          customer_no: s.customerNo,
          csrf_token: s.csrfToken,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          authenticated_at: s.authenticatedAt,
          password_version: s.passwordVersion
        })
      ).pipe(Effect.asVoid),
    findSession: (id) =>
      first("sessions.find", (c) =>
        c
          .selectFrom("waybill_sessions as s")
          .innerJoin("waybill_users as u", (j) =>
            j.onRef("u.user_id", "=", "s.user_id").onRef("u.customer_no", "=", "s.customer_no")
          )
          .selectAll("u")
          .select([
            "s.id as s_id",
            "s.csrf_token as s_csrf_token",
            "s.created_at as s_created_at",
            "s.last_seen_at as s_last_seen_at",
            "s.authenticated_at as s_authenticated_at",
            "s.password_version as s_password_version"
          ])
          .where("s.id", "=", id)
      ).pipe(
        Effect.map((row) =>
          Option.map(Option.fromNullable(row), (r) => {
            const u = fromUserRow(r)
            const session: SessionRecord = {
              id: r.s_id,
              userId: u.userId,
              customerNo: u.customerNo,
              csrfToken: r.s_csrf_token,
              createdAt: Number(r.s_created_at),
              lastSeenAt: Number(r.s_last_seen_at),
              authenticatedAt: Number(r.s_authenticated_at),
              passwordVersion: Number(r.s_password_version)
            }
            return { session, user: u }
          })
        )
      ),
    touchSession: (id, at) =>
      write("sessions.touch", (c) =>
        c
          .updateTable("waybill_sessions")
          .set(
            at.authenticatedAt === undefined
              ? { last_seen_at: at.lastSeenAt }
              : { last_seen_at: at.lastSeenAt, authenticated_at: at.authenticatedAt }
          )
          .where("id", "=", id)
          .where("last_seen_at", "<=", at.lastSeenAt)
      ).pipe(Effect.asVoid),
    deleteSession: (id) =>
      write("sessions.delete", (c) => c.deleteFrom("waybill_sessions").where("id", "=", id)).pipe(Effect.asVoid),
    deleteUserSessions: (customerNo, userId, keep) =>
      write("sessions.deleteUser", (c) => {
        const q = c.deleteFrom("waybill_sessions").where("customer_no", "=", customerNo).where("user_id", "=", userId)
        return keep === undefined ? q : q.where("id", "<>", keep)
      }),

    insertToken: (t) =>
      write("tokens.insert", (c) =>
        c.insertInto("waybill_user_tokens").values({
          hash: t.hash,
          purpose: t.purpose,
          user_id: t.userId,
          customer_no: t.customerNo,
          password_version: t.passwordVersion,
          created_at: t.createdAt,
          expires_at: t.expiresAt,
          used_at: t.usedAt
        })
      ).pipe(Effect.asVoid),
    findToken: (hash) =>
      first("tokens.find", (c) => c.selectFrom("waybill_user_tokens").selectAll().where("hash", "=", hash)).pipe(
        Effect.map((row) => Option.map(Option.fromNullable(row), fromTokenRow))
      ),
    useToken: (hash, at) =>
      write("tokens.use", (c) =>
        c.updateTable("waybill_user_tokens").set({ used_at: at }).where("hash", "=", hash).where("used_at", "is", null)
      ).pipe(Effect.map((n) => n === 1)),

    lock: (key, until) =>
      write("signInLocks.lock", (c) =>
        c
          .insertInto("waybill_sign_in_locks")
          .values({ lock_key: key, locked_until: until })
          .onConflict((oc) =>
            oc.column("lock_key").doUpdateSet({
              // A later lock extends; an earlier one never shortens.
              locked_until: sql<number>`case when waybill_sign_in_locks.locked_until < excluded.locked_until then excluded.locked_until else waybill_sign_in_locks.locked_until end`
            })
          )
      ).pipe(Effect.asVoid),
    lockedUntil: (key) =>
      first("signInLocks.find", (c) =>
        c.selectFrom("waybill_sign_in_locks").select("locked_until").where("lock_key", "=", key)
      ).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), (r) => Number(r.locked_until)))),

    purgeExpired: (input) => withTransaction(purgeExpiredRows(input))
  }
}
