/**
 * Books a shipment, waits for its documents (the courier adds a bill of lading or a photo at
 * pickup), and downloads them. docs/client.md shows this file; a test runs it against a real host.
 *
 *   WAYBILL_URL=https://waybill.example.com WAYBILL_API_KEY=wb_live_... npx tsx book-and-download.ts
 */
import { writeFile } from "node:fs/promises"
import { WaybillClient } from "@waybill/client"

const waybill = new WaybillClient({
  baseUrl: process.env.WAYBILL_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.WAYBILL_API_KEY
})
const pollMs = Number(process.env.WAYBILL_POLL_MS ?? 30_000)

// 1. Book. The client sends an Idempotency-Key, so its retries never book twice.
const booked = await waybill.createShipments([
  {
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
    Pieces: "2",
    Weight: "15 lbs",
    ServiceType: "2hour",
    VehicleType: "car",
    Pickupdate: "now",
    Deliverdate: "today",
    BillingReference: "PO-1182"
  }
])
const shipment = booked.shipments[0]!
if (shipment.result !== "success") throw new Error(`not booked: ${shipment.errors.join("; ")}`)
console.log(`booked ${shipment.track_no}, estimated charge ${shipment.estimated_charge}`)

// 2. Wait for the order's documents ([] until the courier adds some).
let documents = (await waybill.documents({ control_no: shipment.track_no })).orders[0]?.documents ?? []
while (documents.length === 0) {
  await new Promise((resolve) => setTimeout(resolve, pollMs))
  documents = (await waybill.documents({ control_no: shipment.track_no })).orders[0]?.documents ?? []
}

// 3. Download each one (its uri holds a short-lived ticket: use it as given, soon).
for (const document of documents) {
  const file = await waybill.download(document)
  const name = `${shipment.track_no}-${document.type}-${document.page}.${file.contentType.split("/")[1]}`
  await writeFile(name, await file.bytes())
  console.log(`saved ${name} (${file.contentType})`)
}
