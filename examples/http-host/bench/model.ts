/**
 * What a booking's rows cost SQLite, by data model: each variant's tables and indexes, one
 * booking's inserts under a savepoint, many bookings per `COMMIT` (the group commit), WAL mode
 * with `synchronous = NORMAL` and SQLite's own checkpoints, CPU time per booking. With `--churn`
 * each booking is followed by JavaScript that allocates about what a request's own code does
 * (objects, strings, a map), which shows what the statements cost between a request's code
 * rather than in a tight loop of their own:
 *
 *   cd examples/http-host && taskset -c 1 node --import tsx bench/model.ts [--churn] [--n 30000] [variant name prefix]
 *
 * The variants are the present model and the alternatives weighed in docs/benchmarks.md
 * (session 11): surrogate integer keys (one random B-tree a booking), the stops inline as JSON,
 * tables without rowid, and the floor's two tables. The values are the bench shipment's, fixed.
 */
import { randomInt } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}
const N = Number(arg("n") ?? 30_000)
const CHURN = process.argv.includes("--churn")
const only = process.argv.slice(2).find((a, i, all) => !a.startsWith("--") && all[i - 1] !== "--n")

type Book = (trackNo: string, now: number, eventId: string) => void
interface Variant {
  readonly name: string
  readonly ddl: ReadonlyArray<string>
  readonly book: (db: Database.Database) => Book
}

const SHIPMENT_COLUMNS = `customer_no text not null, livemode integer not null, state text not null,
  version integer not null, driver_id text, contact text not null, phone text not null, email text not null,
  billing_reference text not null, service_type text not null, vehicle_type text not null, pieces integer not null,
  weight_lb real not null, signature_required integer not null, liftgate_required integer not null,
  pickup_instructions text not null, deliver_instructions text not null, ready_at integer not null,
  requested_delivery_at integer not null, estimated_delivery_at integer not null, guaranteed_delivery_at integer not null,
  charge_transport real, charge_weight real, charge_stops real, charge_fuel real, charge_extras real,
  charge_discount real, charge_total real, jsonstrn text not null, created_at integer not null, updated_at integer not null`
const SHIPMENT_VALUES = `'C1', 1, 'booked', 1, null, 'Jane Doe', '3125550100', 'jane@example.com', 'REF-123', 'standard',
  'car', 1, 10, 0, 0, '', '', ?, ?, ?, ?, 10, 2, 3, 1.5, 0, 0, 16.5, 'bench', ?, ?`
const SHIPMENT_NAMES = `customer_no, livemode, state, version, driver_id, contact, phone, email, billing_reference,
  service_type, vehicle_type, pieces, weight_lb, signature_required, liftgate_required, pickup_instructions,
  deliver_instructions, ready_at, requested_delivery_at, estimated_delivery_at, guaranteed_delivery_at,
  charge_transport, charge_weight, charge_stops, charge_fuel, charge_extras, charge_discount, charge_total, jsonstrn,
  created_at, updated_at`
const STOP_COLUMNS = `role text not null, external_id integer, name text not null, address text not null,
  city text not null, state text not null, zip text not null, contact_name text not null, phone text not null,
  note text not null, latitude real not null, longitude real not null, time_zone text not null, status text not null,
  eta_at integer not null, leg_seq integer, leg_from integer, leg_miles real`
const PICKUP = `'pickup', null, 'ACME Warehouse', '123 Main St', 'Chicago', 'IL', '60601', 'Jane Doe', '3125550100', '',
  41.88, -87.62, 'America/Chicago', 'pending', ?, null, null, null`
const DELIVERY = `'delivery', null, 'Customer', '456 Oak Ave', 'Evanston', 'IL', '60201', '', '', '', 42.04, -87.69,
  'America/Chicago', 'pending', ?, 0, 0, 14.2`
