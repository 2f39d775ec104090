/**
 * The client in another runtime (Bun, Deno): plain JavaScript over the built package, with only
 * what every runtime has (fetch, crypto, URL). Books a shipment, tracks it, and replays the booking
 * with the same Idempotency-Key. Arguments: BASE_URL API_KEY. Prints one JSON line.
 */
import { WaybillClient } from "../dist/index.js"

const args = globalThis.Deno === undefined ? globalThis.process.argv.slice(2) : globalThis.Deno.args
const [baseUrl, apiKey] = args
const client = new WaybillClient({ baseUrl, apiKey })
const shipment = {
  Contact: "Ada Lopez",
  Phone: "(312) 555-0100",
  PickupName: "Acme Parts",
  PickupAddress: "233 S Wacker Dr",
  PickupCity: "Chicago",
  PickupState: "IL",
  PickupZip: "60606",
  DeliverName: "Bolt Labs",
  DeliverAddress: "1060 W Addison St",
  DeliverCity: "Chicago",
  DeliverState: "IL",
  DeliverZip: "60613",
  Pieces: "1",
  Weight: "5",
  ServiceType: "2hour",
  VehicleType: "car",
  Pickupdate: "now",
  Deliverdate: "today"
}
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
