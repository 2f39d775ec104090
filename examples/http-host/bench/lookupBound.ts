/**
 * The least a documents lookup of Waybill's design can cost, by hand: the two statements Waybill
 * runs for a control_no lookup (the orders, then their current documents; the SQL of
 * `DocumentStoreKysely.findOrders` and `listCurrent` written out), on better-sqlite3 with raw
 * rows, and one AES-256-GCM ticket per document through `node:crypto` (a fresh 12-byte IV, about
 * 100 bytes of claims, base64url), as DECISIONS.md's tickets require. No HTTP, no JSON, no
 * authentication, no runtime: if these alone exceed the time a goal allows, no implementation of
 * this design reaches it. `bench/inprocDocs.ts --bound` runs it on the database it prepared.
 */
import { createCipheriv, createHmac, randomBytes } from "node:crypto"
import Database from "better-sqlite3"

export interface LookupBound {
  /** Microseconds per lookup of each part, and their sum. */
  readonly ordersUs: number
  readonly documentsUs: number
  readonly ticketsUs: number
  readonly totalUs: number
  /**
   * The same tickets sealed another standard way, for comparison: one AES-256-CTR pass over all
   * the lookup's claims (each ticket its own counter range) and an HMAC-SHA-256 tag per ticket
   * (encrypt-then-MAC). One `createHmac` per ticket costs about what one GCM cipher does.
   */
  readonly ctrHmacTicketsUs: number
  /** The orders and their current documents in one joined statement instead of two. */
  readonly joinedUs: number
}

const perCall = (n: number, run: () => void): number => {
  for (let i = 0; i < Math.min(500, n); i++) run()
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) run()
  return Number(process.hrtime.bigint() - start) / n / 1000
}

/** Measures the parts over `n` lookups of `trackNos` (the account `customerNo`'s orders) in `dbFile`. */
export const measureLookupBound = (
  dbFile: string,
  customerNo: string,
  trackNos: ReadonlyArray<string>,
  n: number
): LookupBound => {
  const db = new Database(dbFile, { readonly: true })
  try {
    const slots = trackNos.map(() => "?").join(", ")
    const orders = db
      .prepare(
        `select s.track_no, s.customer_no, s.livemode, s.billing_reference, s.contact, o.invoice_no, o.current_version
         from waybill_shipments as s left join waybill_orders as o on o.track_no = s.track_no
         where s.customer_no || '' in (?) and s.track_no in (${slots}) order by s.track_no limit ?`
      )
      .raw(true)
    const documents = db
      .prepare(
        `select d.* from waybill_documents as d left join waybill_orders as o on o.track_no = d.track_no
         where d.track_no in (${slots}) and (d.kind = 'signature' or d.order_version = coalesce(o.current_version, 1))`
      )
      .raw(true)
    const found = documents.all(...trackNos) as Array<unknown>
    if ((orders.all(customerNo, ...trackNos, trackNos.length) as Array<unknown>).length !== trackNos.length)
      throw new Error("lookup bound: the orders query did not find every order")
    const key = randomBytes(32)
    const header = Uint8Array.from([1, 2, 0x6b, 0x31])
    const claims = new Uint8Array(100).fill(0x41)
    // The least per ticket: the IVs drawn at once, each ticket written into one buffer.
    const seal = (iv: Buffer) => {
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      cipher.setAAD(header)
      const body = cipher.update(claims)
      cipher.final()
      const out = Buffer.allocUnsafe(header.length + iv.length + body.length + 16)
      out.set(header, 0)
      out.set(iv, header.length)
      out.set(body, header.length + iv.length)
      out.set(cipher.getAuthTag(), header.length + iv.length + body.length)
      return out.toString("base64url")
    }
    const joined = db
      .prepare(
        `select s.track_no, s.customer_no, s.livemode, s.billing_reference, s.contact, o.invoice_no, o.current_version, d.*
         from waybill_shipments as s left join waybill_orders as o on o.track_no = s.track_no
         left join waybill_documents as d on d.track_no = s.track_no
           and (d.kind = 'signature' or d.order_version = coalesce(o.current_version, 1))
         where s.customer_no || '' in (?) and s.track_no in (${slots}) order by s.track_no`
      )
      .raw(true)
    const macKey = randomBytes(32)
    const sealCtrHmac = (count: number) => {
      const iv = randomBytes(16)
      const stream = createCipheriv("aes-256-ctr", key, iv).update(Buffer.alloc(claims.length * count, 0x41))
      for (let i = 0; i < count; i++) {
        const body = stream.subarray(i * claims.length, (i + 1) * claims.length)
        const tag = createHmac("sha256", macKey).update(header).update(iv).update(body).digest()
        const out = Buffer.allocUnsafe(header.length + iv.length + body.length + 16)
        out.set(header, 0)
        out.set(iv, header.length)
        out.set(body, header.length + iv.length)
        out.set(tag.subarray(0, 16), header.length + iv.length + body.length)
        out.toString("base64url")
      }
    }
    const ordersUs = perCall(n, () => orders.all(customerNo, ...trackNos, trackNos.length))
    const documentsUs = perCall(n, () => documents.all(...trackNos))
    const ticketsUs = perCall(n, () => {
      const ivs = randomBytes(12 * found.length)
      for (let i = 0; i < found.length; i++) seal(ivs.subarray(i * 12, i * 12 + 12))
    })
    const ctrHmacTicketsUs = perCall(n, () => sealCtrHmac(found.length))
    const joinedUs = perCall(n, () => joined.all(customerNo, ...trackNos))
    return {
      ordersUs,
      documentsUs,
      ticketsUs,
      totalUs: ordersUs + documentsUs + ticketsUs,
      ctrHmacTicketsUs,
      joinedUs
    }
  } finally {
    db.close()
  }
}
