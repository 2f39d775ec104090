/**
 * @module wire
 *
 * The `/api/v1` wire shapes as Effect Schemas: the envelope, each route's parameters, request
 * bodies and `data`. They are the one description of the wire: the routes build their answers
 * typed by these schemas (so the compiler refuses an answer the schema does not describe), and
 * the OpenAPI document is generated from them (`openapi/document.ts`). Where core already has
 * the wire schema (create shipments: `Booking.ShipmentInput`, `Booking.CreateShipmentsData`) it
 * is used as it is; where core describes an answer with a TypeScript interface (quote, track),
 * the schema here is checked against that interface in both directions at compile time
 * ({@link Same}).
 *
 * Every schema that becomes a named component carries an `identifier` annotation; descriptions
 * go into the document too.
 */
import * as Schema from "effect/Schema"
import { Booking, type Documents, type Quote, type Track } from "@waybill/core"

/** `true` when A and B are mutually assignable; used to pin a schema to a core interface. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** Compiles only when given `true`. */
type Assert<T extends true> = T

// ---------------------------------------------------------------------------------------------
// The envelope (interface 2.1)

/** `error` of a failed answer. */
export const ErrorBody = Schema.Struct({
  message: Schema.String.annotations({ description: "What went wrong, in the interface's words." }),
  exception: Schema.Null
}).annotations({ identifier: "Error", description: "The error member of a failed answer (interface 2.1)." })

/** `{"data": null, "error": {...}}`: every JSON failure, and the documents endpoint's 200 errors. */
export const ErrorEnvelope = Schema.Struct({ data: Schema.Null, error: ErrorBody }).annotations({
  identifier: "ErrorEnvelope",
  description: "A failed answer: data is null, error holds the message."
})

/** `{"data": <data>, "error": null}`, named `<name>Envelope`. */
export const envelope = <A, I>(name: string, data: Schema.Schema<A, I>) =>
  Schema.Struct({ data, error: Schema.Null }).annotations({
    identifier: `${name}Envelope`,
    description: `A successful answer: data is ${name}, error is null.`
  })

// ---------------------------------------------------------------------------------------------
// Create shipments (interface 2.2, 2.3, 4.1): core's wire schemas, named.

export const StopInput = Booking.StopInput.annotations({
  identifier: "StopInput",
  description: "One stop of multistop_route (interface 2.2). Stops are processed in ascending stop_id."
})
export const PieceInput = Booking.PieceInput.annotations({
  identifier: "PieceInput",
  description: "One row of piece_details (interface 2.2)."
})

/**
 * One shipment as the documents describe it: core's `ShipmentInput` with the stop and piece
 * schemas named. Core decodes leniently (strings or numbers, unknown fields ignored) and reports
 * each missing required field by name, so nothing here is marked required.
 */
export const ShipmentInput = Schema.Struct({
  ...Booking.ShipmentInput.fields,
  multistop_route: Schema.optional(Schema.NullOr(Schema.Array(StopInput))),
  piece_details: Schema.optional(Schema.NullOr(Schema.Array(PieceInput)))
}).annotations({
  identifier: "ShipmentInput",
  description:
    "One shipment (interface 2.2). Required: Contact, Phone, Pieces, Weight, ServiceType, VehicleType, " +
    "Pickupdate, Deliverdate, and Pickup*/Deliver* fields unless multistop_route has 3 or more stops. " +
    "Missing or invalid fields are reported by name in the answer."
})

const _shipmentInputIsCore: Assert<Same<typeof ShipmentInput.Type, Booking.ShipmentInput>> = true

/** The create-shipments body (interface 2.2): what `Booking.CreateShipmentsRequest` decodes. */
export const CreateShipmentsRequest = Schema.Struct({
  data: Schema.Struct({
    token: Schema.optional(
      Schema.String.annotations({ description: "API key, unless an Authorization: Bearer header is sent." })
    ),
    key: Schema.optional(Schema.String.annotations({ description: "Alias of token." })),
    jsonstrn: Schema.optional(
      Schema.NullOr(Schema.Union(Schema.String, Schema.Number)).annotations({
        description: "Sender's correlation id, echoed in the answer (at most 255 characters)."
      })
    ),
    shipments: Schema.Array(ShipmentInput).pipe(Schema.minItems(1))
  })
}).annotations({ identifier: "CreateShipmentsRequest", description: "The create-shipments body (interface 2.2)." })

/** The legacy form: one urlencoded field `data` holding the JSON text of the body above. */
export const CreateShipmentsForm = Schema.Struct({
  data: Schema.String.annotations({ description: "The JSON text of a CreateShipmentsRequest." })
}).annotations({ identifier: "CreateShipmentsForm" })

