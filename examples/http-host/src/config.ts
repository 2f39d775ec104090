/**
 * @module config
 *
 * The example host's settings, from four places in this order of precedence: a command-line
 * flag, a `WAYBILL_*` environment variable (upper snake case of the flag: `--base-url` ->
 * `WAYBILL_BASE_URL`), a key of the JSON file named by `--config` (keys are the flag names), and
 * the default. Every option is one line of {@link OPTIONS}; the CLI's flag parsing, the variable
 * and file key names, the checks and the table in docs/operations.md all follow from that line.
 *
 * Secrets are kept `Redacted` from the moment they are read and never need the command line:
 * the operator token comes from `WAYBILL_OPERATOR_TOKEN` or `--operator-token-file`, the SMTP
 * password from `WAYBILL_SMTP_PASSWORD` or `--smtp-password-file`.
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Config } from "@waybill/core"

/** How an option's text (flag or variable) or JSON value (config file) is read. */
export type Kind =
  | "string"
  /** A file or directory: relative to the working directory, or to the config file's own directory. */
  | "path"
  | "integer"
  | "boolean"
  /** Comma-separated in a flag or variable; a JSON array of strings (or that text) in the file. */
  | "list"
  /** Kept `Redacted`. */
  | "secret"
  /** Request limits and abuse thresholds: JSON, any part of core `Config.Limits`, merged onto the defaults. */
  | "limits"

/** One option. */
export interface OptionSpec {
  readonly kind: Kind
  /** One line for `--help` and the docs table. */
  readonly help: string
  readonly default?: string | number | boolean
  /** Where it may come from (default: all three). Secrets that must stay off the command line say so here. */
  readonly from?: ReadonlyArray<"flag" | "env" | "file">
}

/** Memory (MiB) for document files kept after their first download, unless told otherwise. */
export const DEFAULT_BLOB_CACHE_MIB = 32

/**
 * Every option. Adding one is adding a line here (and using `settings["the-name"]` where it
 * matters); the parser, the `WAYBILL_*` variable, the config-file key and the docs table check
 * follow.
 */
export const OPTIONS = {
  config: { kind: "path", help: "JSON file of settings (keys are the flag names)", from: ["flag", "env"] },
  db: { kind: "path", help: "SQLite database file (created if missing)", default: ".waybill/waybill.db" },
  "blob-dir": { kind: "path", help: "document files (default `<db>.blobs`)" },
  "blob-cache-mib": {
    kind: "integer",
    help: "memory for document files of up to 1 MiB kept after their first download (0: none)",
    default: DEFAULT_BLOB_CACHE_MIB
  },
  "database-url": {
    kind: "secret",
    help: "PostgreSQL instead of the SQLite file (`postgres://USER@HOST:PORT/DB`); needs `secret-file`"
  },
  "pool-size": { kind: "integer", help: "PostgreSQL connections per host (default 10)" },
  "secret-file": {
    kind: "path",
    help: "master secret file (default `<db>.secret` on SQLite, created, mode 0600); the same on every host"
  },
  port: { kind: "integer", help: "port to listen on (0: any free port)", default: 8080 },
  host: { kind: "string", help: "address to listen on", default: "127.0.0.1" },
  "base-url": { kind: "string", help: "public URL of the server, for links in answers and e-mails" },
  "operator-token": {
    kind: "secret",
    help: "token guarding `/ops/v1` (prefer the variable or the file: flags show in `ps`)"
  },
  "operator-token-file": { kind: "path", help: "file holding the operator token (one line)" },
  "trust-proxy": { kind: "list", help: "proxies (addresses or CIDRs) whose X-Forwarded-For is believed" },
  "tls-cert": { kind: "path", help: "PEM certificate chain: serve HTTPS (with `tls-key`)" },
  "tls-key": { kind: "path", help: "PEM private key of `tls-cert`" },
  "allow-insecure-http": {
    kind: "boolean",
    help: "let the documents endpoint answer over plain HTTP (development only)",
    default: false
  },
  "mail-dir": { kind: "path", help: "folder for provisioning e-mails as `.eml` files (default `<db>.mail`)" },
  "smtp-url": { kind: "secret", help: "send e-mail over SMTP (`smtp://user@host:587`, `smtps://...`)" },
  "smtp-password": {
    kind: "secret",
    help: "password for the SMTP URL's user (environment only)",
    from: ["env"]
  },
  "smtp-password-file": { kind: "path", help: "file holding the SMTP password (one line)" },
  "mail-from": { kind: "string", help: "From header of provisioning e-mails (default `Waybill <no-reply@localhost>`)" },
  "webhook-allow-private": { kind: "list", help: "private addresses or CIDRs webhook endpoints may use anyway" },
  "webhook-ca": { kind: "path", help: "extra trusted CA certificate (PEM) for webhook receivers" },
  "no-webhooks": { kind: "boolean", help: "do not run the webhook dispatcher in this process", default: false },
  "webhook-lease-seconds": {
    kind: "integer",
    help: "how long a host holds a claimed delivery, renewed while sending",
    default: 60
  },
  "log-format": { kind: "string", help: "`json` (one object per line, default) or `pretty` (for a terminal)" },
  "shutdown-grace": {
    kind: "integer",
    help: "seconds in-flight requests get to finish after SIGTERM",
    default: 25
  },
  limits: {
    kind: "limits",
    help: "request limits and abuse thresholds (JSON, any part of `Config.Limits`)"
  },
  "ticket-ttl-minutes": {
    kind: "integer",
    help: "lifetime of document download links, minutes",
    default: Config.defaults.documents.ticketTtlMinutes
  }
} as const satisfies Record<string, OptionSpec>

