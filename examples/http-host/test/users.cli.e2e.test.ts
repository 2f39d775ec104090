/**
 * `pnpm waybill user invite|list` in a child process: an account made by `account create` has no
 * user until invited; the invitation goes out through the configured mailer (here the file mailer
 * in `--mail-dir`) with a link under `--base-url`, and the link sets a password that signs in.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Sessions, Users } from "@waybill/core"
import { openDatabase, waybillLayer } from "../src/host.js"
import { provisioningLayer } from "../src/provisioning.js"

const run = promisify(execFile)
const cli = resolve(import.meta.dirname, "../src/cli.ts")
let dir: string
let db: string
let mailDir: string

const waybill = async (...args: Array<string>) => {
  try {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", cli, ...args, "--db", db, "--mail-dir", mailDir, "--json"],
      { cwd: resolve(import.meta.dirname, "..") }
    )
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) }
  } catch (e) {
    const err = e as { code: number; stdout: string }
    return { code: err.code, out: JSON.parse(err.stdout.trim().split("\n").at(-1)!) }
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "waybill-users-cli-"))
  db = join(dir, "cli.db")
  mailDir = join(dir, "mail")
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("pnpm waybill user (CLI)", () => {
  it("invites by e-mail with a link under --base-url; the link sets a password; list shows the users", async () => {
    const created = await waybill("account", "create", "--name", "Portal customer")
    const customer = created.out.customer_no as string
    expect((await waybill("user", "list", "--customer", customer)).out).toEqual({ customer_no: customer, data: [] })

    const badRole = await waybill(
      "user",
      "invite",
      "--customer",
      customer,
      "--email",
      "ada@portal-customer.test",
      "--role",
      "admin",
      "--base-url",
      "https://portal.example.test"
    )
    expect([badRole.code, badRole.out.error]).toEqual([2, "--role must be member or owner"])

    const invited = await waybill(
      "user",
      "invite",
      "--customer",
      customer,
      "--email",
      "Ada@Portal-Customer.test",
      "--role",
      "owner",
      "--base-url",
      "https://portal.example.test/"
    )
    expect(invited.code).toBe(0)
    expect(invited.out).toMatchObject({
      customer_no: customer,
      email_address: "Ada@Portal-Customer.test",
      role: "owner"
    })

    const files = readdirSync(mailDir).filter((f) => f.endsWith(".eml"))
    expect(files).toHaveLength(1)
    const mail = await simpleParser(readFileSync(join(mailDir, files[0]!)))
    expect(mail.subject).toBe("You are invited to Portal customer on Waybill")
    const link = /https:\/\/portal\.example\.test\/portal\/invite\/\?token=([A-Za-z0-9_-]{43})/.exec(mail.text ?? "")
    expect(link).not.toBeNull()
    expect(mail.html).toContain(`id="invite-link"`)

    // The same address cannot be a user twice, in any account.
    const other = await waybill("account", "create", "--name", "Other customer")
    const again = await waybill(
      "user",
      "invite",
      "--customer",
      other.out.customer_no,
      "--email",
      "ada@portal-customer.test",
      "--base-url",
      "https://portal.example.test"
    )
    expect(again.code).toBe(1)
    expect(again.out.error).toContain("already signs in")

    // Without --base-url the link starts where serve listens on the same settings.
    const before = new Set(readdirSync(mailDir))
    const local = await waybill("user", "invite", "--customer", other.out.customer_no, "--email", "bo@other.test")
    expect([local.code, local.out.role]).toEqual([0, "owner"])
    const localMail = readdirSync(mailDir).filter((f) => f.endsWith(".eml") && !before.has(f))
    expect(localMail).toHaveLength(1)
    const localText = (await simpleParser(readFileSync(join(mailDir, localMail[0]!)))).text ?? ""
    expect(localText).toMatch(/http:\/\/127\.0\.0\.1:8080\/portal\/invite\/\?token=[A-Za-z0-9_-]{43}/)

    const listed = await waybill("user", "list", "--customer", customer)
    expect(listed.out.data).toEqual([
      expect.objectContaining({
        email_address: "Ada@Portal-Customer.test",
        role: "owner",
        status: "invited",
        invited_by: null
      })
    ])
    expect((await waybill("user", "list", "--customer", "1000000")).code).toBe(1)

    // The link works: the password is set and signs in (over the same database and secret).
    const database = await openDatabase(db)
    try {
      const layer = Layer.merge(waybillLayer(database.engine, { dbFile: db }), provisioningLayer(db, { dir: mailDir }))
      const password = Redacted.make("a long and unusual passphrase 7")
      const signedIn = await Effect.runPromise(
        Users.acceptInvite(Redacted.make(link![1]!), password).pipe(
          Effect.zipRight(Sessions.signIn({ email: "ada@portal-customer.test", password, clientIp: "127.0.0.1" })),
          Effect.provide(layer)
        )
      )
      expect(signedIn.viewer).toMatchObject({ customerNo: customer, role: "owner" })
    } finally {
      await database.close()
    }
    expect((await waybill("user", "list", "--customer", customer)).out.data[0].status).toBe("active")
  })
})