export const ShipmentResult = Booking.ShipmentResult.annotations({
  identifier: "ShipmentResult",
  description: "One shipment of the answer, in request order (interface 2.3); errors is empty on success."
})

export const CreateShipmentsData = Schema.Struct({
  ...Booking.CreateShipmentsData.fields,
  shipments: Schema.Array(ShipmentResult)
}).annotations({ identifier: "CreateShipmentsData", description: "data of a create-shipments answer (2.3)." })

const _createShipmentsDataIsCore: Assert<Same<typeof CreateShipmentsData.Type, Booking.CreateShipmentsData>> = true

// ---------------------------------------------------------------------------------------------
// Documents (interface 2.4, 4.2, 4.3)

/** A query or form parameter: a plain string with its description. */
const param = (description: string) => Schema.optional(Schema.String.annotations({ description }))
const requiredParam = (description: string) => Schema.String.annotations({ description })

/** Parameters of the documents lookup, in the query or (POST) a urlencoded form. */
export const DocumentsParams = Schema.Struct({
  control_no: param("Order number(s); a comma-separated list is allowed."),
  search_field: Schema.optional(
    Schema.Literal("control_no", "customer_reference", "invoice_no").annotations({
      description: "Which field search_value is matched against."
    })
  ),
  search_value: param("Value(s) for search_field; a comma always separates values."),
  id: param("Legacy alias of search_value; without search_field it matches any of the three fields."),
  key: param("API key (form or query); prefer the Authorization header."),
  apikey: param("Legacy query name of key."),
  token: param("Legacy query name of key.")
}).annotations({ identifier: "DocumentsParams" })

const _lookupParamsAreCore: Assert<
  Same<Exclude<keyof typeof DocumentsParams.fields, "key" | "apikey" | "token">, keyof Documents.LookupParams>
> = true

export const OrderDocument = Schema.Struct({
  type: Schema.String.annotations({
    description: "bol, pickedup-package, delivered-package, signature; other types may appear."
  }),
  page: Schema.String.annotations({ description: "One-based sequence within its batch." }),
  id: Schema.String.annotations({ description: "Source identifier; a signature's may hold the recipient name." }),
  uri: Schema.String.annotations({
    description: "Temporary download link (15 minutes); opaque, a bearer credential for this one document."
  })
}).annotations({ identifier: "OrderDocument" })

export const OrderDocuments = Schema.Struct({
  control_no: Schema.String,
  reference: Schema.String,
  requested_by: Schema.String,
  invoice: Schema.String,
  documents: Schema.Array(OrderDocument)
}).annotations({ identifier: "OrderDocuments", description: "One order and its visible documents (2.4)." })

export const DocumentsData = Schema.Struct({ orders: Schema.Array(OrderDocuments) }).annotations({
  identifier: "DocumentsData"
})

export const DownloadParams = Schema.Struct({
  ticket: requiredParam("The ticket of a uri the documents lookup returned; use the uri exactly as given.")
}).annotations({ identifier: "DownloadParams" })

// ---------------------------------------------------------------------------------------------
// Cancel (interface 2.5, 4.4)

export const CancelParams = Schema.Struct({
  id: requiredParam("Tracking number from booking: 6 to 8 digits."),
  key: param("API key; or an Authorization: Bearer header, which then decides alone.")
}).annotations({ identifier: "CancelParams" })

export const CancelData = Schema.Struct(
  {
    result: Schema.optional(Schema.String.annotations({ description: "success" }))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "CancelData",
  description:
    'data of a cancel answer: {"result": "success"}, or the cancel provider\'s payload for accounts in provider mode (2.5).'
})

// ---------------------------------------------------------------------------------------------
// Quote (interface 4.6): checked against core's `Quote.QuoteData`.

export const QuoteParams = Schema.Struct({
  origin: requiredParam("Pickup ZIP: 5 digits or ZIP+4."),
  destination: requiredParam("Delivery ZIP: 5 digits or ZIP+4."),
  weight: requiredParam("Total pounds, as booking's Weight (15, 15 lbs, 1,200)."),
  pieces: param("Total pieces (default 1)."),
  service: param("Price only this service (code or alias)."),
  vehicle: param("Price only this vehicle (code or alias)."),
  stops: param("Stops including pickup and delivery, 2 to the configured maximum (default 2)."),
  liftgate: param("Y / N: add the liftgate fee."),
  signature: param("Y / N: add the signature fee."),
  key: param("API key for negotiated rates; or an Authorization: Bearer header.")
}).annotations({ identifier: "QuoteParams" })

export const Place = Schema.Struct({ zip: Schema.String, city: Schema.String, state: Schema.String }).annotations({
  identifier: "Place"
})

export const ChargeBreakdown = Schema.Struct({
  transport: Schema.Number,
  weight: Schema.Number,
  stops: Schema.Number,
  fuel: Schema.Number,
  extras: Schema.Number,
  discount: Schema.Number,
  total: Schema.Number
}).annotations({ identifier: "ChargeBreakdown", description: "The charge and its parts, in dollars." })

