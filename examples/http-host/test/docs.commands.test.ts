/**
 * Runs the shell commands of the pages a new user copies from, against a real host, and checks
 * that each answer looks like the one the page shows.
 *
 * How a page is read:
 *
 * - Every fenced `sh` block is a script; every fenced `text` block whose first line starts with
 *   `$ ` is a transcript: each `$ command` runs, and the lines after it, up to the next `$`, are
 *   what it prints.
 * - A `json` or `text` block right after an `sh` block (only blank lines between) is its claimed
 *   output. JSON claims are compared by shape ({@link matches}): every field the page shows must
 *   be there with the same JSON type, fields in {@link EXACT} must be equal, and a page may leave
 *   fields and list elements out. Text claims must match line for line, with ids, keys, times and
 *   numbers masked ({@link textPattern}).
 * - `<!-- docs-test: skip (reason) -->` on the line above a block keeps it from running; the
 *   number of skips per page is pinned in {@link SKIPS}, so they cannot grow unnoticed.
 *
 * The host is `pnpm waybill serve --port 0 --operator-token op_demo_token --allow-insecure-http
 * --no-webhooks` (the CLI itself, in a child process; without a dispatcher the webhook examples'
 * deliveries stay queued, as operations.md shows them) over a fresh `.waybill/` in a temporary
 * directory, which is also the directory the commands run in; `pnpm` there is the repository's
 * (`pnpm --dir REPO --silent`, so pnpm's own `> waybill@ ...` lines, which the pages leave out of
 * transcripts, are not printed). The test writes `bol.pdf` there for the upload examples.
 * Before a command runs, these placeholders of the pages are replaced (and nothing else):
 *
 * - `http://127.0.0.1:8080` by the host's real address (the port is free, not 8080);
 * - `wb_live_...` and `wb_test_...` by the demo account's keys that `serve` printed;
 * - the example tracking numbers of {@link FIXTURES} by shipments the test books (and moves
 *   through the operator API) for that page;
 * - values a page shows in an earlier answer (tracking and customer numbers, `wait_idx`,
 *   `validation_key`, the keys provisioning hands out, the e-mailed code and link token,
 *   document ids, download tickets; see
 *   {@link LEARN}) by the values the real answer had at the same place.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pdf, twoToneImage } from "./documentFiles.js"
import { sampleShipment } from "../src/sample.js"

const repoDir = resolve(import.meta.dirname, "../../..")
const hostDir = resolve(import.meta.dirname, "..")
const docsDir = resolve(repoDir, "docs")
const OPERATOR_TOKEN = "op_demo_token"

/** Blocks a page keeps from running, and why (each has a `docs-test: skip` comment). */
const SKIPS: Record<string, number> = {
  "quick-start.md": 1, // installs pnpm globally, then runs the whole test suite
  "api/create-shipments.md": 0,
  "api/cancel.md": 0,
  "api/quote.md": 0,
  "api/track.md": 0,
  "api/documents.md": 0,
  "api/download.md": 0,
  "provisioning.md": 2, // the link's POST (the code verified already), the resend (60 s cooldown)
  "operations.md": 2, // PostgreSQL: needs a server and a database of its own (postgres.e2e.test.ts runs the same commands)
  "observability.md": 0,
  // PostgreSQL (the first account, the dump, the restore, an index built before an upgrade): a
  // server and a database of their own; systemctl: root and systemd
  "deploying.md": 5
}

interface Fenced {
  readonly lang: string
  readonly body: string
  /** 1-based line of the opening fence. */
  readonly line: number
  /** 0-based index of the closing fence's line. */
  readonly end: number
  readonly skip: string | undefined
}

