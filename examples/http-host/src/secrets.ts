/**
 * The host's master secret: 32 random bytes kept in a file beside the database (mode 0600),
 * never in it, so a stolen database alone cannot be used to test guessed keys. Each KeyRing
 * purpose gets its own secret derived with HKDF-SHA-256.
 *
 * Every host on one database must hold the same secret (a key minted by one is checked by
 * another), so the database keeps a check value: an HMAC of a fixed label under a secret derived
 * for that purpose alone. It reveals nothing about the secret or the keys, and a host whose
 * secret gives another value refuses to start.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import * as Redacted from "effect/Redacted"
import type { Kysely } from "kysely"
import { KeyRing, type KeySecret, type SecretPurpose } from "@waybill/core"
import type { WaybillDatabase } from "@waybill/storage-kysely"

const PURPOSES: ReadonlyArray<SecretPurpose> = ["api-key", "ticket", "otp", "webhook"]

/** Reads the master secret, creating it on first use. */
export const loadMasterSecret = (file: string): Uint8Array => {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600 })
  }
  const hex = readFileSync(file, "utf8").trim()
  if (!/^[0-9a-f]{64,}$/i.test(hex)) throw new Error(`${file} does not hold a hex secret of at least 32 bytes`)
  try {
    chmodSync(file, 0o600)
  } catch {
    // best effort on filesystems without modes
  }
  return Uint8Array.from(Buffer.from(hex, "hex"))
}

/** One KeyRing secret per purpose, derived from the master secret. */
export const keyRingLayer = (master: Uint8Array, id = "k1") => {
  const derive = (purpose: SecretPurpose): KeySecret => ({
    id,
    material: Redacted.make(new Uint8Array(hkdfSync("sha256", master, new Uint8Array(0), `waybill:${purpose}`, 32)))
  })
  const secrets = Object.fromEntries(PURPOSES.map((p) => [p, [derive(p)]])) as unknown as Record<
    SecretPurpose,
    ReadonlyArray<KeySecret>
  >
  return KeyRing.fromSecrets(secrets, {
    hmacSha256: (key, message) => createHmac("sha256", key).update(message).digest(),
    // Webhook secrets at rest, and download tickets of the previous release.
    aes256Gcm: {
      seal: (key, iv, aad, plaintext) => {
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        cipher.setAAD(aad)
        return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
      },
      open: (key, iv, aad, sealed) => {
        if (sealed.length < 16) return undefined
        const decipher = createDecipheriv("aes-256-gcm", key, iv)
        decipher.setAAD(aad)
        decipher.setAuthTag(sealed.subarray(sealed.length - 16))
        try {
          return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()])
        } catch {
          return undefined
        }
      }
    },
    // Download tickets: a lookup's blocks are one CTR keystream (one cipher for 100 tickets), a
    // download deciphers its one block.
    aes256Block: {
      encipher: (key, first, count) => createCipheriv("aes-256-ctr", key, first).update(new Uint8Array(16 * count)),
      decipher: (key, block) => {
        const decipher = createDecipheriv("aes-256-ecb", key, null).setAutoPadding(false)
        return Buffer.concat([decipher.update(block), decipher.final()])
      }
    }
  })
}

/** The check value of a master secret (hex): HMAC-SHA-256 of a fixed label, under a derived key. */
export const keyCheckOf = (master: Uint8Array): string => {
  const key = Redacted.make(new Uint8Array(hkdfSync("sha256", master, new Uint8Array(0), "waybill:key-check", 32)))
  return createHmac("sha256", Redacted.value(key)).update("waybill master secret check v1").digest("hex")
}

/** The master secret is not the one the database was set up with. */
export class MasterSecretMismatch extends Error {
  constructor() {
    super(
      "the master secret does not match the one this database was set up with: every host on one " +
        "database must use the same secret file (copy it from a host that runs; a new secret would " +
        "invalidate every API key, ticket and webhook secret)"
    )
    this.name = "MasterSecretMismatch"
  }
}

/**
 * Records `master`'s check value in the database if none is there yet (the first host), then
 * compares, in constant time; rejects with {@link MasterSecretMismatch} when they differ.
 */
export const checkMasterSecret = async (db: Kysely<WaybillDatabase>, master: Uint8Array): Promise<void> => {
  const mine = keyCheckOf(master)
  await db
    .insertInto("waybill_key_check")
    .values({ id: "master", mac: mine, created_at: Date.now() })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute()
  const row = await db
    .selectFrom("waybill_key_check")
    .select("mac")
    .where("id", "=", "master")
    .executeTakeFirstOrThrow()
  const a = Buffer.from(mine, "utf8")
  const b = Buffer.from(row.mac, "utf8")
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw new MasterSecretMismatch()
}
