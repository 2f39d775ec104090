import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import Database from "better-sqlite3"
import { expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Fixtures } from "@waybill/testkit"
import { sql } from "kysely"
import { migrate, sqliteEngine, type StorageEngine, StorageKysely } from "../src/index.js"
import * as fc from "effect/FastCheck"
import { makeConnection } from "../src/internal/connection.js"
import { inlineLimits } from "../src/SqliteEngine.js"
import { describeSqliteOnly } from "./dialects.js"

/** The SQLite engine runs on a better-sqlite3 handle. */
const WHY = "the SQLite engine runs on a better-sqlite3 handle"

/** A migrated WAL file with its engine, removed with the scope. */
const syncDatabase = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-sync-"))),
    (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
  )
  const db = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const sqlite = new Database(path.join(dir, "waybill.db"))
      sqlite.pragma("journal_mode = WAL")
      return sqliteEngine(sqlite)
    }),
    (d) => Effect.promise(() => d.close())
  )
  yield* migrate(db)
  return db
})

/** An in-memory engine that records every statement as it reaches the driver, closed with the scope. */
const recordingEngine = Effect.gen(function* () {
  const seen: Array<{ readonly sql: string; readonly parameters: ReadonlyArray<unknown> }> = []
  const db = sqliteEngine(new Database(":memory:"), {
    onStatement: (sql, parameters) => seen.push({ sql, parameters })
  })
  yield* Effect.addFinalizer(() => Effect.promise(() => db.close()))
  return { db, seen }
})

/** Lets the event loop turn, so fibers started meanwhile run (a transaction that awaits I/O). */
const pause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

const account = (customerNo: string) => Fixtures.account({ customerNo })

const countAccounts = (db: StorageEngine) =>
  Effect.promise(() =>
    db.kysely
      .selectFrom("waybill_accounts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow()
  ).pipe(Effect.map((r) => Number(r.n)))

describeSqliteOnly("sqliteEngine", WHY, () => {
  it.scoped("is one engine per handle (every layer over it shares the lock and the batch)", () =>
    Effect.sync(() => {
      const handle = new Database(":memory:")
      try {
        expect(sqliteEngine(handle)).toBe(sqliteEngine(handle))
        expect(sqliteEngine(new Database(":memory:"))).not.toBe(sqliteEngine(handle))
      } finally {
        handle.close()
      }
    })
  )
})

describeSqliteOnly("Connection.prepare", WHY, () => {
  it.scoped("compiles once, then only binds parameters", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const conn = makeConnection(db)
      let builds = 0
      const find = conn.prepare((c, p: { readonly customerNo: string }) => {
        builds += 1
        return c.selectFrom("waybill_accounts").select("name").where("customer_no", "=", p.customerNo)
      })
      const stores = yield* StorageKysely.make(db)
      yield* stores.accounts.insertAccount({ ...account("1000001"), name: "One" })
      yield* stores.accounts.insertAccount({ ...account("1000002"), name: "Two" })
      const first = yield* conn.execute("t", find({ customerNo: "1000001" }))
      const buildsAfterFirst = builds
      const second = yield* conn.execute("t", find({ customerNo: "1000002" }))
      const third = yield* conn.execute("t", find({ customerNo: "9999999" }))
      expect(first.rows).toEqual([{ name: "One" }])
      expect(second.rows).toEqual([{ name: "Two" }])
      expect(third.rows).toEqual([])
      expect(builds).toBe(buildsAfterFirst)
    })
  )

  it.scoped("keeps constants Kysely binds itself, and compiles per call when it cannot reuse the text", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const conn = makeConnection(db)
      const stores = yield* StorageKysely.make(db)
      for (const [no, name] of [
        ["1000001", "a"],
        ["1000002", "b"],
        ["1000003", "c"]
      ] as const) {
        yield* stores.accounts.insertAccount({ ...account(no), name })
      }
      // A constant bound by Kysely (the literal "b") stays in its slot.
      const notB = conn.prepare((c, p: { readonly from: string }) =>
        c
          .selectFrom("waybill_accounts")
          .select("name")
          .where("customer_no", ">=", p.from)
          .where("name", "<>", "b")
          .orderBy("name")
      )
      expect((yield* conn.execute("t", notB({ from: "1000001" }))).rows).toEqual([{ name: "a" }, { name: "c" }])
      expect((yield* conn.execute("t", notB({ from: "1000002" }))).rows).toEqual([{ name: "c" }])

      // An array parameter: compiled on every call, still right.
      let builds = 0
      const among = conn.prepare((c, p: { readonly names: ReadonlyArray<string> }) => {
        builds += 1
        return c.selectFrom("waybill_accounts").select("name").where("name", "in", p.names).orderBy("name")
      })
      expect((yield* conn.execute("t", among({ names: ["a", "c"] }))).rows).toEqual([{ name: "a" }, { name: "c" }])
      expect((yield* conn.execute("t", among({ names: ["b"] }))).rows).toEqual([{ name: "b" }])
      expect(builds).toBe(2)

      // A build that branches on its values: the check against the real call refuses the template.
      const branching = conn.prepare((c, p: { readonly name: string }) =>
        p.name === "a"
          ? c.selectFrom("waybill_accounts").select("customer_no").where("name", "=", p.name)
          : c.selectFrom("waybill_accounts").select("customer_no").where("name", "<>", p.name).orderBy("customer_no")
      )
      expect((yield* conn.execute("t", branching({ name: "a" }))).rows).toEqual([{ customer_no: "1000001" }])
      expect((yield* conn.execute("t", branching({ name: "b" }))).rows).toEqual([
        { customer_no: "1000001" },
        { customer_no: "1000003" }
      ])
    })
  )
})

