#!/usr/bin/env node
/**
 * @module cli
 *
 * The operator CLI of the example host, run as `pnpm waybill <command>` from the repository
 * root. Every command takes `--db FILE` (default `.waybill/waybill.db`) or `--database-url URL`
 * (PostgreSQL), and `--json` for machine-readable output.
 */
import { mkdirSync, readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { parseArgs } from "node:util"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Option from "effect/Option"
import {
  Abuse,
  Accounts,
  Activity,
  ClientIp,
  Documents,
  Idempotency,
  IpBlocks,
  Operations,
  Page,
  Provisioning,
  User,
  Users,
  Webhooks
} from "@waybill/core"
import { OperatorViews } from "@waybill/http"
import { describeUrl, type HostServices, openHostDatabase, serve, waybillLayer } from "./host.js"
import { type LogFormat, parseLogFormat } from "./observability.js"
import { sampleShipment } from "./sample.js"
import { ConfigError, flagOptions, loadSettings, smtpUrl, waybillConfig } from "./config.js"
import { allowList, type WebhookHostOptions } from "./webhooks.js"
import { provisioningLayer } from "./provisioning.js"

const USAGE = `Usage: pnpm waybill <command> [options]

Commands:
  serve [--port 8080] [--host 127.0.0.1] [--base-url URL] [--operator-token-file FILE] [--trust-proxy LIST]
        [--tls-cert FILE --tls-key FILE] [--allow-insecure-http]
        [--mail-dir DIR | --smtp-url URL [--smtp-password-file FILE]] [--mail-from ADDRESS]
        [--webhook-allow-private LIST] [--webhook-ca FILE] [--webhook-lease-seconds 60] [--no-webhooks] [--log-format json|pretty]
        [--shutdown-grace 25] [--limits JSON] [--ticket-ttl-minutes 15]
                                  serve /api/v1 and /ops/v1 from the database; a fresh one gets a demo account.
                                  HTTPS with the PEM files; the documents endpoint refuses plain HTTP
                                  unless --allow-insecure-http (development only) or a trusted proxy
                                  says X-Forwarded-Proto: https. SIGTERM drains: requests in flight
                                  get --shutdown-grace seconds, then the process exits 0. Logs one JSON line per request
                                  (--log-format pretty for a terminal); GET /healthz, /readyz, and
                                  /metrics with the operator token
  account create --name NAME      create a customer with a live and a test key (keys are shown once)
  account show CUSTOMER_NO        the account, its key slots (hints, statuses, generations) and links,
                                  and its primary user when the account was made by API provisioning
  account set CUSTOMER_NO [--cancel-mode local|provider] [--allow-ip LIST|any] [--discount PCT]
                                  cancel mode; IP allowlist (comma-separated CIDRs, "any" clears it);
                                  negotiated discount in percent of the list charge
  account link PARENT_NO CHILD_NO let PARENT read CHILD's orders
  account payment --customer NO [--enable | --disable]
                                  record or clear that the customer's payment is set up with the
                                  configured provider (registered-with-<provider>-check answers Y
                                  once recorded); without a flag, show it
  key rotate  --customer NO --mode live|test   replace the key (prints the new key once)
  key disable --customer NO --mode live|test   stop the key working (and everything issued under it)
  key enable  --customer NO --mode live|test   let a disabled key work again (old tickets stay dead)
  user invite --customer NO --email ADDRESS [--role member|owner] [--base-url URL]
                                  mail a one-time link (24 hours) to set a password for the account
                                  portal, through the configured mailer (--mail-dir or --smtp-url, as
                                  serve); the link starts with --base-url, the server's public URL
                                  (default: where serve listens, http://HOST:PORT)
  user list --customer NO         the account's portal users (role, whether the password is set)
  ip block IP [--hours 1] [--reason TEXT]   refuse an address (an IPv6 address blocks its /64)
  ip unblock IP                   lift a block (and forget the address's abuse counts)
  ip list [PAGE]                  blocks in force, newest first
  shipment show TRACK_NO          state, stops, legs, events and the commands allowed now
  shipment assign|unassign|arrive|pickup|complete-stop|fail-attempt|return|deliver|fail|cancel TRACK_NO
           [--driver ID] [--stop N] [--reason CODE]
                                  move a shipment along its lifecycle (stop 0 is the pickup; --stop
                                  defaults to the next open stop)

  document add TRACK_NO --type TYPE --file PATH [--rotation 0|90|180|270] [--batch N] [--id SOURCE_ID]
                                  add a page (PDF, JPEG, PNG, GIF, TIFF) to the current order version;
                                  a new batch unless --batch; prints the document id
  document list TRACK_NO [PAGE]   every document of the order, every version, newest first, and what customers see
  document hide|unhide|remove DOC_ID   change what customers see (old download links die)
  document replace DOC_ID --file PATH  replace the file (old download links die)
  signature add TRACK_NO --name RECIPIENT --file PATH   add a signature (the latest one is shown)
  order new-version TRACK_NO      start a new order version (earlier attachments stop being shown)
  order set-invoice TRACK_NO INVOICE_NO   store the invoice number (lookups by invoice_no)
  webhook add --customer NO --url URL --events TYPE,TYPE|*   add an HTTPS endpoint for the selected event
                                  types (prints its id and its whsec_ signing secret once)
  webhook list [--customer NO] [PAGE]   endpoints, their events and whether they are enabled
  webhook rotate-secret ENDPOINT_ID   new signing secret (printed once); the old one also signs for 24 h
  webhook disable|enable ENDPOINT_ID  stop or resume deliveries (enabling gives 5 fresh days)
  webhook update ENDPOINT_ID [--url URL] [--events TYPE,TYPE|*]   change where it sends and what
                                  (queued deliveries go to the new URL)
  webhook delete ENDPOINT_ID      remove it: its queued deliveries are dropped, its history removed
  webhook deliveries ENDPOINT_ID [PAGE]   the endpoint's deliveries (status, attempts, next try)
  webhook log ENDPOINT_ID [PAGE]  the delivery log: one line per attempt (status, duration, answer)
  webhook resend EVENT_ID         send an event again (same webhook-id) to every endpoint it was for
  webhook recover ENDPOINT_ID --since TIME   queue again what the endpoint selected and did not get
  webhook test ENDPOINT_ID        queue a webhook.test event for the endpoint
  idempotency purge               delete Idempotency-Key records older than 24 h (serve does it hourly)
  activity purge                  delete account activity (API calls) older than 30 days (serve does it hourly)

PAGE, on every list: [--limit N] [--starting-after CURSOR]
                      lists are newest first, N (1 to 100, default 20) at a time; when more
                      follow, the last line names the --starting-after of the next page

Options for every command:
  --db FILE           SQLite database (default .waybill/waybill.db in the directory pnpm was
                      started from, created if missing)
  --database-url URL  PostgreSQL instead (postgres://USER[:PASSWORD]@HOST:PORT/DB; env
                      WAYBILL_DATABASE_URL); migrated at start; needs --secret-file
  --pool-size N       PostgreSQL connections (default 10; env WAYBILL_POOL_SIZE)
  --blob-dir DIR      document files (default <db>.blobs; in the database on PostgreSQL)
  --blob-cache-mib N  memory for document files of up to 1 MiB kept after their first
                      download (default 32; 0: none)
  --json              machine-readable output
  --secret-file FILE  master secret file (default <db>.secret on SQLite; env
                      WAYBILL_MASTER_SECRET_FILE; created if missing, mode 0600). Every host of
                      one database must use the same one: a host with another refuses to start
  --config FILE       JSON settings file; keys are the option names ("port", "db", "limits", ...)

Every option is also read from WAYBILL_<NAME> (--base-url: WAYBILL_BASE_URL) and from the
config file; a flag wins over a variable, a variable over the file. Secrets stay off the command
line: WAYBILL_OPERATOR_TOKEN or --operator-token-file, WAYBILL_SMTP_PASSWORD or --smtp-password-file.
`

class UsageError extends Error {}

const base = process.env["INIT_CWD"] ?? process.cwd()

/** Flags of the commands themselves; the settings (`--db`, `--port`, ...) come from `config.ts`. */
const COMMAND_FLAGS = {
  json: { type: "boolean", default: false },
  name: { type: "string" },
  customer: { type: "string" },
  mode: { type: "string" },
  driver: { type: "string" },
  "cancel-mode": { type: "string" },
  "allow-ip": { type: "string" },
  discount: { type: "string" },
  url: { type: "string" },
  events: { type: "string" },
  since: { type: "string" },
  enable: { type: "boolean", default: false },
  disable: { type: "boolean", default: false },
  type: { type: "string" },
  file: { type: "string" },
  rotation: { type: "string" },
  batch: { type: "string" },
  id: { type: "string" },
  hours: { type: "string" },
  limit: { type: "string" },
  "starting-after": { type: "string" },
  stop: { type: "string" },
  reason: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  help: { type: "boolean", short: "h", default: false }
} as const

const parsed = (() => {
  try {
    return parseArgs({ allowPositionals: true, options: { ...flagOptions(), ...COMMAND_FLAGS } })
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
})()
const values = parsed.values as ReturnType<typeof parseArgs<{ options: typeof COMMAND_FLAGS }>>["values"]
const positionals = parsed.positionals

const json = values.json === true
const settings = (() => {
  try {
    return loadSettings({ flags: parsed.values, env: process.env, cwd: base })
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    if (json) process.stdout.write(`${JSON.stringify({ error: e.message })}\n`)
    else process.stderr.write(`error: ${e.message}\n`)
    process.exit(2)
  }
})()
const dbFile = settings.db
const secretFile = settings["secret-file"]
const blobDir = settings["blob-dir"]
const hostOptions = {
  dbFile,
  config: waybillConfig(settings),
  ...(settings["database-url"] === undefined ? {} : { databaseUrl: settings["database-url"] }),
  ...(settings["pool-size"] === undefined ? {} : { poolSize: settings["pool-size"] }),
  ...(secretFile === undefined ? {} : { secretFile }),
  ...(blobDir === undefined ? {} : { blobDir }),
  blobCacheBytes: settings["blob-cache-mib"] * 1024 * 1024
}
/** The database as messages name it (a URL's password masked). */
const databaseName = settings["database-url"] === undefined ? dbFile : describeUrl(settings["database-url"])

const out = (human: string, machine: unknown) => {
  process.stdout.write(json ? `${JSON.stringify(machine)}\n` : `${human}\n`)
}

const need = (value: string | undefined, flag: string): string => {
  if (value === undefined || value.trim() === "") throw new UsageError(`${flag} is required`)
  return value
}

const logFormat = (value: string | undefined): LogFormat => {
  try {
    return parseLogFormat(value)
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

/** `--limit` and `--starting-after` of a list command. */
const pageQuery = (): Page.Query => {
  const query = Page.parseQuery(values.limit, values["starting-after"])
  if (Either.isLeft(query)) throw new UsageError(`--${query.left.message.replace("_", "-")}`)
  return query.right
}

/** Prints a page: its lines (or `empty`), then how to get the next page when more follow. */
const outPage = <A, B>(
  page: Page.Page<A>,
  view: (item: A) => B,
  line: (b: B) => string,
  empty: string,
  head?: { readonly human: string; readonly machine: Record<string, unknown> }
) => {
  const listed = OperatorViews.page(page, view)
  const lines = listed.data.map(line)
  out(
    [
      ...(head === undefined ? [] : [head.human]),
      ...(lines.length === 0 ? [empty] : lines),
      ...(listed.next_starting_after === null ? [] : [`more: --starting-after ${listed.next_starting_after}`])
    ].join("\n"),
    { ...head?.machine, ...listed }
  )
}

const keyMode = (value: string | undefined): "live" | "test" => {
  if (value !== "live" && value !== "test") throw new UsageError("--mode must be live or test")
  return value
}

/** Runs a core program against the database, then closes it. */
const withCore = async <A, E>(program: Effect.Effect<A, E, HostServices>): Promise<A> => {
  mkdirSync(dirname(dbFile), { recursive: true })
  const database = await openHostDatabase(hostOptions)
  try {
    const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(waybillLayer(database.engine, hostOptions))))
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
  if (err._tag === "InvalidWebhook") return (e as { message: string }).message
  if (err._tag === "WebhookNotFound") return `no webhook endpoint ${(e as { id: string }).id}`
  if (err._tag === "DocumentNotFound") return `no document ${(e as { id: string }).id}`
  if (err._tag === "UserExists")
    return `${(e as { email: string }).email} already signs in (to this account or another)`
  if (err._tag === "InvalidEmail") return `not an e-mail address`
  if (err._tag === "MailFailed") return `the e-mail could not be sent: ${err.message ?? ""}`
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
  -d '${JSON.stringify({ data: { jsonstrn: "demo-1", shipments: [sampleShipment()] } }, null, 2)}'`

const commands: Record<string, () => Promise<void>> = {
  async serve() {
    mkdirSync(dirname(dbFile), { recursive: true })
    const certFile = settings["tls-cert"]
    const keyFile = settings["tls-key"]
    const mailDir = settings["mail-dir"]
    const smtp = smtpUrl(settings)
    const mailFrom = settings["mail-from"]
    const baseUrl = settings["base-url"]
    const operatorToken = settings["operator-token"]
    const trustedProxies = settings["trust-proxy"]
    const host = await serve({
      ...hostOptions,
      ...(certFile === undefined || keyFile === undefined
        ? {}
        : { tls: { cert: readFileSync(certFile), key: readFileSync(keyFile) } }),
      ...(settings["allow-insecure-http"] ? { allowInsecureHttp: true } : {}),
      mail: {
        ...(mailDir === undefined ? {} : { dir: mailDir }),
        ...(smtp === undefined ? {} : { smtpUrl: smtp }),
        ...(mailFrom === undefined ? {} : { from: mailFrom })
      },
      port: settings.port,
      host: settings.host,
      webhooks: webhookHostOptions(),
      log: { format: logFormat(settings["log-format"]) },
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(operatorToken === undefined ? {} : { operatorToken }),
      ...(trustedProxies === undefined ? {} : { trustedProxies })
    })
    const count = await host.database.db
      .selectFrom("waybill_accounts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow()
    let demo: { customer_no: string; live_key: string; test_key: string } | undefined
    // The demo account goes through the server's own engine (one engine per file).
    if (Number(count.n) === 0) {
      demo = await Effect.runPromise(
        createAccount("Demo customer").pipe(Effect.provide(waybillLayer(host.database.engine, hostOptions)))
      )
    }
    // On every interface the listening address is no address a browser uses: the portal's forms
    // must come from the public origin, and e-mailed links start with it.
    const wildcard = ["0.0.0.0", "[::]"].includes(new URL(host.url).hostname)
    if (baseUrl === undefined && wildcard)
      process.stderr.write(
        `warning: listening on every interface without --base-url: e-mailed links start with ${host.url} and the ` +
          `portal refuses forms from any other origin; pass --base-url with the URL browsers use\n`
      )
    if (json) out("", { url: host.url, db: databaseName, demo_account: demo ?? null })
    else {
      process.stdout.write(`Waybill is serving ${host.url}/api/v1 from ${databaseName}\n`)
      if (demo !== undefined) {
        process.stdout.write(
          `\nThis database was new, so a demo account was created. Its keys are shown once:\n` +
            `  customer_no  ${demo.customer_no}\n  live key     ${demo.live_key}\n  test key     ${demo.test_key}\n\n` +
            `Book a test shipment:\n\n${curlExample(host.url, demo.test_key)}\n\n` +
            `The account portal is at ${host.url}/portal/. To sign in, invite yourself and open the\n` +
            `link in the e-mail (${smtp === undefined ? `an .eml file in ${mailDir ?? `${dbFile}.mail`}` : "sent over SMTP"}):\n\n` +
            `  pnpm waybill user invite --customer ${demo.customer_no} --email you@example.com --base-url ${host.url}\n\n`
        )
      } else {
        process.stdout.write(
          `Create a customer and its keys with: pnpm waybill account create --name "Your customer"\n`
        )
      }
      process.stdout.write("Press Ctrl+C to stop.\n")
    }
    // SIGTERM (and Ctrl+C): drain, then exit 0. Readiness turns false, new connections are
    // refused, requests in flight get up to --shutdown-grace seconds, the dispatcher gives its
    // leases back. A second signal stops at once.
    const stop = (signal: NodeJS.Signals) => {
      process.once(signal, () => process.exit(1))
      if (!json) process.stdout.write(`${signal}: draining (up to ${settings["shutdown-grace"]} s)\n`)
      void host.shutdown({ graceMs: settings["shutdown-grace"] * 1000 }).then(
        () => process.exit(0),
        (e: unknown) => {
          process.stderr.write(`error while shutting down: ${describeError(e)}\n`)
          process.exit(1)
        }
      )
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
      // Accounts made by API provisioning also have a primary user (the registrant).
      const { shown, user } = await withCore(
        Effect.flatMap(Accounts.showAccount(need(positionals[2], "CUSTOMER_NO")), (shown) =>
          Effect.map(Provisioning.primaryUser(shown.account.customerNo), (user) => ({ shown, user }))
        )
      )
      const machine = {
        customer_no: shown.account.customerNo,
        name: shown.account.name,
        cancel_mode: shown.account.cancelMode,
        created_at: new Date(shown.account.createdAt).toISOString(),
        keys: shown.keys.map((k) => ({ mode: k.mode, status: k.status, generation: k.generation, hint: k.hint })),
        linked_accounts: shown.linkedAccounts,
        ip_allowlist: shown.account.ipAllowlist,
        rate_card: shown.account.rateCard,
        primary_user: Option.match(user, {
          onNone: () => null,
          onSome: (u) => ({
            email_address: u.email,
            first_name: u.firstName,
            last_name: u.lastName,
            status: u.status,
            registered_at: new Date(u.registeredAt).toISOString()
          })
        })
      }
      out(
        `customer_no  ${machine.customer_no}\nname         ${machine.name}\n` +
          `cancel mode  ${machine.cancel_mode}\n` +
          `ip allowlist ${machine.ip_allowlist.length === 0 ? "any" : machine.ip_allowlist.join(", ")}\n` +
          `rate card    ${machine.rate_card === null ? "list rates" : JSON.stringify(machine.rate_card)}\n` +
          machine.keys.map((k) => `${k.mode} key     ${k.hint}…  ${k.status}  generation ${k.generation}`).join("\n") +
          `\nlinked       ${machine.linked_accounts.length === 0 ? "none" : machine.linked_accounts.join(", ")}` +
          (machine.primary_user === null
            ? ""
            : `\nprimary user ${machine.primary_user.first_name} ${machine.primary_user.last_name} <${machine.primary_user.email_address}>  ${machine.primary_user.status}`),
        machine
      )
    } else if (sub === "set") {
      const mode = values["cancel-mode"]
      if (mode !== undefined && mode !== "local" && mode !== "provider")
        throw new UsageError("--cancel-mode must be local or provider")
      const customerNo = need(positionals[2], "CUSTOMER_NO")
      let ipAllowlist: Array<string> | undefined
      if (values["allow-ip"] !== undefined) {
        const entries = values["allow-ip"]
          .split(",")
          .map((e) => e.trim())
          .filter((e) => e !== "")
        ipAllowlist = entries.length === 1 && entries[0] === "any" ? [] : entries
        for (const entry of ipAllowlist) {
          if (Option.isNone(ClientIp.parseCidr(entry)))
            throw new UsageError(`--allow-ip: "${entry}" is not an IP address or CIDR`)
        }
      }
      let discount: number | undefined
      if (values.discount !== undefined) {
        discount = /^\d{1,3}(\.\d{1,2})?$/.test(values.discount.trim()) ? Number(values.discount) : Number.NaN
        if (!(discount >= 0 && discount <= 100)) throw new UsageError("--discount must be a percentage from 0 to 100")
      }
      const updated = await withCore(
        Effect.gen(function* () {
          const { account } = yield* Accounts.showAccount(customerNo)
          return yield* Accounts.updateAccount(customerNo, {
            ...(mode === undefined ? {} : { cancelMode: mode }),
            ...(ipAllowlist === undefined ? {} : { ipAllowlist }),
            ...(discount === undefined ? {} : { rateCard: { ...account.rateCard, discountPercent: discount } })
          })
        })
      )
      const percent = updated.rateCard?.discountPercent ?? 0
      out(
        `customer_no  ${updated.customerNo}\ncancel mode  ${updated.cancelMode}\n` +
          `ip allowlist ${updated.ipAllowlist.length === 0 ? "any" : updated.ipAllowlist.join(", ")}\n` +
          `discount     ${percent}%`,
        {
          customer_no: updated.customerNo,
          cancel_mode: updated.cancelMode,
          ip_allowlist: updated.ipAllowlist,
          discount_percent: percent
        }
      )
    } else if (sub === "link") {
      const parent = need(positionals[2], "PARENT_NO")
      const child = need(positionals[3], "CHILD_NO")
      await withCore(Accounts.linkAccounts(parent, child))
      out(`${parent} may now read the orders of ${child}`, { parent, child })
    } else if (sub === "payment") {
      const customer = need(values.customer, "--customer")
      if (values.enable && values.disable) throw new UsageError("give --enable or --disable, not both")
      const status = await withCore(
        values.enable || values.disable
          ? Provisioning.setPaymentEnablement({ customerNo: customer, enabled: values.enable })
          : Provisioning.paymentStatus(customer)
      )
      const enabledAt = status.enabledAt === null ? null : new Date(status.enabledAt).toISOString()
      out(
        status.enabled
          ? `payment of ${customer} with ${status.provider}: enabled (recorded ${enabledAt})`
          : `payment of ${customer} with ${status.provider}: not enabled`,
        { customer_no: customer, provider: status.provider, enabled: status.enabled, enabled_at: enabledAt }
      )
    } else
      throw new UsageError(
        "account create --name NAME | account show NO | account set NO | account link PARENT CHILD | account payment --customer NO [--enable|--disable]"
      )
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

commands["user"] = async () => {
  const sub = positionals[1]
  const customer = need(values.customer, "--customer")
  if (sub === "invite") {
    const email = need(values.email, "--email")
    const role = values.role
    if (role !== undefined && !User.isRole(role)) throw new UsageError("--role must be member or owner")
    // The link leaves this machine by e-mail, so it starts where serve's own e-mailed links do on
    // the same settings: --base-url, else the address serve listens on (never a request's Host).
    const configured = settings["base-url"]
    const listen = settings.host.includes(":") ? `[${settings.host}]` : settings.host
    const baseUrl =
      configured ?? `${settings["tls-cert"] === undefined ? "http" : "https"}://${listen}:${settings.port}`
    if (configured === undefined)
      process.stderr.write(
        `the link starts with ${baseUrl}, where serve listens with these settings; a public server needs --base-url URL\n`
      )
    const smtp = smtpUrl(settings)
    const mailDir = settings["mail-dir"]
    const mailFrom = settings["mail-from"]
    const mail = provisioningLayer(dbFile, {
      ...(mailDir === undefined ? {} : { dir: mailDir }),
      ...(smtp === undefined ? {} : { smtpUrl: smtp }),
      ...(mailFrom === undefined ? {} : { from: mailFrom })
    })
    // The mailer's log line (where a development e-mail was written) goes to stderr: stdout is the answer.
    const invited = await withCore(
      Users.invite({ customerNo: customer, email, ...(role === undefined ? {} : { role }), linkBase: baseUrl }).pipe(
        Effect.provide(
          Layer.merge(mail, Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)))
        )
      )
    )
    out(
      `invited ${email} (${invited.role}) to ${customer}: user ${invited.userId}; the link works once, for 24 hours`,
      {
        customer_no: customer,
        user_id: invited.userId,
        email_address: email,
        role: invited.role
      }
    )
  } else if (sub === "list") {
    const users = await withCore(Effect.zipRight(Accounts.showAccount(customer), Users.list(customer)))
    const view = users.map((u) => ({
      user_id: u.userId,
      email_address: u.email,
      role: u.role,
      status: u.active ? "active" : "invited",
      invited_by: u.invitedBy,
      created_at: new Date(u.createdAt).toISOString()
    }))
    out(
      view.length === 0
        ? "no users"
        : view.map((u) => `${u.user_id}  ${u.email_address}  ${u.role}  ${u.status}`).join("\n"),
      { customer_no: customer, data: view }
    )
  } else
    throw new UsageError("user invite --customer NO --email ADDRESS [--role member|owner] | user list --customer NO")
}

