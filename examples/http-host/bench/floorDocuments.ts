/**
 * The floor's documents routes: the least a server can do for the same requests. The lookup is
 * one SQL query over the booked shipments joined with their documents, answered as the same
 * JSON shape with a link per document; the "ticket" is a random id looked up on download (no
 * sealing, no expiry, no key or visibility re-checks). The download is a plain file stream.
 * Uploads (for `prepare`) go to files beside the database.
 *
 * What Waybill does on top: key hashing and lookup, linked accounts, AES-GCM tickets bound to
 * the key generation and document version, the visibility rules, content sniffing, re-checks
 * of key, ownership, visibility and version on every download, and the effect runtime.
 */
import { randomBytes } from "node:crypto"
import { createReadStream, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { join } from "node:path"
import type Database from "better-sqlite3"
import { BENCH_OPERATOR_TOKEN } from "./documentScenarios.js"
import { sendJson as json } from "./plainHttp.js"

const SCHEMA = `
create table if not exists floor_documents (
  id           text primary key,
  track_no     text not null,
  type         text not null,
  page         integer not null,
  source_id    text not null,
  content_type text not null,
  path         text not null,
  size         integer not null
);
create index if not exists floor_documents_track_idx on floor_documents(track_no);
`

const readAll = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

interface Row {
  readonly track_no: string
  readonly contact: string
  readonly id: string | null
  readonly type: string | null
  readonly page: number | null
  readonly source_id: string | null
}

/** Adds the tables and returns a handler that answers the documents routes (false: not mine). */
export const floorDocuments = (sqlite: Database.Database, dir: string, authorization: string, customerNo: string) => {
  sqlite.exec(SCHEMA)
  const insert = sqlite.prepare(
    "insert into floor_documents (id, track_no, type, page, source_id, content_type, path, size) values (?, ?, ?, 1, ?, ?, ?, ?)"
  )
  const byId = sqlite.prepare("select path, size, content_type from floor_documents where id = ?")
  const lookups = new Map<number, Database.Statement>()
  const lookupOf = (n: number) => {
    let s = lookups.get(n)
    if (s === undefined) {
      s = sqlite.prepare(
        `select s.track_no, s.contact, d.id, d.type, d.page, d.source_id
           from floor_shipments s left join floor_documents d on d.track_no = s.track_no
          where s.customer_no = ? and s.track_no in (${Array(n).fill("?").join(",")})
          order by s.track_no, d.page`
      )
      lookups.set(n, s)
    }
    return s
  }

  const lookup = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.headers.authorization !== authorization)
      return json(res, 200, { data: null, error: { message: "Access denied.", exception: null } })
    const values = (url.searchParams.get("control_no") ?? "").split(",").filter((v) => v !== "")
    if (values.length === 0 || values.length > 100)
      return json(res, 400, { data: null, error: { message: "Bad lookup.", exception: null } })
    const rows = lookupOf(values.length).all(customerNo, ...values) as Array<Row>
    const origin = `http://${req.headers.host ?? "localhost"}`
    const orders = new Map<
      string,
      { control_no: string; reference: string; requested_by: string; invoice: string; documents: Array<unknown> }
    >()
    for (const r of rows) {
      let o = orders.get(r.track_no)
      if (o === undefined) {
        o = { control_no: r.track_no, reference: "", requested_by: r.contact, invoice: "", documents: [] }
        orders.set(r.track_no, o)
      }
      if (r.id !== null)
        o.documents.push({
          type: r.type,
          page: String(r.page),
          id: r.source_id,
          uri: `${origin}/api/v1/order/docs/download/?ticket=${r.id}`
        })
    }
    if (orders.size === 0)
      return json(res, 200, { data: null, error: { message: "No records found.", exception: null } })
    json(res, 200, { data: { orders: [...orders.values()] }, error: null })
  }

  const download = (res: ServerResponse, url: URL) => {
    const row = byId.get(url.searchParams.get("ticket") ?? "") as
      | { path: string; size: number; content_type: string }
      | undefined
    if (row === undefined) {
      res.writeHead(403, { "content-type": "text/plain" })
      return res.end("invalid ticket\n")
    }
    res.writeHead(200, {
      "content-type": row.content_type,
      "content-length": row.size,
      "cache-control": "no-store"
    })
    createReadStream(row.path).pipe(res)
  }

  const upload = async (req: IncomingMessage, res: ServerResponse, trackNo: string, url: URL) => {
    if (req.headers.authorization !== `Bearer ${BENCH_OPERATOR_TOKEN}`) return json(res, 401, { error: "denied" })
    const bytes = await readAll(req)
    const id = randomBytes(16).toString("hex")
    const path = join(dir, `floor-doc-${id}`)
    writeFileSync(path, bytes)
    insert.run(
      id,
      trackNo,
      url.searchParams.get("type") ?? "bol",
      url.searchParams.get("id") ?? id,
      "application/pdf",
      path,
      bytes.length
    )
    json(res, 201, { data: { id }, error: null })
  }

  return (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined => {
    const url = new URL(req.url ?? "/", "http://floor")
    if (req.method === "GET" && url.pathname === "/api/v1/order/docs/") {
      lookup(req, res, url)
      return Promise.resolve()
    }
    if (req.method === "GET" && url.pathname === "/api/v1/order/docs/download/") {
      download(res, url)
      return Promise.resolve()
    }
    const m = /^\/ops\/v1\/orders\/(\d+)\/documents\/$/.exec(url.pathname)
    if (req.method === "POST" && m !== null) return upload(req, res, m[1]!, url).then(() => undefined)
    return undefined
  }
}