describeSqliteOnly("rows of the SQLite engine", WHY, () => {
  it.scoped("are objects by column name, in the result's order; of two columns named alike the later wins", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const run = <R>(text: string, parameters: ReadonlyArray<unknown> = []) =>
        Effect.map(
          db.run(text, parameters, (cause) => cause),
          (r) => r.rows as Array<R>
        )
      yield* run("create table t (a integer, b text, c blob)")
      expect(
        yield* run("insert into t (a, b, c) values (?, ?, ?), (?, ?, ?)", [1, "x", null, 2, "y", Buffer.from([7])])
      ).toEqual([])
      const rows = yield* run<Record<string, unknown>>("select b, a, c from t order by a")
      expect(rows).toEqual([
        { b: "x", a: 1, c: null },
        { b: "y", a: 2, c: Buffer.from([7]) }
      ])
      expect(Object.keys(rows[0]!)).toEqual(["b", "a", "c"])
      expect(yield* run("select 1 as v, 2 as v")).toEqual([{ v: 2 }])
      expect(yield* run("select t1.a, t2.a from t as t1 join t as t2 on t2.a = t1.a + 1")).toEqual([{ a: 2 }])
      // A write that returns rows is a reader too.
      expect(yield* run("insert into t (a, b) values (?, ?) returning a, b", [3, "z"])).toEqual([{ a: 3, b: "z" }])
      expect(yield* run("select count(*) as n from t")).toEqual([{ n: 3 }])
    })
  )
})

describeSqliteOnly("a statement's LIMIT on the SQLite engine", WHY, () => {
  // SQLite plans with a bound LIMIT's value and so prepares such a statement again every time
  // it is bound; the engine writes a statement's own trailing LIMIT and OFFSET into its text.
  it("is written into the text when it is the statement's own, trailing, integer LIMIT and OFFSET", () => {
    expect(inlineLimits("select a from t order by a limit ?", ["x", 5])).toEqual({
      sql: "select a from t order by a limit 5",
      parameters: ["x"]
    })
    expect(inlineLimits("select a from t limit ? offset ?", [3, 10n])).toEqual({
      sql: "select a from t limit 3 offset 10",
      parameters: []
    })
    expect(inlineLimits("select a from t limit ?", [-1])).toEqual({ sql: "select a from t limit -1", parameters: [] })
    // Left bound: not an integer, not the last parameter, no LIMIT at all, or too few parameters.
    for (const [text, parameters] of [
      ["select a from t limit ?", ["5"]],
      ["select a from t limit ?", [1.5]],
      ["select a from t limit ?", [Number.MAX_SAFE_INTEGER + 2]],
      ["select a from t where a in (select a from t limit ?) and b = ?", [5, "x"]],
      ["select a from t where b = ?", [5]],
      ["select a from t limit ? offset ?", [5]]
    ] as const) {
      expect(inlineLimits(text, parameters)).toEqual({ sql: text, parameters })
    }
  })

  it.scoped("answers as the bound statement would, for any limit and offset (property)", () =>
    Effect.gen(function* () {
      const { db, seen: sent } = yield* recordingEngine
      const run = (text: string, parameters: ReadonlyArray<unknown> = []) =>
        Effect.map(
          db.run(text, parameters, (cause) => cause),
          (r) => r.rows as Array<{ readonly a: number }>
        )
      yield* run("create table t (a integer primary key, b text)")
      yield* run(
        `insert into t (a, b) values ${Array.from({ length: 40 }, (_, i) => `(${i}, 'r${i % 3}')`).join(", ")}`
      )
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.integer({ min: -2, max: 45 }),
            fc.option(fc.integer({ min: 0, max: 45 }), { nil: undefined }),
            fc.constantFrom("r0", "r1", "r2"),
            async (limit, offset, b) => {
              const text = `select a from t where b = ? order by a limit ?${offset === undefined ? "" : " offset ?"}`
              const parameters = offset === undefined ? [b, limit] : [b, limit, offset]
              const all = Array.from({ length: 40 }, (_, i) => i).filter((i) => `r${i % 3}` === b)
              const from = offset ?? 0
              const expected = limit < 0 ? all.slice(from) : all.slice(from, from + limit)
              const rows = await Effect.runPromise(run(text, parameters))
              expect(rows.map((r) => r.a)).toEqual(expected)
              // What reached the driver: the values in the text, only `b` still bound.
              expect(sent.at(-1)).toEqual({
                sql: `select a from t where b = ? order by a limit ${limit}${offset === undefined ? "" : ` offset ${offset}`}`,
                parameters: [b]
              })
            }
          ),
          { numRuns: 200 }
        )
      )
    })
  )

  it.scoped("reaches the driver with the value in the text (what `onStatement` sees)", () =>
    Effect.gen(function* () {
      const { db, seen } = yield* recordingEngine
      yield* db.run("create table t (a integer)", [], (cause) => cause)
      yield* db.run("select a from t where a > ? limit ?", [0, 7], (cause) => cause)
      expect(seen.at(-1)).toEqual({ sql: "select a from t where a > ? limit 7", parameters: [0] })
    })
  )
})