const ACTIONS = new Set<string>(Operations.ActionName.literals)

/** `label: value` lines for the values that are set; empty ones would only be noise. */
const optionalLines = (pairs: ReadonlyArray<readonly [string, string]>): Array<string> =>
  pairs.filter(([, value]) => value !== "").map(([label, value]) => `${label}: ${value}`)

const shipmentView = (v: ReturnType<typeof OperatorViews.shipment>): string =>
  [
    `${v.track_no}  ${v.state}${v.driver_id === null ? "" : `  driver ${v.driver_id}`}  ${v.livemode ? "live" : "test"}  v${v.version}`,
    `${v.service_type} by ${v.vehicle_type}, ${v.pieces} pcs, ${v.weight} lb, $${v.charge.total.toFixed(2)}`,
    `estimated ${v.estimated_delivery.local} ${v.estimated_delivery.tz}, guaranteed ${v.guaranteed_delivery.local} ${v.guaranteed_delivery.tz}`,
    `ready ${v.ready.local} ${v.ready.tz}, requested delivery ${v.requested_delivery.local} ${v.requested_delivery.tz}`,
    `contact ${v.contact}, ${v.phone}${v.email === "" ? "" : `, ${v.email}`}`,
    ...optionalLines([
      ["reference", v.billing_reference],
      ["jsonstrn", v.jsonstrn],
      [
        "needs",
        [v.signature_required ? "signature" : "", v.liftgate_required ? "liftgate" : ""].filter(Boolean).join(", ")
      ],
      ["pickup note", v.pickup_instructions],
      ["deliver note", v.deliver_instructions]
    ]),
    "stops:",
    ...v.stops.flatMap((s) => [
      `  ${s.seq} ${s.role.padEnd(12)} ${s.status.padEnd(14)} ${s.name}, ${s.address}, ${s.city} ${s.state} ${s.zip}`,
      ...optionalLines([
        ["contact", [s.contact_name, s.phone_no].filter(Boolean).join(", ")],
        ["note", s.stop_note]
      ]).map((line) => `      ${line}`)
    ]),
    ...(v.piece_details.length === 0
      ? []
      : [
          "pieces:",
          ...v.piece_details.map((p) =>
            [
              `  ${p.piece_no || "-"}`,
              p.piece_weight === "" ? "" : `weight ${p.piece_weight}`,
              [p.length, p.width, p.height].some(Boolean)
                ? `${p.length || "?"}x${p.width || "?"}x${p.height || "?"}`
                : "",
              p.pc === "" ? "" : `pc ${p.pc}`,
              p.id === "" ? "" : `id ${p.id}`,
              p.description
            ]
              .filter(Boolean)
              .join("  ")
          )
        ]),
    "events:",
    ...v.events.map((e) => `  ${e.sequence}. ${e.occurred_at}  ${e.type}`),
    `allowed now: ${v.allowed_commands.join(", ") || "nothing (terminal)"}`
  ].join("\n")