/** The fenced blocks of a page (also those indented in list items), in order. */
const fencedBlocks = (markdown: string): Array<Fenced> => {
  const lines = markdown.split("\n")
  const blocks: Array<Fenced> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const indent = open[1]!.length
    let j = i + 1
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j]!)) j++
    let k = i - 1
    while (k >= 0 && lines[k]!.trim() === "") k--
    const skip = k >= 0 ? /^\s*<!-- docs-test: skip \((.+)\) -->\s*$/.exec(lines[k]!)?.[1] : undefined
    blocks.push({
      lang: open[2]!,
      body: lines
        .slice(i + 1, j)
        .map((l) => l.slice(Math.min(indent, /^ */.exec(l)![0].length)))
        .join("\n"),
      line: i + 1,
      end: j,
      skip
    })
    i = j
  }
  return blocks
}

interface Step {
  readonly where: string
  readonly command: string
  readonly claim: { readonly lang: "json" | "text"; readonly body: string } | undefined
}

/** The commands of a page, each with its claimed output, and the skipped blocks. */
const pageSteps = (page: string): { steps: Array<Step>; skipped: Array<string> } => {
  const markdown = readFileSync(resolve(docsDir, page), "utf8")
  const lines = markdown.split("\n")
  const blocks = fencedBlocks(markdown)
  const steps: Array<Step> = []
  const skipped: Array<string> = []
  blocks.forEach((block, index) => {
    const where = `${page}:${block.line}`
    const transcript = block.lang === "text" && block.body.startsWith("$ ")
    if (block.lang !== "sh" && !transcript) return
    if (block.skip !== undefined) {
      skipped.push(`${where} (${block.skip})`)
      return
    }
    if (transcript) {
      for (const part of block.body.split(/^\$ /m).filter((p) => p !== "")) {
        const [command, ...printed] = part.split("\n")
        const text = printed.join("\n").trim()
        steps.push({ where, command: command!, claim: { lang: "text", body: text } })
      }
      return
    }
    const next = blocks[index + 1]
    const adjacent =
      next !== undefined &&
      (next.lang === "json" || next.lang === "text") &&
      next.skip === undefined &&
      lines.slice(block.end + 1, next.line - 1).every((l) => l.trim() === "")
    steps.push({
      where,
      command: block.body,
      claim: adjacent ? { lang: next.lang as "json" | "text", body: next.body } : undefined
    })
  })
  return { steps, skipped }
}

/** Splits concatenated JSON documents (`curl -s` ends none of them with a newline). */
const jsonValues = (text: string): Array<unknown> => {
  const values: Array<unknown> = []
  let depth = 0
  let start = -1
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === "{" || c === "[") {
      if (depth === 0) start = i
      depth++
    } else if (c === "}" || c === "]") {
      depth--
      if (depth === 0) values.push(JSON.parse(text.slice(start, i + 1)))
    }
  }
  return values
}

/**
 * Fields whose value a page shows as it really is (everything else: only its JSON type). Only
 * what does not depend on the day: zone abbreviations (`CST` in winter, `CDT` in summer), times
 * and random numbers are not compared.
 */
const EXACT = new Set([
  "result",
  "message",
  "exception",
  "detail",
  "status",
  "state",
  "rates",
  "service_type",
  "vehicle_type",
  "is_validated",
  "registered",
  "provider",
  "has_firmographics",
  "frequent_caller_id",
  "role",
  "type",
  "kind",
  "zip",
  "city",
  "jsonstrn",
  "billing_reference",
  "reference",
  "requested_by",
  "invoice",
  "page",
  "code",
  "livemode",
  "estimated_charge",
  "shipments_with_errors",
  "order",
  "seq",
  "miles",
  "weight",
  "pieces",
  "transport",
  "fuel",
  "extras",
  "discount",
  "total",
  "content_type",
  "rotation",
  "allowed_commands"
])