export type OptionName = keyof typeof OPTIONS

type ValueOf<K extends Kind> = K extends "integer"
  ? number
  : K extends "boolean"
    ? boolean
    : K extends "list"
      ? ReadonlyArray<string>
      : K extends "secret"
        ? Redacted.Redacted<string>
        : K extends "limits"
          ? Config.Limits
          : string

/** The resolved settings: an option with a default is always set. */
export type Settings = {
  readonly [N in OptionName]: (typeof OPTIONS)[N] extends { readonly default: unknown }
    ? ValueOf<(typeof OPTIONS)[N]["kind"]>
    : ValueOf<(typeof OPTIONS)[N]["kind"]> | undefined
}

/** A setting that cannot be used; the message names where it came from (flag, variable or file key). */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
}

const sources = (spec: OptionSpec) => spec.from ?? (["flag", "env", "file"] as const)

/** The environment variable of an option: `--base-url` -> `WAYBILL_BASE_URL`. */
/** Variables not named after their flag (the master secret's is shared with other tools of a fleet). */
const ENV_NAMES: Readonly<Record<string, string>> = { "secret-file": "WAYBILL_MASTER_SECRET_FILE" }

export const envName = (name: string): string => ENV_NAMES[name] ?? `WAYBILL_${name.toUpperCase().replace(/-/g, "_")}`

/** The `node:util` `parseArgs` options of every option that may be given as a flag. */
export const flagOptions = (): Record<string, { readonly type: "string" | "boolean" }> =>
  Object.fromEntries(
    Object.entries(OPTIONS as Record<string, OptionSpec>)
      .filter(([, spec]) => sources(spec).includes("flag"))
      .map(([name, spec]) => [name, { type: spec.kind === "boolean" ? "boolean" : "string" }])
  )

/** Partial limits: what a config file or variable may give; the rest comes from the defaults. */
const LimitsInput = Schema.Struct({
  perKey: Schema.optional(Config.RateLimitRule.pipe(Schema.partialWith({ exact: true }))),
  perClient: Schema.optional(Config.RateLimitRule.pipe(Schema.partialWith({ exact: true }))),
  abuse: Schema.optional(Config.AbuseLimits.pipe(Schema.partialWith({ exact: true })))
})

const decodeLimits = (value: unknown, where: string): Config.Limits => {
  const parsed = Schema.decodeUnknownEither(LimitsInput, { onExcessProperty: "error", errors: "all" })(value)
  if (Either.isLeft(parsed)) throw new ConfigError(`${where}: ${issues(parsed.left)}`)
  const d = Config.defaults.limits
  return {
    perKey: { ...d.perKey, ...parsed.right.perKey },
    perClient: { ...d.perClient, ...parsed.right.perClient },
    abuse: { ...d.abuse, ...parsed.right.abuse }
  }
}

/**
 * `perKey.requests: Expected a positive number, actual -1; ...`. An optional member reports
 * its failure twice (as the member, and as "not undefined" for the whole): the second is noise.
 */
const issues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .filter((i) => !i.message.startsWith("Expected undefined"))
    .map((i) => (i.path.length === 0 ? i.message : `${i.path.map(String).join(".")}: ${i.message}`))
    .join("; ")

