/**
 * The least a documents lookup of Waybill's design can cost, by hand: the one statement Waybill
 * runs for a control_no lookup (the orders joined with their current documents, in the columns
 * `DocumentStoreKysely.lookupOrders` selects, written out), on better-sqlite3 with raw rows; a
 * ticket per document (the grant id and index of each enciphered in one AES-256-CTR keystream
 * through `node:crypto`, the header in front, base64url); and the grant itself, one row
 * inserted. No HTTP, no JSON, no authentication, no runtime: if these alone exceed the time a
 * goal allows, no implementation of this design reaches it. `bench/inprocDocs.ts --bound` runs
 * it on the database it prepared.
 *
 * Beside it, what the other designs weighed for the tickets cost by hand on the same documents
 * (docs/decisions.md, "Download tickets"): the previous release's (the orders and the documents
 * as two statements, an AES-256-GCM cipher per ticket) and a stateless one (all claims in one
 * AES-256-CTR pass, an HMAC-SHA-256 tag per ticket from two one-shot hashes).
 */
import { createCipheriv, hash, randomBytes, randomFillSync } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"

export interface LookupBound {
  /** Microseconds per lookup of each part of Waybill's design, and their sum. */
  readonly queryUs: number
  readonly ticketsUs: number
  readonly grantUs: number
  readonly totalUs: number
  /** How many documents each lookup issued a ticket for. */
  readonly documents: number
  /** The previous release's design: two statements, and a GCM-sealed ticket per document. */
  readonly previous: { readonly ordersUs: number; readonly documentsUs: number; readonly ticketsUs: number }
  /** Stateless tickets: one AES-256-CTR pass over all claims and an HMAC tag per ticket. */
  readonly statelessTicketsUs: number
}

