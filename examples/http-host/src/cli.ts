#!/usr/bin/env node
/**
 * @module cli
 *
 * The operator CLI of the example host, run as `pnpm waybill <command>` from the repository
 * root. Every command takes `--db FILE` (default `.waybill/waybill.db`) and `--json` for
 * machine-readable output.
 */
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { parseArgs } from "node:util"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import { Accounts, IpBlocks, Operations } from "@waybill/core"
import { type HostServices, openDatabase, serve, waybillLayer } from "./host.js"

const USAGE = `Usage: pnpm waybill <command> [options]

Commands:
  serve [--port 8080] [--host 127.0.0.1] [--base-url URL] [--operator-token TOKEN] [--trust-proxy LIST]
                                  serve /api/v1 on the SQLite file; a fresh database gets a demo account
  account create --name NAME      create a customer with a live and a test key (keys are shown once)
  account show CUSTOMER_NO        the account, its key slots (hints, statuses, generations) and links
  account set CUSTOMER_NO [--cancel-mode local|provider]
  account link PARENT_NO CHILD_NO let PARENT read CHILD's orders
  key rotate  --customer NO --mode live|test   replace the key (prints the new key once)
  key disable --customer NO --mode live|test   stop the key working (and everything issued under it)
  key enable  --customer NO --mode live|test   let a disabled key work again (old tickets stay dead)
  ip block IP [--hours 1] [--reason TEXT]   refuse an address (an IPv6 address blocks its /64)
  ip unblock IP                   lift a block
  ip list                         blocks in force
  shipment show TRACK_NO          state, stops, legs, events and the commands allowed now
  shipment assign|unassign|arrive|pickup|complete-stop|fail-attempt|return|deliver|fail|cancel TRACK_NO
           [--driver ID] [--stop N] [--reason CODE]
                                  move a shipment along its lifecycle (stop 0 is the pickup; --stop
                                  defaults to the next open stop)

Options for every command:
  --db FILE      SQLite database (default .waybill/waybill.db, created if missing)
  --json         machine-readable output
  --secret-file  master secret file (default <db>.secret, created if missing, mode 0600)
`

class UsageError extends Error {}

const base = process.env["INIT_CWD"] ?? process.cwd()

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        db: { type: "string" },
        json: { type: "boolean", default: false },
        "secret-file": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "base-url": { type: "string" },
        "operator-token": { type: "string" },
        name: { type: "string" },
        customer: { type: "string" },
        mode: { type: "string" },
        driver: { type: "string" },
        "cancel-mode": { type: "string" },
        "trust-proxy": { type: "string" },
        hours: { type: "string" },
        stop: { type: "string" },
        reason: { type: "string" },
        help: { type: "boolean", short: "h", default: false }
      }
    })
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
})()

const json = values.json === true
const dbFile = resolve(base, values.db ?? ".waybill/waybill.db")
const secretFile = values["secret-file"] === undefined ? undefined : resolve(base, values["secret-file"])
const hostOptions = { dbFile, ...(secretFile === undefined ? {} : { secretFile }) }

const out = (human: string, machine: unknown) => {
  process.stdout.write(json ? `${JSON.stringify(machine)}\n` : `${human}\n`)
}

const need = (value: string | undefined, flag: string): string => {
  if (value === undefined || value.trim() === "") throw new UsageError(`${flag} is required`)
  return value
}

const keyMode = (value: string | undefined): "live" | "test" => {
  if (value !== "live" && value !== "test") throw new UsageError("--mode must be live or test")
  return value
}

/** Runs a core program against the database, then closes it. */
const withCore = async <A, E>(program: Effect.Effect<A, E, HostServices>): Promise<A> => {
  mkdirSync(dirname(dbFile), { recursive: true })
  const database = await openDatabase(dbFile)
  try {
    const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(waybillLayer(database.db, hostOptions))))
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  } finally {
    await database.close()
  }
}

const describeError = (e: unknown): string => {
  const err = e as { _tag?: string; customerNo?: string; message?: string }
  if (err._tag === "AccountNotFound") return `no account ${err.customerNo}`
  if (err._tag === "ShipmentNotFound") return `no shipment ${(e as { trackNo: string }).trackNo}`
  if (err._tag === "TransitionRejected") return `refused: ${(e as { reason: string }).reason}`
  if (err._tag === "InvalidIp") return `not an IP address: ${(e as { input: string }).input}`
  if (err._tag === "VersionConflict") return "the shipment changed concurrently; run the command again"
  return err.message ?? String(e)
}

const createAccount = (name: string) =>
  Effect.map(Accounts.createAccount({ name }), (c) => ({
    customer_no: c.account.customerNo,
    live_key: Redacted.value(c.liveKey),
    test_key: Redacted.value(c.testKey)
  }))