describeSqliteOnly("transactions on the SQLite engine", WHY, () => {
  it.scoped("another fiber's statements wait for an open transaction and never land in it", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const stores = yield* StorageKysely.make(db)
      const order: Array<string> = []
      const doomed = yield* stores.transactor
        .withTransaction(
          Effect.gen(function* () {
            yield* stores.accounts.insertAccount(account("1000001"))
            order.push("a: inserted")
            yield* pause(30)
            order.push("a: failing")
            return yield* Effect.fail("boom" as const)
          })
        )
        .pipe(Effect.flip, Effect.fork)
      yield* pause(5)
      // Sent while the transaction is open: a prepared statement, a query compiled per call, and a
      // write in its own transaction.
      const others = yield* Effect.all(
        [
          stores.accounts.findKeyWithAccount("no-such-hash").pipe(Effect.tap(() => order.push("b: key lookup"))),
          stores.accounts.findAccount("1000001").pipe(Effect.tap(() => order.push("b: find"))),
          stores.accounts.insertAccount(account("1000002")).pipe(Effect.tap(() => order.push("b: insert")))
        ],
        { concurrency: "unbounded" }
      )
      expect(yield* Fiber.join(doomed)).toBe("boom")
      expect(order.slice(0, 2)).toEqual(["a: inserted", "a: failing"])
      expect(order.slice(2).sort()).toEqual(["b: find", "b: insert", "b: key lookup"])
      // The rolled-back account is invisible to the waiting read, and gone; the other write stayed.
      expect(Option.isNone(others[1])).toBe(true)
      expect(Option.isNone(yield* stores.accounts.findAccount("1000001"))).toBe(true)
      expect(Option.isSome(yield* stores.accounts.findAccount("1000002"))).toBe(true)
    })
  )

  it.scoped("two layers over one database share the lock (their transactions never overlap)", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const a = yield* StorageKysely.make(db)
      const b = yield* StorageKysely.make(db)
      const slow = (stores: StorageKysely.Stores, no: string) =>
        stores.transactor.withTransaction(
          Effect.gen(function* () {
            yield* stores.accounts.insertAccount(account(no))
            yield* pause(10)
            yield* stores.accounts.insertAccount(account(`${no.slice(0, 6)}9`))
          })
        )
      yield* Effect.all([slow(a, "1000010"), slow(b, "1000020")], { concurrency: "unbounded" })
      expect(yield* countAccounts(db)).toBe(4)
    })
  )

  it.scoped("commits on success, rolls back a failure, and a nested transaction joins the outer one", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const { accounts, transactor } = yield* StorageKysely.make(db)
      yield* transactor.withTransaction(
        Effect.zipRight(accounts.insertAccount(account("1000001")), transactor.withTransaction(Effect.void))
      )
      const failed = yield* transactor
        .withTransaction(
          Effect.zipRight(
            accounts.insertAccount(account("1000002")),
            transactor.withTransaction(Effect.zipRight(accounts.insertAccount(account("1000003")), Effect.fail("x")))
          )
        )
        .pipe(Effect.flip)
      expect(failed).toBe("x")
      expect(yield* countAccounts(db)).toBe(1)
      // The batch committed: nothing is pending, and the database is usable through Kysely too.
      yield* Effect.promise(() => sql`select 1`.execute(db.kysely))
    })
  )

  it.scoped("a unique violation inside a transaction is DuplicateKey and the transaction rolls back", () =>
    Effect.gen(function* () {
      const db = yield* syncDatabase
      const { accounts, transactor } = yield* StorageKysely.make(db)
      yield* accounts.insertAccount(account("1000001"))
      const error = yield* transactor
        .withTransaction(
          Effect.zipRight(accounts.insertAccount(account("1000002")), accounts.insertAccount(account("1000001")))
        )
        .pipe(Effect.flip)
      expect(error._tag).toBe("DuplicateKey")
      expect(yield* countAccounts(db)).toBe(1)
    })
  )
})

