/**
 * The few helpers the hand-written targets (floor.ts, floorDocuments.ts, ceiling.ts) share:
 * node:http and nothing else, as such a server would be written.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type Database from "better-sqlite3"
import type { PragmaValues } from "./sqlite.js"
import type { RunningTarget } from "./target.js"

/** Waybill's default `booking.maxBodyBytes` (1 MiB); the bench body is well under 1 KiB. */
export const MAX_BODY_BYTES = 1024 * 1024

export type Json = Record<string, unknown>

export const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** A non-empty string or a number. */
export const present = (v: unknown): boolean => (typeof v === "string" && v.trim() !== "") || typeof v === "number"

export const sendJson = (res: ServerResponse, status: number, payload: unknown): void => {
  const body = JSON.stringify(payload)
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body)
  })
  res.end(body)
}

/** The interface's error envelope. */
export const fail = (res: ServerResponse, status: number, message: string): void =>
  sendJson(res, status, { data: null, error: { message, exception: null } })

/** The whole body, or undefined when it exceeds the cap (the connection is then closed). */
export const readBody = (req: IncomingMessage): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        req.destroy()
        resolve(undefined)
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks, size)))
    req.on("error", reject)
  })

/** The create-shipments body's `data` and non-empty `shipments`, or the reason it is not one. */
export const bookingBody = (
  bytes: Buffer
): { readonly data: Json; readonly shipments: ReadonlyArray<unknown> } | { readonly problem: string } => {
  let body: unknown
  try {
    body = JSON.parse(bytes.toString("utf8"))
  } catch {
    return { problem: "The body is not valid JSON." }
  }
  const data = isObject(body) ? body["data"] : undefined
  const shipments = isObject(data) ? data["shipments"] : undefined
  if (!isObject(data) || !Array.isArray(shipments) || shipments.length === 0) {
    return { problem: 'The body must be an object {"data": {"shipments": [...]}} with one or more shipments.' }
  }
  return { data, shipments }
}

/** Problems with the shipments' required fields (non-empty string or number), empty when none. */
export const missingFields = (shipments: ReadonlyArray<unknown>, required: ReadonlyArray<string>): Array<string> => {
  const problems: Array<string> = []
  shipments.forEach((s: unknown, i) => {
    if (!isObject(s)) problems.push(`shipments[${i}] must be an object`)
    else for (const f of required) if (!present(s[f])) problems.push(`shipments[${i}].${f} is required`)
  })
  return problems
}

/** Whether better-sqlite3 threw a primary-key or unique clash (a tracking number drawn twice). */
export const isPrimaryKeyClash = (e: unknown): boolean =>
  isObject(e) && (e["code"] === "SQLITE_CONSTRAINT_PRIMARYKEY" || e["code"] === "SQLITE_CONSTRAINT_UNIQUE")

/** Listens on host:port and resolves with the origin, e.g. `http://127.0.0.1:41234`. */
export const listen = async (server: Server, host: string, port: number): Promise<string> => {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  return `http://${address.address}:${address.port}`
}

/** Closes every connection and the server. */
export const closeServer = async (server: Server): Promise<void> => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

/** What a hand-written target serves: an answer, or undefined for 404. */
export type PlainRoute = (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined

/**
 * Serves `route` on host:port (a failed answer is a 503, or a cut connection once headers went
 * out) and returns the running target, counting its rows in the two tables named.
 */
export const servePlainTarget = async (options: {
  readonly host: string
  readonly port: number
  readonly apiKey: string
  readonly pragmas: PragmaValues
  readonly sqlite: Database.Database
  readonly tables: { readonly shipments: string; readonly events: string }
  readonly route: PlainRoute
  /** Runs after the server closed, before the database does (a last batch to write). */
  readonly beforeClose?: () => Promise<void>
}): Promise<RunningTarget> => {
  const { sqlite, route } = options
  const count = (table: string) => sqlite.prepare(`select count(*) from ${table}`).pluck()
  const countShipments = count(options.tables.shipments)
  const countEvents = count(options.tables.events)
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    const answered = route(req, res)
    if (answered === undefined) return fail(res, 404, "Not found.")
    answered.catch(() => {
      if (!res.headersSent) fail(res, 503, "The service is temporarily unavailable.")
      else res.destroy()
    })
  })
  const url = await listen(server, options.host, options.port)
  return {
    url,
    apiKey: options.apiKey,
    pragmas: options.pragmas,
    rowCounts: async () => ({ shipments: Number(countShipments.get()), events: Number(countEvents.get()) }),
    close: async () => {
      await closeServer(server)
      await options.beforeClose?.()
      sqlite.close()
    }
  }
}
