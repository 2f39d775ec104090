/**
 * nodemailer loads with the first message: making the mailer loads nothing, and a nodemailer
 * that cannot be loaded fails that message with `MailFailed` naming it (the next message tries
 * again).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { vi } from "vitest"
import * as FileMailer from "../src/index.js"

const loads = { count: 0 }

vi.mock("nodemailer", async (original) => {
  loads.count++
  if (loads.count === 1) throw new Error("Cannot find package 'nodemailer'")
  return original()
})

const invite = {
  _tag: "Invite" as const,
  to: "ada@acme-logistics.com",
  accountName: "Acme Logistics LLC",
  link: Redacted.make("https://api.example/portal/invite/?token=inv"),
  expiresAt: 1_800_000_600_000
}

describe("mail-file, nodemailer loaded on first use", () => {
  it.effect("loads nothing when made; a failed load fails that message and the next one loads it", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "waybill-mail-"))
      try {
        const mailer = FileMailer.make({ directory: dir, from: "no-reply@waybill.test" })
        expect(loads.count).toBe(0)
        const failed = yield* Effect.flip(mailer.send(invite))
        expect(failed._tag).toBe("MailFailed")
        expect(failed.message).toMatch(/^mail-file: nodemailer could not be loaded: /)
        expect(readdirSync(dir)).toEqual([])
        yield* mailer.send(invite)
        yield* mailer.send(invite)
        expect(readdirSync(dir)).toHaveLength(2)
        expect(loads.count).toBe(2)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