const EVENT_DATA = JSON.stringify({
  track_no: "12345678",
  state: "booked",
  service_type: "standard",
  vehicle_type: "car",
  estimated_delivery: "2026-11-28 15:00",
  guaranteed_delivery: "2026-11-28 17:00",
  destination_tz: "CST",
  estimated_charge: 16.5,
  stops: 2,
  pieces: 1,
  weight: 10
})
const STOPS_JSON = JSON.stringify(
  [0, 1].map((seq) => ({
    seq,
    role: seq === 0 ? "pickup" : "delivery",
    name: seq === 0 ? "ACME Warehouse" : "Customer",
    address: seq === 0 ? "123 Main St" : "456 Oak Ave",
    city: seq === 0 ? "Chicago" : "Evanston",
    state: "IL",
    zip: seq === 0 ? "60601" : "60201",
    contact_name: seq === 0 ? "Jane Doe" : "",
    phone: seq === 0 ? "3125550100" : "",
    note: "",
    latitude: seq === 0 ? 41.88 : 42.04,
    longitude: seq === 0 ? -87.62 : -87.69,
    time_zone: "America/Chicago",
    status: "pending",
    eta_at: 1_764_000_000_000,
    leg_seq: seq === 0 ? null : 0,
    leg_from: seq === 0 ? null : 0,
    leg_miles: seq === 0 ? null : 14.2
  }))
)

/** The present model's three tables, with or without rowid. */
const present = (name: string, withoutRowid: { readonly stops: boolean; readonly events: boolean }): Variant => ({
  name,
  ddl: [
    `create table s (track_no text primary key, ${SHIPMENT_COLUMNS})`,
    "create index s_cust on s (customer_no, created_at, track_no)",
    "create index s_ref on s (customer_no, lower(billing_reference))",
    `create table st (track_no text not null, seq integer not null, ${STOP_COLUMNS}, primary key (track_no, seq))${withoutRowid.stops ? " without rowid" : ""}`,
    `create table e (id text primary key, track_no text not null, customer_no text not null, type text not null,
      sequence integer not null, livemode integer not null, occurred_at integer not null, data text not null,
      unique (track_no, sequence))${withoutRowid.events ? " without rowid" : ""}`,
    "create index e_cust on e (customer_no, occurred_at)"
  ],
  book: (db) => {
    const shipment = db.prepare(`insert into s values (?, ${SHIPMENT_VALUES})`)
    const stops = db.prepare(`insert into st values (?, 0, ${PICKUP}), (?, 1, ${DELIVERY})`)
    const event = db.prepare("insert into e values (?, ?, 'C1', 'shipment.booked', 1, 1, ?, ?)")
    return (t, now, id) => {
      shipment.run(t, now, now, now, now, now, now)
      stops.run(t, now, t, now)
      event.run(id, t, now, EVENT_DATA)
    }
  }
})

const VARIANTS: ReadonlyArray<Variant> = [
  present("present model (10 B-trees, 3 random)", { stops: false, events: false }),
  present("present, events without rowid", { stops: false, events: true }),
  present("present, stops and events without rowid", { stops: true, events: true }),
  {
    name: "surrogate integer keys (9 B-trees, 1 random)",
    ddl: [
      `create table s (id integer primary key, track_no text not null unique, ${SHIPMENT_COLUMNS})`,
      "create index s_cust on s (customer_no, created_at)",
      "create index s_ref on s (customer_no, lower(billing_reference))",
      `create table st (shipment_id integer not null, seq integer not null, ${STOP_COLUMNS},
        primary key (shipment_id, seq)) without rowid`,
      `create table e (id integer primary key, event_id text not null unique, shipment_id integer not null,
        sequence integer not null, customer_no text not null, type text not null, livemode integer not null,
        occurred_at integer not null, data text not null, unique (shipment_id, sequence))`,
      "create index e_cust on e (customer_no, occurred_at)"
    ],
    book: (db) => {
      const shipment = db.prepare(`insert into s (track_no, ${SHIPMENT_NAMES}) values (?, ${SHIPMENT_VALUES})`)
      const stops = db.prepare(`insert into st values (?, 0, ${PICKUP}), (?, 1, ${DELIVERY})`)
      const event = db.prepare(`insert into e (event_id, shipment_id, sequence, customer_no, type, livemode,
        occurred_at, data) values (?, ?, 1, 'C1', 'shipment.booked', 1, ?, ?)`)
      return (t, now, id) => {
        const sid = shipment.run(t, now, now, now, now, now, now).lastInsertRowid
        stops.run(sid, now, sid, now)
        event.run(id, sid, now, EVENT_DATA)
      }
    }
  },
  {
    name: "stops inline as JSON (8 B-trees, 2 random)",
    ddl: [
      `create table s (track_no text primary key, ${SHIPMENT_COLUMNS}, stops text not null)`,
      "create index s_cust on s (customer_no, created_at, track_no)",
      "create index s_ref on s (customer_no, lower(billing_reference))",
      `create table e (id text primary key, track_no text not null, customer_no text not null, type text not null,
        sequence integer not null, livemode integer not null, occurred_at integer not null, data text not null,
        unique (track_no, sequence))`,
      "create index e_cust on e (customer_no, occurred_at)"
    ],
    book: (db) => {
      const shipment = db.prepare(`insert into s values (?, ${SHIPMENT_VALUES}, ?)`)
      const event = db.prepare("insert into e values (?, ?, 'C1', 'shipment.booked', 1, 1, ?, ?)")
      return (t, now, id) => {
        shipment.run(t, now, now, now, now, now, now, STOPS_JSON)
        event.run(id, t, now, EVENT_DATA)
      }
    }
  },
  {
    name: "the floor's two tables (4 B-trees)",
    ddl: [
      "create table s (track_no text primary key, customer_no text not null, input text not null, created_at integer not null)",
      "create table e (id text primary key, track_no text not null, type text not null, data text not null, created_at integer not null)"
    ],
    book: (db) => {
      const shipment = db.prepare("insert into s values (?, 'C1', ?, ?)")
      const event = db.prepare("insert into e values (?, ?, 'shipment.booked', ?, ?)")
      const input = JSON.stringify({ Contact: "Jane Doe", PickupZip: "60601", DeliverZip: "60201", stops: STOPS_JSON })
      return (t, now, id) => {
        shipment.run(t, input, now)
        event.run(id, t, EVENT_DATA, now)
      }
    }
  }
]