/** Whether `actual` has what `claimed` shows (see the module comment); returns the first difference. */
const matches = (claimed: unknown, actual: unknown, path: string, key: string): string | undefined => {
  const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v)
  if (kind(claimed) !== kind(actual)) return `${path}: the page shows ${kind(claimed)}, the answer has ${kind(actual)}`
  if (Array.isArray(claimed)) {
    const list = actual as Array<unknown>
    if (claimed.length === 0)
      return list.length === 0 ? undefined : `${path}: the page shows [], the answer has ${list.length}`
    for (const [i, element] of claimed.entries()) {
      if (!list.some((a) => matches(element, a, `${path}[${i}]`, key) === undefined))
        return `${path}[${i}]: no element of the answer matches ${JSON.stringify(element)} (${matches(element, list[Math.min(i, list.length - 1)], `${path}[${i}]`, key)})`
    }
    return undefined
  }
  if (kind(claimed) === "object") {
    for (const [k, v] of Object.entries(claimed as object)) {
      if (!(k in (actual as object))) return `${path}.${k}: missing from the answer`
      const difference = matches(v, (actual as Record<string, unknown>)[k], `${path}.${k}`, k)
      if (difference !== undefined) return difference
    }
    return undefined
  }
  if (EXACT.has(key) && claimed !== actual)
    return `${path}: the page shows ${JSON.stringify(claimed)}, the answer has ${JSON.stringify(actual)}`
  return undefined
}

/** A text claim as a pattern: ids, keys, secrets, times and numbers masked, blanks flexible. */
const textPattern = (claim: string): RegExp => {
  const masks = [
    /\d{4}-\d{2}-\d{2}T[\d:.]+Z?/g,
    /\b[ECMP][SD]T\b/g,
    /wb_(?:live|test)_[A-Za-z0-9]+(?:…|\.\.\.)?/g,
    /whsec_[A-Za-z0-9+/=]+/g,
    /\b(?:doc|evt|we|wr|vk|usr)_[A-Za-z0-9_-]+/g,
    /token=[A-Za-z0-9_-]+/g,
    /(?<=--starting-after )[A-Za-z0-9_-]+/g,
    /\d+(?:\.\d+)?/g
  ]
  const MARK = "\u0000"
  const tokens: Array<string> = []
  let masked = claim.trim()
  for (const mask of masks)
    masked = masked.replace(mask, (m) => {
      tokens.push(m)
      return MARK
    })
  const source = masked
    .split(MARK)
    .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+"))
    .join("\\S+")
  return new RegExp(`^${source}$`)
}

