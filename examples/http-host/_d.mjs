import Database from "better-sqlite3"
const db = new Database("/tmp/diagdb/waybill.db")
const before = Date.now() - 30 * 24 * 3600 * 1000
console.log(db.prepare("select id, at from waybill_activity where at < ?").all(before))
const q = `delete from "waybill_activity" where ("at", "id") in (select "a"."at", "a"."id" from "waybill_activity" as "a" where "a"."at" < ? limit ?) and "at" < ?`
console.log(db.prepare("explain query plan " + q).all(before, 1000, before).map(r => r.detail))
console.log(db.prepare(`select "a"."at", "a"."id" from "waybill_activity" as "a" where "a"."at" < ? limit ?`).all(before, 1000))
console.log(db.prepare(q).run(before, 1000, before))
