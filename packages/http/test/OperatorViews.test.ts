import { describe, expect, it } from "vitest"
import type { Shipment } from "@waybill/core"
import { Fixtures } from "@waybill/testkit"
import { OperatorViews } from "../src/index.js"

describe("OperatorViews.shipment", () => {
  // One distinct marker per field the booking API accepts, so a field missing from the view is named.
  const marked = (field: string) => `<${field}>`
  const base = Fixtures.shipment()
  const record: Shipment.ShipmentRecord = {
    ...base,
    contact: marked("contact"),
    phone: marked("phone"),
    email: marked("email"),
    billingReference: marked("billingReference"),
    pickupInstructions: marked("pickupInstructions"),
    deliverInstructions: marked("deliverInstructions"),
    jsonstrn: marked("jsonstrn"),
    signatureRequired: true,
    liftgateRequired: true,
    stops: base.stops.map((s) => ({
      ...s,
      name: marked(`stop${s.seq}.name`),
      address: marked(`stop${s.seq}.address`),
      contactName: marked(`stop${s.seq}.contactName`),
      phone: marked(`stop${s.seq}.phone`),
      note: marked(`stop${s.seq}.note`)
    })),
    pieceDetails: base.pieceDetails.map((p) => ({
      seq: p.seq,
      pieceNo: marked(`piece${p.seq}.pieceNo`),
      weight: marked(`piece${p.seq}.weight`),
      length: marked(`piece${p.seq}.length`),
      width: marked(`piece${p.seq}.width`),
      height: marked(`piece${p.seq}.height`),
      pc: marked(`piece${p.seq}.pc`),
      sourceId: marked(`piece${p.seq}.sourceId`),
      description: marked(`piece${p.seq}.description`)
    }))
  }

  it("shows every stored field the booking accepted (ops API and CLI), with flags, times and jsonstrn", () => {
    const v = OperatorViews.shipment(record, [])
    const json = JSON.stringify(v)
    const markers = json.match(/<[a-zA-Z0-9.]+>/g) ?? []
    const expected = [
      ...["contact", "phone", "email", "billingReference", "pickupInstructions", "deliverInstructions", "jsonstrn"],
      ...record.stops.flatMap((s) =>
        ["name", "address", "contactName", "phone", "note"].map((f) => `stop${s.seq}.${f}`)
      ),
      ...record.pieceDetails.flatMap((p) =>
        ["pieceNo", "weight", "length", "width", "height", "pc", "sourceId", "description"].map(
          (f) => `piece${p.seq}.${f}`
        )
      )
    ].map(marked)
    expect(new Set(markers)).toEqual(new Set(expected))
    expect([v.signature_required, v.liftgate_required]).toEqual([true, true])
    expect(v.ready.utc).toBe(new Date(record.readyAt).toISOString())
    expect(v.requested_delivery.utc).toBe(new Date(record.requestedDeliveryAt).toISOString())
    expect(v.stops[1]).toMatchObject({
      contact_name: "<stop1.contactName>",
      phone_no: "<stop1.phone>",
      stop_note: "<stop1.note>"
    })
    expect(v.piece_details[1]).toEqual({
      piece_no: "<piece1.pieceNo>",
      piece_weight: "<piece1.weight>",
      length: "<piece1.length>",
      width: "<piece1.width>",
      height: "<piece1.height>",
      pc: "<piece1.pc>",
      id: "<piece1.sourceId>",
      description: "<piece1.description>"
    })
    expect(v.allowed_commands).toContain("Cancel")
  })
})