const BOOLEANS: Readonly<Record<string, boolean>> = {
  true: true,
  false: false,
  "1": true,
  "0": false,
  yes: true,
  no: false,
  on: true,
  off: false
}

/** Reads an option's text (a flag's or a variable's). */
const fromText = (spec: OptionSpec, text: string, where: string, base: string): unknown => {
  switch (spec.kind) {
    case "integer":
      if (!/^\d{1,9}$/.test(text.trim())) throw new ConfigError(`${where} must be a whole number, got "${text}"`)
      return Number(text.trim())
    case "boolean": {
      const b = BOOLEANS[text.trim().toLowerCase()]
      if (b === undefined) throw new ConfigError(`${where} must be true or false, got "${text}"`)
      return b
    }
    case "list":
      return text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
    case "path":
      if (text.trim() === "") throw new ConfigError(`${where} must not be empty`)
      return resolve(base, text)
    case "secret":
      if (text === "") throw new ConfigError(`${where} must not be empty`)
      return Redacted.make(text)
    case "limits": {
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        throw new ConfigError(`${where} must be JSON, e.g. {"perKey": {"requests": 600}}`)
      }
      return decodeLimits(json, where)
    }
    case "string":
      return text
  }
}

/** Reads an option's value from the config file. */
const fromJson = (spec: OptionSpec, value: unknown, where: string, base: string): unknown => {
  switch (spec.kind) {
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
        throw new ConfigError(`${where} must be a whole number, got ${JSON.stringify(value)}`)
      return value
    case "boolean":
      if (typeof value !== "boolean")
        throw new ConfigError(`${where} must be true or false, got ${JSON.stringify(value)}`)
      return value
    case "list":
      if (typeof value === "string") return fromText(spec, value, where, base)
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
        throw new ConfigError(`${where} must be a list of strings, got ${JSON.stringify(value)}`)
      return value
    case "limits":
      return decodeLimits(value, where)
    case "string":
    case "path":
    case "secret":
      if (typeof value !== "string") throw new ConfigError(`${where} must be a string, got ${typeof value}`)
      return fromText(spec, value, where, base)
  }
}

/** Where the settings come from. */
export interface Sources {
  /** Flags as `parseArgs` returned them (absent ones `undefined`). */
  readonly flags: Readonly<Record<string, string | boolean | undefined>>
  readonly env: Readonly<Record<string, string | undefined>>
  /** Relative paths in flags and variables are resolved against it. */
  readonly cwd: string
  /** Reads a file (tests pass their own); default `readFileSync(path, "utf8")`. */
  readonly readFile?: (path: string) => string
}

/**
 * Resolves every option: flag, then variable, then config file, then default. Throws a
 * {@link ConfigError} naming the flag, variable or file key of the first bad value, an unknown
 * key in the file, or two sources of one secret.
 */