/** Values a page shows in an answer and uses in a later command: one capture group each. */
const LEARN: ReadonlyArray<RegExp> = [
  /"track_no":\s*"(\d{6,8})"/g,
  /"customer_no":\s*"(\d{7})"/g,
  /customer_no\s+(\d{7})/g,
  /"wait_idx":\s*"([^"]+)"/g,
  /"validation_key":\s*"([^"]+)"/g,
  /"production":\s*"([^"]+)"/g,
  /"test":\s*"([^"]+)"/g,
  /verification code is:\s+(\d{6})/g,
  /verify\/\?token=([^\s"]+)/g,
  /ticket=([^\s"]+)/g,
  /\b(doc_[0-9A-Z]{26})\b/g,
  /\b(we_[0-9A-Z]{26})\b/g,
  /\b(evt_[0-9A-Z]{26})\b/g
]

/**
 * Pairs the values each pattern finds in the claim, as the page writes it, with those it finds in
 * the answer; a value learned again (a new `validation_key`) replaces the earlier mapping.
 */
const learn = (claim: string, output: string, subs: Map<string, string>) => {
  for (const pattern of LEARN) {
    const shown = [...claim.matchAll(pattern)].map((m) => m[1]!)
    const real = [...output.matchAll(pattern)].map((m) => m[1]!)
    shown.forEach((value, i) => {
      if (real[i] !== undefined && value !== real[i]) subs.set(value, real[i]!)
    })
  }
}

const substitute = (text: string, subs: Map<string, string>): string => {
  let out = text
  // Longest first, so a value is never replaced inside a longer one.
  for (const [from, to] of [...subs].sort((a, b) => b[0].length - a[0].length)) out = out.split(from).join(to)
  return out
}

const bash = (command: string, cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const env: NodeJS.ProcessEnv = { ...process.env, WAYBILL_REPO: repoDir }
    delete env["INIT_CWD"]
    // `pnpm` as a user runs it from the repository root, but with the temporary directory as the
    // place `.waybill/` and every file a command writes go to.
    const preamble = 'set -eo pipefail\npnpm() { command pnpm --dir "$WAYBILL_REPO" --silent "$@"; }\n'
    execFile("bash", ["-c", preamble + command], { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr })
    )
  })

interface Host {
  readonly url: string
  readonly dir: string
  readonly liveKey: string
  readonly testKey: string
  readonly printedCurl: string
  /** The demo account's customer number, as `serve` printed it. */
  readonly customerNo: string
  readonly child: ChildProcess
}

/** `pnpm waybill serve` as the quick start runs it, on a free port, in a temporary directory. */
const startServe = async (): Promise<Host> => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-docs-"))
  const env = { ...process.env, INIT_CWD: dir }
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli.ts",
      "serve",
      "--port",
      "0",
      "--operator-token",
      OPERATOR_TOKEN,
      "--allow-insecure-http",
      "--no-webhooks"
    ],
    { cwd: hostDir, env, stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  await new Promise<void>((ready, fail) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes("Press Ctrl+C to stop.")) ready()
    })
    child.stderr!.on("data", (chunk: Buffer) => process.stderr.write(chunk))
    child.once("exit", (code) => fail(new Error(`serve exited with ${code}: ${out}`)))
  })
  const url = /Waybill is serving (http:\/\/\S+)\/api\/v1 /.exec(out)![1]!
  return {
    url,
    dir,
    liveKey: /live key\s+(wb_live_\S+)/.exec(out)![1]!,
    testKey: /test key\s+(wb_test_\S+)/.exec(out)![1]!,
    printedCurl: out.slice(out.indexOf("curl -s"), out.indexOf("The account portal is at")).trim(),
    customerNo: /customer_no\s+(\d+)/.exec(out)![1]!,
    child
  }
}

let host: Host