export const QuoteRow = Schema.Struct({
  service_type: Schema.String,
  vehicle_type: Schema.String,
  estimated_delivery: Schema.String,
  guaranteed_delivery: Schema.String,
  destination_tz: Schema.String,
  estimated_charge: Schema.Number,
  charge: ChargeBreakdown
}).annotations({ identifier: "QuoteRow" })

export const QuoteData = Schema.Struct({
  origin: Place,
  destination: Place,
  miles: Schema.Number,
  weight: Schema.Number,
  pieces: Schema.Number,
  stops: Schema.Number,
  rates: Schema.Literal("list", "negotiated"),
  quotes: Schema.Array(QuoteRow)
}).annotations({ identifier: "QuoteData" })

const _quoteDataIsCore: Assert<Same<typeof QuoteData.Type, Quote.QuoteData>> = true

// ---------------------------------------------------------------------------------------------
// Track (interface 4.6): checked against core's `Track.CoarseView | Track.PreciseView`.

export const TrackParams = Schema.Struct({
  idx: requiredParam("The tracking number."),
  key: param("The owner's API key for the precise view; or an Authorization: Bearer header.")
}).annotations({ identifier: "TrackParams" })

const ShipmentState = Schema.Literal(
  "booked",
  "assigned",
  "picked_up",
  "in_transit",
  "attempt_failed",
  "returning",
  "delivered",
  "returned",
  "canceled",
  "failed"
).annotations({ identifier: "ShipmentState" })
const StopRole = Schema.Literal("pickup", "intermediate", "delivery").annotations({ identifier: "StopRole" })
const StopStatus = Schema.Literal("pending", "arrived", "completed", "attempt_failed", "skipped").annotations({
  identifier: "StopStatus"
})

export const CoarseStop = Schema.Struct({
  seq: Schema.Number,
  role: StopRole,
  status: StopStatus,
  zip: Schema.String,
  city: Schema.String,
  state: Schema.String,
  latitude: Schema.Number,
  longitude: Schema.Number
}).annotations({ identifier: "CoarseStop", description: "A stop at ZIP precision (centre rounded to 2 decimals)." })

export const CoarseEvent = Schema.Struct({ type: Schema.String, occurred_at: Schema.String }).annotations({
  identifier: "CoarseEvent"
})

const times = {
  estimated_delivery: Schema.String,
  guaranteed_delivery: Schema.String,
  destination_tz: Schema.String
}

export const CoarseView = Schema.Struct({
  track_no: Schema.String,
  detail: Schema.Literal("coarse"),
  status: ShipmentState,
  service_type: Schema.String,
  vehicle_type: Schema.String,
  ...times,
  stops: Schema.Array(CoarseStop),
  events: Schema.Array(CoarseEvent)
}).annotations({ identifier: "CoarseView", description: "What anyone with the tracking number sees." })

export const PreciseStop = Schema.Struct({
  seq: Schema.Number,
  role: StopRole,
  stop_id: Schema.NullOr(Schema.Number),
  status: StopStatus,
  name: Schema.String,
  address: Schema.String,
  city: Schema.String,
  state: Schema.String,
  zip: Schema.String,
  contact_name: Schema.String,
  phone_no: Schema.String,
  stop_note: Schema.String,
  latitude: Schema.Number,
  longitude: Schema.Number,
  eta: Schema.String,
  tz: Schema.String
}).annotations({ identifier: "PreciseStop" })

export const PieceDetail = Schema.Struct({
  piece_no: Schema.String,
  piece_weight: Schema.String,
  length: Schema.String,
  width: Schema.String,
  height: Schema.String,
  pc: Schema.String,
  id: Schema.String,
  description: Schema.String
}).annotations({ identifier: "PieceDetail" })

export const PreciseEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  sequence: Schema.Number,
  occurred_at: Schema.String,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "PreciseEvent" })

export const TrackDocument = Schema.Struct({
  type: Schema.String,
  page: Schema.String,
  id: Schema.String,
  content_type: Schema.Literal("application/pdf", "image/jpeg", "image/png", "image/gif", "image/tiff")
}).annotations({ identifier: "TrackDocument" })

export const PreciseView = Schema.Struct({
  track_no: Schema.String,
  detail: Schema.Literal("precise"),
  status: ShipmentState,
  livemode: Schema.Boolean,
  service_type: Schema.String,
  vehicle_type: Schema.String,
  pieces: Schema.Number,
  weight: Schema.Number,
  billing_reference: Schema.String,
  contact: Schema.String,
  phone: Schema.String,
  email: Schema.String,
  signature_required: Schema.Boolean,
  liftgate_required: Schema.Boolean,
  pickup_instructions: Schema.String,
  deliver_instructions: Schema.String,
  ...times,
  stops: Schema.Array(PreciseStop),
  piece_details: Schema.Array(PieceDetail),
  events: Schema.Array(PreciseEvent),
  documents: Schema.Array(TrackDocument)
}).annotations({ identifier: "PreciseView", description: "What the owner's key (or a linked account's) sees." })