/** About what a request's own code allocates between two bookings (objects, strings, a map). */
let kept: unknown
const churn = () => {
  const objects: Array<unknown> = []
  for (let i = 0; i < 1500; i++) objects.push({ i, s: `x${i}`, o: { v: i } })
  kept = objects
  const map = new Map<string, number>()
  for (let i = 0; i < 300; i++) map.set(`k${i}`, i)
  kept = map
}

const dir = mkdtempSync(join(tmpdir(), "waybill-model-"))
let serial = 0
const measure = (variant: Variant, perCommit: number): number => {
  const file = join(dir, `${serial++}.db`)
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  for (const statement of variant.ddl) db.exec(statement)
  const book = variant.book(db)
  const begin = db.prepare("begin immediate")
  const commit = db.prepare("commit")
  const savepoint = db.prepare("savepoint unit")
  const release = db.prepare("release unit")
  const used = new Set<string>()
  let events = 0
  const run = (count: number) => {
    for (let i = 0; i < count; i += perCommit) {
      begin.run()
      for (let j = 0; j < perCommit; j++) {
        let trackNo = String(randomInt(10_000_000, 100_000_000))
        while (used.has(trackNo)) trackNo = String(randomInt(10_000_000, 100_000_000))
        used.add(trackNo)
        savepoint.run()
        book(trackNo, Date.now(), `01J${String(++events).padStart(23, "0")}`)
        release.run()
        if (CHURN) churn()
      }
      commit.run()
    }
  }
  run(Math.min(5_000, N))
  const before = process.cpuUsage()
  run(N)
  db.pragma("wal_checkpoint(PASSIVE)")
  const used_ = process.cpuUsage(before)
  db.close()
  return (used_.user + used_.system) / N
}

let churnUs = 0
if (CHURN) {
  for (let i = 0; i < 5_000; i++) churn()
  const before = process.cpuUsage()
  for (let i = 0; i < N; i++) churn()
  const used_ = process.cpuUsage(before)
  churnUs = (used_.user + used_.system) / N
  console.log(`the churn alone: ${churnUs.toFixed(1)} us a booking (included in every figure below)`)
}
console.log(`CPU us per booking, ${N} bookings, WAL, synchronous = NORMAL${CHURN ? ", with churn" : ""}`)
console.log(`${"variant".padEnd(46)} ${"1/commit".padStart(9)} ${"8/commit".padStart(9)} ${"32/commit".padStart(9)}`)
for (const variant of VARIANTS) {
  if (only !== undefined && !variant.name.startsWith(only)) continue
  const figures = [1, 8, 32].map((perCommit) => measure(variant, perCommit).toFixed(1).padStart(9))
  console.log(`${variant.name.padEnd(46)} ${figures.join(" ")}`)
}
void kept
rmSync(dir, { recursive: true, force: true })