const call = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${host.url}${path}`, init)
  const body = (await response.json()) as { data: any; error: { message: string } | null }
  if (!response.ok || body.error !== null) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`)
  return body.data
}
const book = async (overrides: Record<string, unknown> = {}, key = host.liveKey): Promise<string> => {
  const data = await call("/api/v1/order/json/", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ data: { shipments: [sampleShipment(overrides)] } })
  })
  return data.shipments[0].track_no as string
}
const op = (path: string, body?: BodyInit, contentType = "application/json") =>
  call(`/ops/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": contentType },
    ...(body === undefined ? {} : { body })
  })

/**
 * The example tracking numbers each page uses that no earlier command of the page books: the
 * shipment (of the demo account) the test makes for each, in the state the page shows.
 */
const FIXTURES: Record<string, Record<string, () => Promise<string>>> = {
  "api/cancel.md": { "26672692": () => book() },
  "api/track.md": {
    "87419445": async () => {
      const t = await book()
      await op(`shipments/${t}/assign`, JSON.stringify({ driver_id: "drv-1" }))
      await op(`shipments/${t}/pickup`)
      return t
    }
  },
  "api/documents.md": { "26672692": () => withDocuments() },
  "api/download.md": { "26672692": () => withDocuments() },
  "operations.md": {
    "16703983": () => book({}, host.testKey),
    "26672692": () => book(),
    "18741981": () =>
      book({
        DeliverName: "Cog Works",
        DeliverAddress: "1 Church St",
        DeliverCity: "Evanston",
        DeliverZip: "60201",
        multistop_route: [
          { stop_id: 1, name: "Acme Parts", address: "233 S Wacker Dr", zip: "60606" },
          { stop_id: 2, name: "Bolt Labs", address: "1060 W Addison St", zip: "60613" },
          { stop_id: 3, name: "Cog Works", address: "1 Church St", city: "Evanston", zip: "60201" }
        ]
      })
  }
}

/** A live booking with a bill of lading, a pickup photo, a signature and an invoice number. */
const withDocuments = async (): Promise<string> => {
  const t = await book({ BillingReference: "PO-1182" })
  const raw = "application/octet-stream"
  await op(`orders/${t}/documents/?type=bol&id=BOL-77`, pdf() as BodyInit, raw)
  await op(`orders/${t}/documents/?type=pickedup-package&id=CAM-1`, (await twoToneImage("png")) as BodyInit, raw)
  await op(`orders/${t}/signature/?name=Rita%20Recipient`, (await twoToneImage("png")) as BodyInit, raw)
  await op(`orders/${t}/invoice/`, JSON.stringify({ invoice: "INV-20931" }))
  return t
}

const runPage = async (page: string) => {
  const { steps } = pageSteps(page)
  const subs = new Map<string, string>([
    ["http://127.0.0.1:8080", host.url],
    ["wb_live_...", host.liveKey],
    ["wb_test_...", host.testKey],
    // quick-start.md's demo account, as serve printed it
    ["7305856", host.customerNo]
  ])
  for (const [number, make] of Object.entries(FIXTURES[page] ?? {})) subs.set(number, await make())
  expect(steps.length, `${page} has commands`).toBeGreaterThan(0)
  for (const step of steps) {
    const command = substitute(step.command, subs)
    const result = await bash(command, host.dir)
    const context = `${step.where}\n$ ${command}\n${result.stdout}${result.stderr}`
    const claim = step.claim === undefined ? undefined : substitute(step.claim.body, subs)
    if (claim !== undefined && claim.startsWith("error: ")) {
      // A transcript that shows a refusal: the CLI exits non-zero and says so first on stderr
      // (a usage error prints the usage after it).
      expect(result.code, context).not.toBe(0)
      const lines = claim.split("\n").length
      expect(result.stderr.trim().split("\n").slice(0, lines).join("\n"), context).toMatch(textPattern(claim))
      continue
    }
    expect(result.code, context).toBe(0)
    if (step.claim === undefined || claim === undefined) continue
    if (step.claim.lang === "json") {
      const shown = jsonValues(claim)
      const real = jsonValues(result.stdout)
      expect(real.length, context).toBe(shown.length)
      shown.forEach((value, i) => expect(matches(value, real[i], "$", ""), context).toBeUndefined())
    } else {
      expect(result.stdout.trim(), context).toMatch(textPattern(claim))
    }
    learn(step.claim.body, result.stdout, subs)
  }
}

beforeAll(async () => {
  host = await startServe()
  // Files the pages' commands upload.
  writeFileSync(join(host.dir, "bol.pdf"), pdf())
})

afterAll(async () => {
  if (host !== undefined) {
    const exited = new Promise((done) => host.child.once("exit", done))
    host.child.kill("SIGTERM")
    await exited
    rmSync(host.dir, { recursive: true, force: true })
  }
})

describe("the commands of the docs work as written", () => {
  it("skips only the blocks it must (each with its reason), no more", () => {
    const counted = Object.fromEntries(Object.keys(SKIPS).map((page) => [page, pageSteps(page).skipped.length]))
    expect(counted).toEqual(SKIPS)
  })

  it("the curl that serve prints books a test shipment", async () => {
    const result = await bash(host.printedCurl, host.dir)
    expect(result.code).toBe(0)
    const [answer] = jsonValues(result.stdout) as Array<{ data: { shipments: Array<{ result: string }> } }>
    expect(answer!.data.shipments[0]!.result).toBe("success")
  })

  // operations.md runs about forty CLI commands, each a fresh `pnpm` + tsx process (seconds each
  // on a busy 2-core machine); the limit only guards against a hang.
  for (const page of Object.keys(SKIPS)) {
    it(`docs/${page}`, { timeout: 900_000 }, () => runPage(page))
  }
})