commands["ip"] = async () => {
  const sub = positionals[1]
  if (sub === "block") {
    const hours = Number(values.hours ?? 1)
    if (!Number.isFinite(hours) || hours <= 0) throw new UsageError("--hours must be a positive number")
    const b = await withCore(IpBlocks.block(need(positionals[2], "IP"), hours * 3_600_000, values.reason ?? "operator"))
    out(`blocked ${b.ipKey} until ${new Date(b.until).toISOString()}`, OperatorViews.ipBlock(b))
  } else if (sub === "unblock") {
    const removed = await withCore(Abuse.forgive(need(positionals[2], "IP")))
    out(removed ? "unblocked" : "was not blocked", { unblocked: removed })
  } else if (sub === "list") {
    const page = await withCore(IpBlocks.active(pageQuery()))
    outPage(page, OperatorViews.ipBlock, (b) => `${b.ip}  until ${b.until}  ${b.reason}`, "no blocks")
  } else throw new UsageError("ip block IP [--hours N] [--reason TEXT] | ip unblock IP | ip list [PAGE]")
}

commands["shipment"] = async () => {
  const sub = positionals[1]
  const trackNo = need(positionals[2], "TRACK_NO")
  if (sub === "show") {
    const shown = await withCore(Operations.show(trackNo))
    const v = OperatorViews.shipment(shown.shipment, shown.events)
    out(shipmentView(v), v)
    return
  }
  if (sub === undefined || !ACTIONS.has(sub)) throw new UsageError(`shipment show|${[...ACTIONS].join("|")} TRACK_NO`)
  let stop: number | undefined
  if (values.stop !== undefined) {
    if (!/^\d{1,3}$/.test(values.stop)) throw new UsageError("--stop must be a stop number (0 is the pickup)")
    stop = Number(values.stop)
  }
  const done = await withCore(
    Operations.perform(trackNo, {
      action: sub as Operations.ActionName,
      driverId: values.driver,
      stop,
      reason: values.reason
    })
  )
  const v = OperatorViews.shipment(done.shipment, done.events)
  out(shipmentView(v), v)
}