export const loadSettings = (src: Sources): Settings => {
  const read = src.readFile ?? ((path: string) => readFileSync(path, "utf8"))
  const specs = OPTIONS as Record<string, OptionSpec>
  const pick = (name: string, file: Record<string, unknown>, fileBase: string, fileName: string): unknown => {
    const spec = specs[name]!
    const allowed = sources(spec)
    const flag = src.flags[name]
    if (allowed.includes("flag") && flag !== undefined) {
      if (typeof flag === "boolean") return flag
      return fromText(spec, flag, `--${name}`, src.cwd)
    }
    const variable = src.env[envName(name)]
    if (allowed.includes("env") && variable !== undefined && variable !== "")
      return fromText(spec, variable, envName(name), src.cwd)
    if (allowed.includes("file") && name in file)
      return fromJson(spec, file[name], `${fileName}: key "${name}"`, fileBase)
    if (spec.default === undefined) return undefined
    return spec.kind === "path" ? resolve(src.cwd, String(spec.default)) : spec.default
  }

  const configFile = pick("config", {}, src.cwd, "") as string | undefined
  let file: Record<string, unknown> = {}
  if (configFile !== undefined) {
    let text: string
    try {
      text = read(configFile)
    } catch {
      throw new ConfigError(`cannot read the config file ${configFile}`)
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new ConfigError(`${configFile} is not JSON`)
    }
    if (json === null || typeof json !== "object" || Array.isArray(json))
      throw new ConfigError(`${configFile} must hold a JSON object whose keys are option names`)
    file = json as Record<string, unknown>
    for (const key of Object.keys(file)) {
      const spec = specs[key]
      if (spec === undefined || !sources(spec).includes("file"))
        throw new ConfigError(
          spec === undefined
            ? `${configFile}: unknown key "${key}"`
            : `${configFile}: key "${key}" is not read from the file (${sources(spec)
                .map((s) => (s === "env" ? envName(key) : `--${key}`))
                .join(" or ")})`
        )
    }
  }
  const fileBase = configFile === undefined ? src.cwd : dirname(configFile)
  const settings: Record<string, unknown> = {}
  for (const name of Object.keys(specs)) settings[name] = pick(name, file, fileBase, configFile ?? "")

  // A secret named in two ways is a mistake either way round; refuse rather than guess.
  const secretFrom = (value: string, file: string, label: string): Redacted.Redacted<string> | undefined => {
    const direct = settings[value] as Redacted.Redacted<string> | undefined
    const path = settings[file] as string | undefined
    if (direct !== undefined && path !== undefined)
      throw new ConfigError(`give the ${label} once: ${envName(value)} or --${file}, not both`)
    if (path === undefined) return direct
    let text: string
    try {
      text = read(path)
    } catch {
      throw new ConfigError(`cannot read --${file} ${path}`)
    }
    const secret = text.replace(/\r?\n$/, "")
    if (secret === "") throw new ConfigError(`--${file} ${path} is empty`)
    return Redacted.make(secret)
  }
  settings["operator-token"] = secretFrom("operator-token", "operator-token-file", "operator token")
  settings["smtp-password"] = secretFrom("smtp-password", "smtp-password-file", "SMTP password")
  if (settings["smtp-password"] !== undefined && settings["smtp-url"] === undefined)
    throw new ConfigError("an SMTP password needs --smtp-url")
  if ((settings["tls-cert"] === undefined) !== (settings["tls-key"] === undefined))
    throw new ConfigError("--tls-cert and --tls-key go together")
  return settings as Settings
}

/**
 * The SMTP URL with the password put in, still `Redacted`; the URL must name the user and not
 * carry a password of its own.
 */
export const smtpUrl = (settings: Settings): Redacted.Redacted<string> | undefined => {
  const url = settings["smtp-url"]
  const password = settings["smtp-password"]
  if (url === undefined || password === undefined) return url
  let parsed: URL
  try {
    parsed = new URL(Redacted.value(url))
  } catch {
    throw new ConfigError("--smtp-url is not a URL")
  }
  if (parsed.username === "") throw new ConfigError("--smtp-url must name the user the SMTP password is for")
  if (parsed.password !== "") throw new ConfigError("--smtp-url already has a password; give it once")
  parsed.password = encodeURIComponent(Redacted.value(password))
  return Redacted.make(parsed.href)
}

/** The `WaybillConfig` of these settings: the defaults with the limits and ticket lifetime set. */
export const waybillConfig = (settings: Settings): Config.WaybillConfigShape => ({
  ...Config.defaults,
  limits: settings.limits ?? Config.defaults.limits,
  documents: { ...Config.defaults.documents, ticketTtlMinutes: settings["ticket-ttl-minutes"] }
})

/** Rows of the docs table: flag, variable, file key, default. */
export const describeOptions = (): ReadonlyArray<{
  readonly name: OptionName
  readonly flag: string | undefined
  readonly env: string | undefined
  readonly fileKey: string | undefined
  readonly spec: OptionSpec
}> =>
  (Object.entries(OPTIONS) as Array<[OptionName, OptionSpec]>).map(([name, spec]) => ({
    name,
    flag: sources(spec).includes("flag") ? `--${name}` : undefined,
    env: sources(spec).includes("env") ? envName(name) : undefined,
    fileKey: sources(spec).includes("file") ? name : undefined,
    spec
  }))

/**
 * The rows of the settings table in docs/operations.md (flag, variable, file key, default,
 * meaning), which docs.test.ts checks the page against.
 */
export const configTableRows = (): ReadonlyArray<string> =>
  describeOptions().map((row) => {
    const code = (text: string | undefined) => (text === undefined ? "-" : `\`${text}\``)
    const fallback = row.spec.default === undefined ? undefined : String(row.spec.default)
    return `| ${code(row.flag)} | ${code(row.env)} | ${code(row.fileKey)} | ${code(fallback)} | ${row.spec.help} |`
  })