const curlExample = (url: string, key: string) =>
  `curl -s ${url}/api/v1/order/json/ \\
  -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\
  -d '{"data":{"jsonstrn":"demo-1","shipments":[{"Contact":"Ada Lopez","Phone":"312-555-0100",
       "PickupName":"Acme Parts","PickupAddress":"233 S Wacker Dr","PickupCity":"Chicago","PickupState":"IL","PickupZip":"60606",
       "DeliverName":"Bolt Labs","DeliverAddress":"1060 W Addison St","DeliverCity":"Chicago","DeliverState":"IL","DeliverZip":"60613",
       "Pieces":"2","Weight":"15 lbs","ServiceType":"2hour","VehicleType":"car","Pickupdate":"now","Deliverdate":"today"}]}}'`

const commands: Record<string, () => Promise<void>> = {
  async serve() {
    mkdirSync(dirname(dbFile), { recursive: true })
    const host = await serve({
      ...hostOptions,
      port: Number(values.port ?? 8080),
      host: values.host ?? "127.0.0.1",
      ...(values["base-url"] === undefined ? {} : { baseUrl: values["base-url"] }),
      ...(values["operator-token"] === undefined ? {} : { operatorToken: Redacted.make(values["operator-token"]) }),
      ...(values["trust-proxy"] === undefined
        ? {}
        : {
            trustedProxies: values["trust-proxy"]
              .split(",")
              .map((p) => p.trim())
              .filter((p) => p !== "")
          })
    })
    const count = await host.database.db
      .selectFrom("waybill_accounts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow()
    let demo: { customer_no: string; live_key: string; test_key: string } | undefined
    // The demo account goes through the server's own database handle (one Kysely per file).
    if (Number(count.n) === 0) {
      demo = await Effect.runPromise(
        createAccount("Demo customer").pipe(Effect.provide(waybillLayer(host.database.db, hostOptions)))
      )
    }
    if (json) out("", { url: host.url, db: dbFile, demo_account: demo ?? null })
    else {
      process.stdout.write(`Waybill is serving ${host.url}/api/v1 from ${dbFile}\n`)
      if (demo !== undefined) {
        process.stdout.write(
          `\nThis database was new, so a demo account was created. Its keys are shown once:\n` +
            `  customer_no  ${demo.customer_no}\n  live key     ${demo.live_key}\n  test key     ${demo.test_key}\n\n` +
            `Book a test shipment:\n\n${curlExample(host.url, demo.test_key)}\n\n`
        )
      } else {
        process.stdout.write(
          `Create a customer and its keys with: pnpm waybill account create --name "Your customer"\n`
        )
      }
      process.stdout.write("Press Ctrl+C to stop.\n")
    }
    const stop = () => {
      void host.close().then(() => process.exit(0))
    }
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  },
  async account() {
    const sub = positionals[1]
    if (sub === "create") {
      const created = await withCore(createAccount(need(values.name, "--name")))
      out(
        `customer_no  ${created.customer_no}\nlive key     ${created.live_key}\ntest key     ${created.test_key}\n(keys are shown once; store them now)`,
        created
      )
    } else if (sub === "show") {
      const shown = await withCore(Accounts.showAccount(need(positionals[2], "CUSTOMER_NO")))
      const machine = {
        customer_no: shown.account.customerNo,
        name: shown.account.name,
        cancel_mode: shown.account.cancelMode,
        created_at: new Date(shown.account.createdAt).toISOString(),
        keys: shown.keys.map((k) => ({ mode: k.mode, status: k.status, generation: k.generation, hint: k.hint })),
        linked_accounts: shown.linkedAccounts
      }
      out(
        `customer_no  ${machine.customer_no}\nname         ${machine.name}\n` +
          `cancel mode  ${machine.cancel_mode}\n` +
          machine.keys.map((k) => `${k.mode} key     ${k.hint}…  ${k.status}  generation ${k.generation}`).join("\n") +
          `\nlinked       ${machine.linked_accounts.length === 0 ? "none" : machine.linked_accounts.join(", ")}`,
        machine
      )
    } else if (sub === "set") {
      const mode = values["cancel-mode"]
      if (mode !== undefined && mode !== "local" && mode !== "provider")
        throw new UsageError("--cancel-mode must be local or provider")
      const updated = await withCore(
        Accounts.updateAccount(need(positionals[2], "CUSTOMER_NO"), mode === undefined ? {} : { cancelMode: mode })
      )
      out(`customer_no  ${updated.customerNo}\ncancel mode  ${updated.cancelMode}`, {
        customer_no: updated.customerNo,
        cancel_mode: updated.cancelMode
      })
    } else if (sub === "link") {
      const parent = need(positionals[2], "PARENT_NO")
      const child = need(positionals[3], "CHILD_NO")
      await withCore(Accounts.linkAccounts(parent, child))
      out(`${parent} may now read the orders of ${child}`, { parent, child })
    } else
      throw new UsageError("account create --name NAME | account show NO | account set NO | account link PARENT CHILD")
  },
  async key() {
    const sub = positionals[1]
    const customer = need(values.customer, "--customer")
    const mode = keyMode(values.mode)
    if (sub === "rotate") {
      const rotated = await withCore(Accounts.rotateKey(customer, mode))
      const key = Redacted.value(rotated.key)
      out(`${mode} key ${key}\n(shown once; the previous key no longer works)`, {
        customer_no: customer,
        mode,
        key,
        generation: rotated.record.generation
      })
    } else if (sub === "disable" || sub === "enable") {
      const record = await withCore(Accounts.setKeyStatus(customer, mode, sub === "disable" ? "disabled" : "active"))
      out(`${mode} key of ${customer} is ${record.status}`, {
        customer_no: customer,
        mode,
        status: record.status,
        generation: record.generation
      })
    } else throw new UsageError("key rotate|disable|enable --customer NO --mode live|test")
  }
}

const ACTIONS = new Set<string>(Operations.ActionName.literals)

const shipmentView = (v: ReturnType<typeof Operations.view>): string =>
  [
    `${v.track_no}  ${v.state}${v.driver_id === null ? "" : `  driver ${v.driver_id}`}  ${v.livemode ? "live" : "test"}  v${v.version}`,
    `${v.service_type} by ${v.vehicle_type}, ${v.pieces} pcs, ${v.weight} lb, $${v.charge.total.toFixed(2)}`,
    `estimated ${v.estimated_delivery.local} ${v.estimated_delivery.tz}, guaranteed ${v.guaranteed_delivery.local} ${v.guaranteed_delivery.tz}`,
    "stops:",
    ...v.stops.map(
      (s) =>
        `  ${s.seq} ${s.role.padEnd(12)} ${s.status.padEnd(14)} ${s.name}, ${s.address}, ${s.city} ${s.state} ${s.zip}`
    ),
    "events:",
    ...v.events.map((e) => `  ${e.sequence}. ${e.occurred_at}  ${e.type}`),
    `allowed now: ${v.allowed_commands.join(", ") || "nothing (terminal)"}`
  ].join("\n")

commands["ip"] = async () => {
  const sub = positionals[1]
  const shape = (b: { ipKey: string; until: number; reason: string; strikes: number }) => ({
    ip: b.ipKey,
    until: new Date(b.until).toISOString(),
    reason: b.reason,
    strikes: b.strikes
  })
  if (sub === "block") {
    const hours = Number(values.hours ?? 1)
    if (!Number.isFinite(hours) || hours <= 0) throw new UsageError("--hours must be a positive number")
    const b = await withCore(IpBlocks.block(need(positionals[2], "IP"), hours * 3_600_000, values.reason ?? "operator"))
    out(`blocked ${b.ipKey} until ${new Date(b.until).toISOString()}`, shape(b))
  } else if (sub === "unblock") {
    const removed = await withCore(IpBlocks.unblock(need(positionals[2], "IP")))
    out(removed ? "unblocked" : "was not blocked", { unblocked: removed })
  } else if (sub === "list") {
    const blocks = await withCore(IpBlocks.active)
    out(
      blocks.map((b) => `${b.ipKey}  until ${new Date(b.until).toISOString()}  ${b.reason}`).join("\n") || "no blocks",
      blocks.map(shape)
    )
  } else throw new UsageError("ip block IP [--hours N] [--reason TEXT] | ip unblock IP | ip list")
}

commands["shipment"] = async () => {
  const sub = positionals[1]
  const trackNo = need(positionals[2], "TRACK_NO")
  if (sub === "show") {
    const v = await withCore(Operations.show(trackNo))
    out(shipmentView(v), v)
    return
  }
  if (sub === undefined || !ACTIONS.has(sub)) throw new UsageError(`shipment show|${[...ACTIONS].join("|")} TRACK_NO`)
  let stop: number | undefined
  if (values.stop !== undefined) {
    if (!/^\d{1,3}$/.test(values.stop)) throw new UsageError("--stop must be a stop number (0 is the pickup)")
    stop = Number(values.stop)
  }
  const v = await withCore(
    Operations.perform(trackNo, {
      action: sub as Operations.ActionName,
      driverId: values.driver,
      stop,
      reason: values.reason
    })
  )
  out(shipmentView(v), v)
}

const main = async () => {
  const command = positionals[0]
  if (values.help === true || command === undefined || command === "help") {
    process.stdout.write(USAGE)
    return
  }
  const run = commands[command]
  if (run === undefined) throw new UsageError(`unknown command ${command}`)
  await run()
}

main().catch((e: unknown) => {
  const message = e instanceof UsageError ? `${e.message}\n\n${USAGE}` : describeError(e)
  if (json)
    process.stdout.write(`${JSON.stringify({ error: e instanceof UsageError ? e.message : describeError(e) })}\n`)
  else process.stderr.write(`error: ${message}\n`)
  process.exit(e instanceof UsageError ? 2 : 1)
})
