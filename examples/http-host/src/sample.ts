/**
 * One valid single-stop shipment in Chicago, bookable at any time of day (`now` / `today`).
 * The CLI prints it in its ready-made curl; tests and the benchmark book it.
 */
export const sampleShipment = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
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
  ...overrides
})