const perCall = (n: number, run: () => void): number => {
  for (let i = 0; i < Math.min(500, n); i++) run()
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

/** Measures the parts over `n` lookups of `trackNos` (the account `customerNo`'s orders) in `dbFile`. */
export const measureLookupBound = (
  dbFile: string,
  customerNo: string,
  trackNos: ReadonlyArray<string>,
  n: number
): LookupBound => {
  const db = new Database(dbFile, { readonly: true })
  // The grants go to a file of their own (same table, same pragmas as the host's), so the bound
  // never writes to the database the host has open.
  const dir = mkdtempSync(join(tmpdir(), "waybill-bound-"))
  const grants = new Database(join(dir, "grants.db"))
  try {
    grants.pragma("journal_mode = WAL")
    grants.pragma("synchronous = NORMAL")
    grants.exec(`create table waybill_ticket_grants (id text primary key, customer_no text not null, key_id text not null,
      key_mode text not null, key_generation integer not null, expires_at bigint not null, documents text not null)`)
    const slots = trackNos.map(() => "?").join(", ")
    const query = db
      .prepare(
        `select s.track_no, s.billing_reference, s.contact, o.invoice_no, o.current_version, d.id, d.kind,
           d.order_version, d.batch, d.page, d.type, d.source_id, d.version, d.hidden, d.removed, d.captured_at,
           d.created_at
         from waybill_shipments as s left join waybill_orders as o on o.track_no = s.track_no
         left join waybill_documents as d on d.track_no = s.track_no
           and (d.kind = 'signature' or d.order_version = coalesce(o.current_version, 1))
         where s.customer_no || '' in (?) and s.track_no in (${slots})`
      )
      .raw(true)
    const rows = query.all(customerNo, ...trackNos) as Array<Array<unknown>>
    const documents = rows.filter((r) => r[5] !== null).map((r) => [r[5] as string, r[12] as number] as const)
    if (new Set(rows.map((r) => r[0])).size !== trackNos.length)
      throw new Error("lookup bound: the query did not find every order")

    const key = randomBytes(32)
    // Format, key id "k1" and a zero byte: with the block, 21 bytes, a multiple of 3.
    const header = Uint8Array.from([2, 2, 0x6b, 0x31, 0])
    // The tickets: one keystream block per document, (grant id, index) as its counter, all
    // tickets in one buffer and one base64url encoding, cut apart.
    const tickets = (count: number) => {
      const first = Buffer.alloc(16)
      randomFillSync(first, 4, 10)
      const blocks = createCipheriv("aes-256-ctr", key, first).update(Buffer.alloc(16 * count))
      const size = header.length + 16
      const all = Buffer.allocUnsafe(size * count)
      for (let i = 0; i < count; i++) {
        all.set(header, i * size)
        blocks.copy(all, i * size + header.length, i * 16, (i + 1) * 16)
      }
      const text = all.toString("base64url")
      const chars = (size / 3) * 4
      const texts = new Array<string>(count)
      for (let i = 0; i < count; i++) texts[i] = text.slice(i * chars, (i + 1) * chars)
      return texts
    }
    const insert = grants.prepare("insert into waybill_ticket_grants values (?, ?, ?, ?, ?, ?, ?)")
    const idPrefix = randomBytes(8).toString("hex")
    let grantCount = 0
    const grant = () =>
      insert.run(
        `${idPrefix}${(grantCount++).toString(16).padStart(12, "0")}`,
        customerNo,
        "key_bench",
        "live",
        1,
        Date.now() + 900_000,
        JSON.stringify(documents.flat())
      )

    // The previous release's two statements and sealed tickets.
    const orders = db
      .prepare(
        `select s.track_no, s.customer_no, s.livemode, s.billing_reference, s.contact, o.invoice_no, o.current_version
         from waybill_shipments as s left join waybill_orders as o on o.track_no = s.track_no
         where s.customer_no || '' in (?) and s.track_no in (${slots}) order by s.track_no limit 101`
      )
      .raw(true)
    const current = db
      .prepare(
        `select d.* from waybill_documents as d left join waybill_orders as o on o.track_no = d.track_no
         where d.track_no in (${slots}) and (d.kind = 'signature' or d.order_version = coalesce(o.current_version, 1))`
      )
      .raw(true)
    // The previous release's header: format 1 and the key id.
    const sealedHeader = Uint8Array.from([1, 2, 0x6b, 0x31])
    const claims = new Uint8Array(100).fill(0x41)
    const sealGcm = (iv: Buffer) => {
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      cipher.setAAD(sealedHeader)
      const body = cipher.update(claims)
      cipher.final()
      const out = Buffer.allocUnsafe(sealedHeader.length + iv.length + body.length + 16)
      out.set(sealedHeader, 0)
      out.set(iv, sealedHeader.length)
      out.set(body, sealedHeader.length + iv.length)
      out.set(cipher.getAuthTag(), sealedHeader.length + iv.length + body.length)
      return out.toString("base64url")
    }
    // Stateless: the claims of every ticket in one CTR pass, each with HMAC-SHA-256 (from two
    // one-shot hashes over precomputed pads) over the nonce, its index and its ciphertext.
    const macKey = randomBytes(64)
    const ipad = Buffer.from(macKey.map((b) => b ^ 0x36))
    const opad = Buffer.from(macKey.map((b) => b ^ 0x5c))
    const stateless = (count: number) => {
      const iv = randomBytes(16)
      const stream = createCipheriv("aes-256-ctr", key, iv).update(Buffer.alloc(claims.length * count, 0x41))
      const inner = Buffer.allocUnsafe(64 + 16 + 2 + claims.length)
      ipad.copy(inner, 0)
      iv.copy(inner, 64)
      const outer = Buffer.allocUnsafe(64 + 32)
      opad.copy(outer, 0)
      for (let i = 0; i < count; i++) {
        const body = stream.subarray(i * claims.length, (i + 1) * claims.length)
        inner.writeUInt16BE(i, 80)
        body.copy(inner, 82)
        hash("sha256", inner, "buffer").copy(outer, 64)
        const tag = hash("sha256", outer, "buffer")
        const out = Buffer.allocUnsafe(sealedHeader.length + 16 + 2 + body.length + 16)
        out.set(sealedHeader, 0)
        out.set(iv, sealedHeader.length)
        out.writeUInt16BE(i, sealedHeader.length + 16)
        out.set(body, sealedHeader.length + 18)
        out.set(tag.subarray(0, 16), sealedHeader.length + 18 + body.length)
        out.toString("base64url")
      }
    }

    const queryUs = perCall(n, () => query.all(customerNo, ...trackNos))
    let issued = tickets(documents.length)
    const ticketsUs = perCall(n, () => {
      issued = tickets(documents.length)
    })
    // Each lookup's grant is its own commit here; Waybill's SQLite engine commits the grants of
    // lookups that arrive together in one.
    const grantUs = perCall(n, grant)
    const previous = {
      ordersUs: perCall(n, () => orders.all(customerNo, ...trackNos)),
      documentsUs: perCall(n, () => current.all(...trackNos)),
      ticketsUs: perCall(n, () => {
        const ivs = randomBytes(12 * documents.length)
        for (let i = 0; i < documents.length; i++) sealGcm(ivs.subarray(i * 12, i * 12 + 12))
      })
    }
    const statelessTicketsUs = perCall(n, () => stateless(documents.length))
    if (issued.length !== documents.length) throw new Error("lookup bound: a ticket per document")
    return {
      queryUs,
      ticketsUs,
      grantUs,
      totalUs: queryUs + ticketsUs + grantUs,
      documents: documents.length,
      previous,
      statelessTicketsUs
    }
  } finally {
    db.close()
    grants.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