const readFile = (flag: string): Uint8Array => {
  const path = resolve(base, need(values.file, flag))
  try {
    return new Uint8Array(readFileSync(path))
  } catch {
    throw new UsageError(`cannot read ${path}`)
  }
}

const documentLine = (d: ReturnType<typeof OperatorViews.document>) =>
  `${d.id}  ${d.kind === "signature" ? "signature" : `v${d.order_version} batch ${d.batch} page ${d.page}`}  ${d.type}  ` +
  `${d.content_type}  rot ${d.rotation}  id ${d.source_id}  ` +
  `${d.removed ? "removed" : d.hidden ? "hidden" : d.shown_to_customers ? "shown" : "not shown"}`

commands["document"] = async () => {
  const sub = positionals[1]
  if (sub === "add") {
    const trackNo = need(positionals[2], "TRACK_NO")
    let batch: number | undefined
    if (values.batch !== undefined) {
      if (!/^\d{1,7}$/.test(values.batch)) throw new UsageError("--batch must be a positive integer")
      batch = Number(values.batch)
    }
    const rotation = Documents.parseRotation(values.rotation ?? "0")
    if (rotation._tag === "Left") throw new UsageError(rotation.left.message)
    const bytes = readFile("--file")
    const d = await withCore(
      Documents.addDocument({
        trackNo,
        type: need(values.type, "--type"),
        bytes,
        rotation: rotation.right,
        batch,
        sourceId: values.id
      }).pipe(Effect.flatMap(Documents.forOperator), Effect.map(OperatorViews.document))
    )
    out(d.id, d)
  } else if (sub === "list") {
    const listed = await withCore(Documents.listForOperator(need(positionals[2], "TRACK_NO"), pageQuery()))
    const { data: _data, has_more: _more, next_starting_after: _next, ...order } = OperatorViews.orderDocuments(listed)
    outPage(listed.page, OperatorViews.document, documentLine, "no documents", {
      human: `${order.track_no}  order version ${order.order_version}  invoice ${order.invoice || "-"}`,
      machine: order
    })
  } else if (sub === "hide" || sub === "unhide" || sub === "remove") {
    const view = await withCore(
      Documents.setVisibility(need(positionals[2], "DOC_ID"), sub).pipe(
        Effect.flatMap(Documents.forOperator),
        Effect.map(OperatorViews.document)
      )
    )
    out(documentLine(view), view)
  } else if (sub === "replace") {
    const id = need(positionals[2], "DOC_ID")
    const view = await withCore(
      Documents.replaceDocument(id, readFile("--file")).pipe(
        Effect.flatMap(Documents.forOperator),
        Effect.map(OperatorViews.document)
      )
    )
    out(documentLine(view), view)
  } else
    throw new UsageError(
      "document add TRACK_NO --type TYPE --file PATH | document list TRACK_NO [PAGE] | document hide|unhide|remove DOC_ID | document replace DOC_ID --file PATH"
    )
}

