/**
 * The host's settings: precedence (flag, variable, file, default), the checks that name the
 * flag, variable or file key at fault, secrets kept Redacted, and the limits decoded onto the
 * defaults. Files are an in-memory map, so nothing touches the disk.
 */
import { parseArgs } from "node:util"
import { describe, expect, it } from "vitest"
import * as Redacted from "effect/Redacted"
import { Config } from "@waybill/core"
import {
  ConfigError,
  describeOptions,
  envName,
  flagOptions,
  loadSettings,
  OPTIONS,
  type Settings,
  smtpUrl,
  waybillConfig
} from "../src/config.js"

const CWD = "/srv/waybill"

const load = (
  argv: ReadonlyArray<string>,
  env: Record<string, string> = {},
  files: Record<string, string> = {}
): Settings => {
  const { values } = parseArgs({ args: [...argv], options: flagOptions(), allowPositionals: true })
  return loadSettings({
    flags: values,
    env,
    cwd: CWD,
    readFile: (path) => {
      const text = files[path]
      if (text === undefined) throw new Error(`ENOENT ${path}`)
      return text
    }
  })
}

const fails = (f: () => unknown): string => {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return (e as Error).message
  }
  throw new Error("expected a ConfigError")
}

describe("host settings", () => {
  it("takes a flag over a variable, a variable over the config file, the file over the default", () => {
    const file = { "/etc/waybill.json": JSON.stringify({ port: 7000, host: "0.0.0.0", "base-url": "https://f" }) }
    const all = load(
      ["--config", "/etc/waybill.json", "--port", "9000"],
      { WAYBILL_PORT: "8000", WAYBILL_HOST: "::1" },
      file
    )
    expect([all.port, all.host, all["base-url"]]).toEqual([9000, "::1", "https://f"])
    expect(load(["--config", "/etc/waybill.json"], { WAYBILL_PORT: "8000" }, file).port).toBe(8000)
    expect(load(["--config", "/etc/waybill.json"], {}, file).port).toBe(7000)
    expect(load([]).port).toBe(8080)
    expect(load([]).host).toBe("127.0.0.1")
    expect(load([])["shutdown-grace"]).toBe(25)
    expect(load([])["base-url"]).toBeUndefined()
    // The config file itself may come from a variable.
    expect(load([], { WAYBILL_CONFIG: "/etc/waybill.json" }, file).port).toBe(7000)
  })

  it("names every variable after its flag, and every option has a flag, a variable or a file key", () => {
    expect(envName("base-url")).toBe("WAYBILL_BASE_URL")
    expect(envName("webhook-allow-private")).toBe("WAYBILL_WEBHOOK_ALLOW_PRIVATE")
    for (const row of describeOptions()) expect(row.env ?? row.flag ?? row.fileKey).toBeDefined()
    expect(load([], { WAYBILL_BASE_URL: "https://waybill.example.com" })["base-url"]).toBe(
      "https://waybill.example.com"
    )
  })

  it("reads booleans, lists and paths from each place; relative paths from the file are the file's", () => {
    const files = {
      "/etc/w/waybill.json": JSON.stringify({ "no-webhooks": true, "trust-proxy": ["10.0.0.1"], db: "data/w.db" })
    }
    const fromFile = load(["--config", "/etc/w/waybill.json"], {}, files)
    expect([fromFile["no-webhooks"], fromFile["trust-proxy"], fromFile.db]).toEqual([
      true,
      ["10.0.0.1"],
      "/etc/w/data/w.db"
    ])
    const fromEnv = load([], {
      WAYBILL_NO_WEBHOOKS: "yes",
      WAYBILL_TRUST_PROXY: "10.0.0.1, 10.0.0.0/8",
      WAYBILL_DB: "x.db"
    })
    expect([fromEnv["no-webhooks"], fromEnv["trust-proxy"], fromEnv.db]).toEqual([
      true,
      ["10.0.0.1", "10.0.0.0/8"],
      "/srv/waybill/x.db"
    ])
    const fromFlags = load(["--no-webhooks", "--trust-proxy", "::1", "--db", "/abs.db"])
    expect([fromFlags["no-webhooks"], fromFlags["trust-proxy"], fromFlags.db]).toEqual([true, ["::1"], "/abs.db"])
    expect([load([])["no-webhooks"], load([]).db]).toEqual([false, "/srv/waybill/.waybill/waybill.db"])
  })

  it("refuses bad values with the flag, variable or file key that holds them", () => {
    expect(fails(() => load(["--port", "80a"]))).toBe('--port must be a whole number, got "80a"')
    expect(fails(() => load([], { WAYBILL_PORT: "-1" }))).toBe('WAYBILL_PORT must be a whole number, got "-1"')
    expect(fails(() => load([], { WAYBILL_ALLOW_INSECURE_HTTP: "maybe" }))).toContain("WAYBILL_ALLOW_INSECURE_HTTP")
    const file = (json: unknown) => ({ "/c.json": JSON.stringify(json) })
    expect(fails(() => load(["--config", "/c.json"], {}, file({ port: "8080" })))).toBe(
      '/c.json: key "port" must be a whole number, got "8080"'
    )
    expect(fails(() => load(["--config", "/c.json"], {}, file({ prot: 1 })))).toBe('/c.json: unknown key "prot"')
    expect(fails(() => load(["--config", "/c.json"], {}, file({ "smtp-password": "x" })))).toContain(
      "WAYBILL_SMTP_PASSWORD"
    )
    expect(fails(() => load(["--config", "/c.json"], {}, file([1])))).toContain("JSON object")
    expect(fails(() => load(["--config", "/c.json"], {}, { "/c.json": "{port: 1}" }))).toBe("/c.json is not JSON")
    expect(fails(() => load(["--config", "/missing.json"]))).toBe("cannot read the config file /missing.json")
    expect(fails(() => load(["--tls-cert", "c.pem"]))).toBe("--tls-cert and --tls-key go together")
  })

  it("decodes limits onto the defaults with Effect Schema, naming the key at fault", () => {
    const files = {
      "/c.json": JSON.stringify({ limits: { perKey: { requests: 600 }, abuse: { maxMisses: 5 } } })
    }
    const s = load(["--config", "/c.json"], {}, files)
    expect(s.limits).toEqual({
      perKey: { ...Config.defaults.limits.perKey, requests: 600 },
      perClient: Config.defaults.limits.perClient,
      abuse: { ...Config.defaults.limits.abuse, maxMisses: 5 }
    })
    expect(waybillConfig(s).limits).toEqual(s.limits)
    expect(waybillConfig(load([]))).toEqual(Config.defaults)
    expect(waybillConfig(load([], { WAYBILL_TICKET_TTL_MINUTES: "5" })).documents.ticketTtlMinutes).toBe(5)
    expect(load([], { WAYBILL_LIMITS: '{"perClient": {"windowSeconds": 30}}' }).limits?.perClient).toEqual({
      ...Config.defaults.limits.perClient,
      windowSeconds: 30
    })
    const bad = fails(() =>
      load(["--config", "/c.json"], {}, { "/c.json": JSON.stringify({ limits: { perKey: { requests: -1 } } }) })
    )
    expect(bad).toBe('/c.json: key "limits": perKey.requests: Expected a positive number, actual -1')
    expect(fails(() => load([], { WAYBILL_LIMITS: '{"perkey": {}}' }))).toContain(
      "WAYBILL_LIMITS: perkey: is unexpected"
    )
    expect(fails(() => load(["--limits", "{"]))).toContain("--limits must be JSON")
    expect(fails(() => load([], { WAYBILL_LIMITS: '{"abuse": {"blockSeconds": []}}' }))).toContain("abuse.blockSeconds")
  })

  it("keeps secrets Redacted and takes them from a variable or a file, never both", () => {
    const files = { "/run/secrets/op": "op_from_file\n", "/run/secrets/smtp": "p@ss word\n" }
    const fromEnv = load([], { WAYBILL_OPERATOR_TOKEN: "op_from_env" })
    expect(Redacted.isRedacted(fromEnv["operator-token"])).toBe(true)
    expect(Redacted.value(fromEnv["operator-token"]!)).toBe("op_from_env")
    expect(String(fromEnv["operator-token"])).not.toContain("op_from_env")
    expect(JSON.stringify(fromEnv)).not.toContain("op_from_env")
    const fromFile = load(["--operator-token-file", "/run/secrets/op"], {}, files)
    expect(Redacted.value(fromFile["operator-token"]!)).toBe("op_from_file")
    expect(
      fails(() => load(["--operator-token-file", "/run/secrets/op"], { WAYBILL_OPERATOR_TOKEN: "x" }, files))
    ).toBe("give the operator token once: WAYBILL_OPERATOR_TOKEN or --operator-token-file, not both")
    expect(fails(() => load(["--operator-token-file", "/nope"]))).toBe("cannot read --operator-token-file /nope")

    // The SMTP password has no flag at all, and goes into the URL only Redacted.
    expect(flagOptions()["smtp-password"]).toBeUndefined()
    expect(OPTIONS["smtp-password"].from).toEqual(["env"])
    const smtp = load(
      ["--smtp-url", "smtp://mailer@mail.example.com:587", "--smtp-password-file", "/run/secrets/smtp"],
      {},
      files
    )
    const url = smtpUrl(smtp)!
    expect(Redacted.isRedacted(url)).toBe(true)
    expect(new URL(Redacted.value(url)).password).toBe(encodeURIComponent("p@ss word"))
    const viaEnv = load(["--smtp-url", "smtp://mailer@mail.example.com"], { WAYBILL_SMTP_PASSWORD: "pw" })
    expect(new URL(Redacted.value(smtpUrl(viaEnv)!)).password).toBe("pw")
    expect(
      fails(() => smtpUrl(load(["--smtp-url", "smtp://mail.example.com"], { WAYBILL_SMTP_PASSWORD: "pw" })))
    ).toContain("name the user")
    expect(
      fails(() => smtpUrl(load(["--smtp-url", "smtp://u:old@mail.example.com"], { WAYBILL_SMTP_PASSWORD: "pw" })))
    ).toContain("already has a password")
    expect(fails(() => load([], { WAYBILL_SMTP_PASSWORD: "pw" }))).toBe("an SMTP password needs --smtp-url")
    expect(smtpUrl(load([]))).toBeUndefined()
  })
})
