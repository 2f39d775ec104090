/**
 * The client in another runtime (Bun, Deno): plain JavaScript over the built package, with only
 * what every runtime has (fetch, crypto, URL). Books a shipment, tracks it, and replays the booking
 * with the same Idempotency-Key. Arguments: BASE_URL API_KEY SHIPMENT_JSON. Prints one JSON line.
 */
import { WaybillClient } from "../dist/index.js"

const args = globalThis.Deno === undefined ? globalThis.process.argv.slice(2) : globalThis.Deno.args
const [baseUrl, apiKey, shipmentJson] = args
const shipment = JSON.parse(shipmentJson)
const client = new WaybillClient({ baseUrl, apiKey })
const key = `runtime-${globalThis.crypto.randomUUID()}`
const booked = await client.createShipments([shipment], { idempotencyKey: key })
const again = await client.createShipments([shipment], { idempotencyKey: key })
const trackNo = booked.shipments[0].track_no
const tracked = (await client.track(trackNo)).track_no
let refused
try {
  await new WaybillClient({ baseUrl, apiKey: "wb_live_not-a-key" }).createShipments([shipment])
} catch (error) {
  refused = { tag: error._tag, status: error.status }
}
globalThis.console.log(JSON.stringify({ trackNo, replayed: again.shipments[0].track_no, tracked, refused }))