commands["signature"] = async () => {
  if (positionals[1] !== "add") throw new UsageError("signature add TRACK_NO --name RECIPIENT --file PATH")
  const trackNo = need(positionals[2], "TRACK_NO")
  const d = await withCore(
    Documents.addSignature({ trackNo, name: need(values.name, "--name"), bytes: readFile("--file") }).pipe(
      Effect.flatMap(Documents.forOperator),
      Effect.map(OperatorViews.document)
    )
  )
  out(d.id, d)
}

commands["order"] = async () => {
  const sub = positionals[1]
  const trackNo = need(positionals[2], "TRACK_NO")
  if (sub === "new-version") {
    const version = await withCore(Documents.newOrderVersion(trackNo))
    out(`${trackNo} is now at order version ${version}`, { track_no: trackNo, order_version: version })
  } else if (sub === "set-invoice") {
    const order = await withCore(Documents.setInvoice(trackNo, need(positionals[3], "INVOICE_NO")))
    out(`${order.trackNo} invoice ${order.invoice}`, { track_no: order.trackNo, invoice: order.invoice })
  } else throw new UsageError("order new-version TRACK_NO | order set-invoice TRACK_NO INVOICE_NO")
}

const webhookHostOptions = (): WebhookHostOptions => {
  const allowPrivate = settings["webhook-allow-private"]
  const caFile = settings["webhook-ca"]
  if (allowPrivate !== undefined) {
    try {
      allowList(allowPrivate)
    } catch {
      throw new UsageError("--webhook-allow-private takes comma-separated IP addresses or CIDRs")
    }
  }
  if (settings["webhook-lease-seconds"] < 1) throw new UsageError("--webhook-lease-seconds must be at least 1")
  return {
    ...(allowPrivate === undefined ? {} : { allowPrivate }),
    ...(caFile === undefined ? {} : { ca: [readFileSync(caFile, "utf8")] }),
    ...(settings["no-webhooks"] ? { dispatch: false } : {}),
    leaseMs: settings["webhook-lease-seconds"] * 1000
  }
}