export const TrackData = Schema.Union(CoarseView, PreciseView).annotations({ identifier: "TrackData" })

const _trackDataIsCore: Assert<Same<typeof TrackData.Type, Track.CoarseView | Track.PreciseView>> = true

// ---------------------------------------------------------------------------------------------
// Account provisioning (interface 2.6, 4.5)

/** The fixed actions; the payment check's name carries the configured provider. */
export const ProvisioningAction = Schema.Union(
  Schema.Literal(
    "pre-register",
    "pre-register-verify",
    "pre-register-resend",
    "pre-register-check",
    "start",
    "step1",
    "step2"
  ),
  Schema.TemplateLiteral("registered-with-", Schema.String, "-check")
).annotations({ identifier: "ProvisioningAction" })

export const AccountSetupParams = Schema.Struct({
  action: ProvisioningAction.annotations({ description: "The provisioning step." })
}).annotations({ identifier: "AccountSetupParams" })

/** Every form field some action reads; which ones an action needs is in docs/provisioning.md. */
export const AccountSetupForm = Schema.Struct({
  email_address: param("pre-register, pre-register-verify, pre-register-check"),
  password: param("pre-register"),
  es_code: param("pre-register (ignored)"),
  idx: param("The wait_idx: pre-register-verify, pre-register-resend, pre-register-check"),
  verify_code: param("The code from the e-mail: pre-register-verify"),
  validation_key: param("start, step1, step2, the payment check"),
  first_name: param("step1"),
  last_name: param("step1"),
  customer_name: param("step1"),
  local_addr1: param("step1"),
  local_city: param("step1"),
  local_state: param("step1"),
  local_zip_postal: param("step1"),
  local_phone: param("step1"),
  billing_addr2: param("step2"),
  billing_city: param("step2"),
  billing_state: param("step2"),
  billing_zip_postal: param("step2")
}).annotations({ identifier: "AccountSetupForm" })

const YN = Schema.Literal("Y", "N")
const success = Schema.Literal("success")

export const PreRegisterData = Schema.Struct({
  result: success,
  message: Schema.String,
  wait_idx: Schema.String,
  verify_expires: Schema.String.annotations({ description: "ISO 8601 UTC end of the verification window." }),
  is_validated: Schema.Literal("N")
}).annotations({ identifier: "PreRegisterData", description: "pre-register" })

export const MessageData = Schema.Struct({ result: success, message: Schema.String }).annotations({
  identifier: "ProvisioningMessageData",
  description: "pre-register-verify, step2"
})

export const ResendData = Schema.Struct({
  result: success,
  message: Schema.String,
  verify_expires: Schema.String,
  is_validated: Schema.Literal("N")
}).annotations({ identifier: "ResendData", description: "pre-register-resend" })

export const CheckData = Schema.Struct({
  result: success,
  is_validated: Schema.Literal("Y"),
  validation_key: Schema.String
}).annotations({ identifier: "CheckData", description: "pre-register-check" })

export const StartData = Schema.Struct({
  result: success,
  customer_no: Schema.String,
  frequent_caller_id: Schema.String,
  has_firmographics: YN
}).annotations({ identifier: "StartData", description: "start" })

export const Step1Data = Schema.Struct({
  result: success,
  message: Schema.String,
  customer_no: Schema.String,
  user: Schema.Struct({
    email_address: Schema.String,
    first_name: Schema.String,
    last_name: Schema.String,
    status: Schema.Literal("active")
  }),
  api_keys: Schema.optional(
    Schema.Struct({ production: Schema.String, test: Schema.String }).annotations({
      description: "Only in the answer that activated the account: the keys are shown once."
    })
  )
}).annotations({ identifier: "Step1Data", description: "step1" })

export const PaymentCheckData = Schema.Struct({
  result: success,
  provider: Schema.String,
  registered: YN
}).annotations({ identifier: "PaymentCheckData", description: "registered-with-<provider>-check" })

export const AccountSetupData = Schema.Union(
  PreRegisterData,
  MessageData,
  ResendData,
  CheckData,
  StartData,
  Step1Data,
  PaymentCheckData
).annotations({ identifier: "AccountSetupData", description: "data of a provisioning answer, by action." })

export const VerifyLinkParams = Schema.Struct({
  token: param("The verification link's token (GET shows a confirm page; POST verifies).")
}).annotations({ identifier: "VerifyLinkParams" })