describeSqliteOnly("group commit on the SQLite engine", WHY, () => {
  /** A WAL file whose engine logs every statement it sends, with `tag` lines the test adds. */
  const logged = Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "waybill-batch-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    const log: Array<string> = []
    const sqlite = new Database(path.join(dir, "waybill.db"))
    sqlite.pragma("journal_mode = WAL")
    const engine = yield* Effect.acquireRelease(
      Effect.sync(() =>
        sqliteEngine(sqlite, { onStatement: (text, parameters) => log.push(`${text} ${parameters.join(",")}`) })
      ),
      (e) => Effect.promise(() => e.close())
    )
    yield* migrate(engine)
    return { engine, log, sqlite }
  })

  it.scoped("commits concurrent transactions together, and answers each only after the COMMIT holding its writes", () =>
    Effect.gen(function* () {
      const { engine, log } = yield* logged
      const { accounts, transactor } = yield* StorageKysely.make(engine)
      log.length = 0
      const n = 20
      yield* Effect.all(
        Array.from({ length: n }, (_, i) =>
          transactor
            .withTransaction(accounts.insertAccount(account(String(2000000 + i))))
            .pipe(Effect.tap(() => Effect.sync(() => log.push(`answered ${2000000 + i}`))))
        ),
        { concurrency: "unbounded" }
      )
      const commits = log.filter((l) => l.startsWith("commit")).length
      expect(commits).toBeGreaterThanOrEqual(1)
      expect(commits).toBeLessThan(n) // batched: not one COMMIT per transaction
      expect(log.filter((l) => l.startsWith("savepoint"))).toHaveLength(n)
      for (let i = 0; i < n; i++) {
        const no = String(2000000 + i)
        const wrote = log.findIndex((l) => l.startsWith('insert into "waybill_accounts"') && l.includes(no))
        const answered = log.indexOf(`answered ${no}`)
        const commit = log.findIndex((l, at) => at > wrote && l.startsWith("commit"))
        expect(wrote).toBeGreaterThanOrEqual(0)
        expect(commit).toBeGreaterThan(wrote)
        expect(answered).toBeGreaterThan(commit)
      }
      expect(yield* countAccounts(engine)).toBe(n)
    })
  )

  it.scoped("a failing COMMIT fails every transaction of its batch, and none of their writes stays", () =>
    Effect.gen(function* () {
      const { engine, sqlite } = yield* logged
      // A deferred foreign key is only checked at COMMIT: one unit's orphan row fails the batch's COMMIT.
      sqlite.pragma("foreign_keys = ON")
      sqlite.exec(`create table t_parent (id integer primary key);
        create table t_child (id integer primary key, parent integer references t_parent(id) deferrable initially deferred)`)
      const write = (text: string) =>
        engine.transaction(false, (run) =>
          Effect.zipRight(
            Effect.yieldNow(),
            run(text, [], (cause) => cause)
          )
        )
      const exits = yield* Effect.all(
        [
          Effect.exit(write("insert into t_parent (id) values (1)")),
          Effect.exit(write("insert into t_child (id, parent) values (1, 42)")),
          Effect.exit(write("insert into t_parent (id) values (2)"))
        ],
        { concurrency: "unbounded" }
      )
      for (const exit of exits) {
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          expect(Cause.squash(exit.cause)).toMatchObject({ _tag: "StorageError", operation: "transaction.commit" })
        }
      }
      expect(sqlite.prepare("select count(*) as n from t_parent").get()).toEqual({ n: 0 })
      expect(sqlite.prepare("select count(*) as n from t_child").get()).toEqual({ n: 0 })
      expect(sqlite.inTransaction).toBe(false)
      // The next batch is unaffected.
      yield* write("insert into t_parent (id) values (3)")
      expect(sqlite.prepare("select count(*) as n from t_parent").get()).toEqual({ n: 1 })
    })
  )

  it.scoped("a fiber forked in a transaction that outlives it cannot write into a later one", () =>
    Effect.gen(function* () {
      const { engine } = yield* logged
      const { accounts, transactor } = yield* StorageKysely.make(engine)
      const go = yield* Deferred.make<void>()
      const straggler = yield* transactor.withTransaction(
        Effect.forkDaemon(Effect.zipRight(Deferred.await(go), accounts.insertAccount(account("4000001"))))
      )
      // Another transaction is running when the straggler writes.
      const later = transactor.withTransaction(
        Effect.gen(function* () {
          yield* accounts.insertAccount(account("4000002"))
          yield* Deferred.succeed(go, undefined)
          yield* pause(20)
        })
      )
      yield* later
      const error = yield* Fiber.join(straggler).pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "StorageError", operation: "accounts.insert" })
      expect(Option.isNone(yield* accounts.findAccount("4000001"))).toBe(true)
      expect(Option.isSome(yield* accounts.findAccount("4000002"))).toBe(true)
    })
  )

  it.scoped(
    "batches join the group commit: each answered after the COMMIT holding it, a failing one undone alone",
    () =>
      Effect.gen(function* () {
        const { engine, log, sqlite } = yield* logged
        sqlite.exec("create table t_batch (id integer primary key, note text not null)")
        log.length = 0
        const insert = (id: number) => ({
          sql: "insert into t_batch (id, note) values (?, ?)",
          parameters: [id, `n${id}`]
        })
        const batches = [
          [insert(1), insert(2)],
          // The second statement clashes with the first: this batch alone is undone.
          [insert(3), insert(3)],
          [insert(4), insert(5)]
        ]
        const exits = yield* Effect.all(
          batches.map((statements, b) =>
            Effect.exit(
              engine
                .batch(statements, (cause, index) => ({ cause, index }))
                .pipe(Effect.tap(() => Effect.sync(() => log.push(`answered ${b}`))))
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(Exit.isSuccess(exits[0]!) && exits[0].value.results?.length).toBe(2)
        expect(Exit.isFailure(exits[1]!) && Cause.squash(exits[1].cause)).toMatchObject({ index: 1 })
        expect(Exit.isSuccess(exits[2]!)).toBe(true)
        expect(sqlite.prepare("select id from t_batch order by id").all()).toEqual([1, 2, 4, 5].map((id) => ({ id })))
        // One COMMIT for all three, before any answer.
        const commit = log.findIndex((l) => l.startsWith("commit"))
        expect(log.filter((l) => l.startsWith("commit"))).toHaveLength(1)
        expect(log.findIndex((l) => l.startsWith("answered"))).toBeGreaterThan(commit)
      })
  )

  it.scoped("a batch whose mustChange statement changes nothing keeps nothing and says which one", () =>
    Effect.gen(function* () {
      const { engine, sqlite } = yield* logged
      sqlite.exec("create table t_once (id integer primary key)")
      const first = yield* engine.batch(
        [{ sql: "insert into t_once (id) values (1) on conflict do nothing", parameters: [], mustChange: true }],
        (cause) => cause
      )
      expect(first.unchanged).toBeUndefined()
      const again = yield* engine.batch(
        [
          { sql: "insert into t_once (id) values (2)", parameters: [] },
          { sql: "insert into t_once (id) values (1) on conflict do nothing", parameters: [], mustChange: true },
          { sql: "insert into t_once (id) values (3)", parameters: [] }
        ],
        (cause) => cause
      )
      expect(again).toEqual({ unchanged: 1 })
      expect(sqlite.prepare("select id from t_once order by id").all()).toEqual([{ id: 1 }])
    })
  )

  it.scoped("a single write outside a transaction is answered after its COMMIT; a read is not held back", () =>
    Effect.gen(function* () {
      const { engine, log } = yield* logged
      const { accounts } = yield* StorageKysely.make(engine)
      log.length = 0
      yield* accounts.insertAccount(account("3000001"))
      log.push("answered")
      expect(log.map((l) => l.split(" ")[0])).toEqual(["begin", "insert", "commit", "answered"])
      log.length = 0
      yield* accounts.findAccount("3000001")
      expect(log.map((l) => l.split(" ")[0])).toEqual(["select"])
    })
  )
})