const endpointLine = (e: ReturnType<typeof OperatorViews.endpoint>) =>
  `${e.id}  ${e.customer_no}  ${e.enabled ? "enabled" : `disabled (${e.disabled_reason ?? "operator"})`}  ${e.url}  ${e.events.join(",")}`

commands["webhook"] = async () => {
  const sub = positionals[1]
  if (sub === "add") {
    const options = webhookHostOptions()
    const created = await withCore(
      Webhooks.addEndpoint(
        {
          customerNo: need(values.customer, "--customer"),
          url: need(values.url, "--url"),
          eventTypes: need(values.events, "--events").split(",")
        },
        { allowPrivate: allowList(options.allowPrivate) }
      )
    )
    const secret = Redacted.value(created.secret)
    out(`endpoint ${created.endpoint.id}\nsecret   ${secret}\n(the secret is shown once; store it now)`, {
      ...OperatorViews.endpoint(created.endpoint),
      secret
    })
  } else if (sub === "list") {
    const page = await withCore(Webhooks.listEndpoints(values.customer, pageQuery()))
    outPage(page, OperatorViews.endpoint, endpointLine, "no endpoints")
  } else if (sub === "rotate-secret") {
    const rotated = await withCore(Webhooks.rotateSecret(need(positionals[2], "ENDPOINT_ID")))
    const secret = Redacted.value(rotated.secret)
    out(
      `secret   ${secret}\n(shown once; the previous secret also signs until ${OperatorViews.endpoint(rotated.endpoint).previous_secret_until})`,
      {
        ...OperatorViews.endpoint(rotated.endpoint),
        secret
      }
    )
  } else if (sub === "disable" || sub === "enable") {
    const e = await withCore(Webhooks.setEnabled(need(positionals[2], "ENDPOINT_ID"), sub === "enable"))
    out(endpointLine(OperatorViews.endpoint(e)), OperatorViews.endpoint(e))
  } else if (sub === "update") {
    const id = need(positionals[2], "ENDPOINT_ID")
    if (values.url === undefined && values.events === undefined) throw new UsageError("give --url, --events or both")
    const e = await withCore(
      Webhooks.updateEndpoint(
        id,
        {
          ...(values.url === undefined ? {} : { url: values.url }),
          ...(values.events === undefined ? {} : { eventTypes: values.events.split(",") })
        },
        { allowPrivate: allowList(webhookHostOptions().allowPrivate) }
      )
    )
    out(endpointLine(OperatorViews.endpoint(e)), OperatorViews.endpoint(e))
  } else if (sub === "delete") {
    const e = await withCore(Webhooks.deleteEndpoint(need(positionals[2], "ENDPOINT_ID")))
    out(`deleted ${e.id} (its queued deliveries were dropped)`, { ...OperatorViews.endpoint(e), deleted: true })
  } else if (sub === "deliveries") {
    const d = await withCore(Webhooks.deliveries(need(positionals[2], "ENDPOINT_ID"), pageQuery()))
    const endpoint = OperatorViews.endpoint(d.endpoint)
    outPage(
      d.page,
      OperatorViews.delivery,
      (x) =>
        `  ${x.event_id}  ${x.track_no || "-"} #${x.sequence}  ${x.status}  attempts ${x.attempts}` +
        (x.next_attempt_at === null ? "" : `  next ${x.next_attempt_at}`),
      "  no deliveries",
      { human: `${endpointLine(endpoint)}\ndeliveries:`, machine: { endpoint } }
    )
  } else if (sub === "log") {
    const log = await withCore(Webhooks.deliveryLog(need(positionals[2], "ENDPOINT_ID"), pageQuery()))
    const endpoint = OperatorViews.endpoint(log.endpoint)
    outPage(
      log.page,
      OperatorViews.attempt,
      (a) =>
        `  ${a.at}  ${a.event_id}  attempt ${a.attempt}  ${a.status ?? "no answer"}  ${a.duration_ms} ms  ${JSON.stringify(a.response.slice(0, 80))}`,
      "  no attempts",
      { human: `${endpointLine(endpoint)}\nlog:`, machine: { endpoint } }
    )
  } else if (sub === "resend") {
    const eventId = need(positionals[2], "EVENT_ID")
    const n = await withCore(Webhooks.resend(eventId))
    out(`${eventId} queued for ${n} endpoint(s)`, { event_id: eventId, queued: n })
  } else if (sub === "recover") {
    const id = need(positionals[2], "ENDPOINT_ID")
    const since = Date.parse(need(values.since, "--since"))
    if (Number.isNaN(since)) throw new UsageError("--since must be a time, e.g. 2026-11-21T00:00:00Z")
    const n = await withCore(Webhooks.recover(id, since))
    out(`${n} event(s) queued again for ${id}`, { endpoint_id: id, queued: n })
  } else if (sub === "test") {
    const id = need(positionals[2], "ENDPOINT_ID")
    const eventId = await withCore(Webhooks.sendTest(id))
    out(`webhook.test ${eventId} queued for ${id}`, { endpoint_id: id, event_id: eventId })
  } else
    throw new UsageError(
      "webhook add --customer NO --url URL --events a,b | webhook list [PAGE] | webhook update ENDPOINT_ID [--url URL] [--events a,b] | webhook deliveries|log ENDPOINT_ID [PAGE] | webhook rotate-secret|disable|enable|delete|test ENDPOINT_ID | webhook resend EVENT_ID | webhook recover ENDPOINT_ID --since TIME"
    )
}

commands["idempotency"] = async () => {
  const sub = positionals[1]
  if (sub !== "purge") throw new UsageError("idempotency purge")
  const n = await withCore(Idempotency.purgeExpired)
  out(`${n} expired Idempotency-Key record(s) deleted`, { deleted: n })
}

commands["activity"] = async () => {
  const sub = positionals[1]
  if (sub !== "purge") throw new UsageError("activity purge")
  const n = await withCore(Activity.purgeExpired)
  out(`${n} activity entr${n === 1 ? "y" : "ies"} older than 30 days deleted`, { deleted: n })
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
  // A setting found bad only when used (say, the SMTP URL with a password of its own): exit 2.
  if (e instanceof ConfigError) {
    if (json) process.stdout.write(`${JSON.stringify({ error: e.message })}\n`)
    else process.stderr.write(`error: ${e.message}\n`)
    process.exit(2)
  }
  const message = e instanceof UsageError ? `${e.message}\n\n${USAGE}` : describeError(e)
  if (json)
    process.stdout.write(`${JSON.stringify({ error: e instanceof UsageError ? e.message : describeError(e) })}\n`)
  else process.stderr.write(`error: ${message}\n`)
  process.exit(e instanceof UsageError ? 2 : 1)
})
