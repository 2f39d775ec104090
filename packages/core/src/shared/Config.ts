/**
 * @module Config
 *
 * Every number Waybill uses to validate, rate and estimate lives here, as data the host can
 * override. The library never reads the environment: a host decodes its options with
 * {@link WaybillConfigSchema} and provides the {@link WaybillConfig} service.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** "HH:mm", 24-hour local wall time. */
export const LocalClock = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/))

/**
 * How a service's guaranteed delivery is computed.
 * - `window`: ready time + `windowMinutes` (+ the distance allowance of {@link Routing}).
 * - `sameday`: by `deadline` local time today if booked before `cutoff`, else next business day.
 * - `nextday`: by `deadline` local time on the next business day.
 * - `scheduled`: the customer's Deliverdate is the promise.
 */
export const ServiceKind = Schema.Literal("window", "sameday", "nextday", "scheduled")
export type ServiceKind = typeof ServiceKind.Type

export const ServiceOption = Schema.Struct({
  /** Canonical name returned in `service_type`. */
  code: Schema.String,
  /** Other spellings accepted (compared case-, space-, `-` and `_`-insensitively). */
  aliases: Schema.Array(Schema.String),
  kind: ServiceKind,
  windowMinutes: Schema.optional(Schema.Number),
  deadline: Schema.optional(LocalClock),
  cutoff: Schema.optional(LocalClock),
  /** Minutes from ready time until a driver can be at the pickup. */
  dispatchLeadMinutes: Schema.Number,
  /** Multiplies the transport charge. */
  multiplier: Schema.Number
})
export type ServiceOption = typeof ServiceOption.Type

/** Per-vehicle tariff in US dollars. */
export const VehicleRates = Schema.Struct({
  base: Schema.Number,
  includedMiles: Schema.Number,
  perMile: Schema.Number,
  includedWeightLb: Schema.Number,
  perLb: Schema.Number,
  perExtraStop: Schema.Number,
  minimum: Schema.Number
})
export type VehicleRates = typeof VehicleRates.Type

export const VehicleOption = Schema.Struct({
  code: Schema.String,
  aliases: Schema.Array(Schema.String),
  maxWeightLb: Schema.Number,
  maxPieces: Schema.Number,
  /** Average urban speed used for ETAs. */
  speedMph: Schema.Number,
  rates: VehicleRates
})
export type VehicleOption = typeof VehicleOption.Type

export const Fees = Schema.Struct({
  liftgate: Schema.Number,
  signature: Schema.Number,
  /** Percent of the transport charge (after the service multiplier). */
  fuelSurchargePercent: Schema.Number
})
export type Fees = typeof Fees.Type

export const Routing = Schema.Struct({
  /** Road distance = great-circle distance x circuity. */
  circuity: Schema.Number,
  serviceMinutesPerStop: Schema.Number,
  /** Window services get `extraMinutesPerStep` for every `stepMiles` beyond `graceMiles`. */
  graceMiles: Schema.Number,
  stepMiles: Schema.Number,
  extraMinutesPerStep: Schema.Number
})
export type Routing = typeof Routing.Type

export const BusinessHours = Schema.Struct({
  open: LocalClock,
  close: LocalClock,
  /** ISO weekdays (1 = Monday ... 7 = Sunday) that are business days. */
  days: Schema.Array(Schema.Int.pipe(Schema.between(1, 7)))
})
export type BusinessHours = typeof BusinessHours.Type

/** Server-side truncation lengths (silent). */
export const Truncation = Schema.Struct({
  contact: Schema.Int,
  name: Schema.Int,
  phone: Schema.Int,
  instructions: Schema.Int,
  billingReference: Schema.Int,
  address: Schema.Int,
  city: Schema.Int
})
export type Truncation = typeof Truncation.Type

export const BookingLimits = Schema.Struct({
  maxShipmentsPerRequest: Schema.Int,
  maxBodyBytes: Schema.Int,
  /** A Pickupdate further in the past than this is an error. */
  pastPickupToleranceMinutes: Schema.Number,
  maxStops: Schema.Int,
  maxPieceDetails: Schema.Int
})
export type BookingLimits = typeof BookingLimits.Type

/** Order documents and download tickets (interface 8; DECISIONS.md "Documents and download tickets"). */
export const DocumentLimits = Schema.Struct({
  /** Values in one lookup (comma-separated). */
  maxLookupValues: Schema.Int,
  /** Characters of the lookup parameter as sent. */
  maxSearchChars: Schema.Int,
  /** More matching orders than this is a 400, never a truncated answer. */
  maxMatchingOrders: Schema.Int,
  /** Customer reference and invoice lookups: longest value. */
  maxReferenceLength: Schema.Int,
  /** Download link lifetime from issue. */
  ticketTtlMinutes: Schema.Number,
  /** Largest document file an operator may add. */
  maxFileBytes: Schema.Int
})
export type DocumentLimits = typeof DocumentLimits.Type

/** One rate limit: at most `requests` in each fixed, epoch-aligned window of `windowSeconds`. */
export const RateLimitRule = Schema.Struct({
  requests: Schema.Int.pipe(Schema.positive()),
  windowSeconds: Schema.Number.pipe(Schema.positive())
})
export type RateLimitRule = typeof RateLimitRule.Type

/**
 * Automatic IP blocking (DECISIONS.md "Quote and track"): an address that, in one window,
 * touches more than `maxUnrelatedAccounts` accounts' shipments without their key, or gets more
 * than `maxMisses` unknown tracking numbers, is blocked; the n-th block lasts
 * `blockSeconds[n - 1]` (the last entry repeats).
 */
export const AbuseLimits = Schema.Struct({
  windowSeconds: Schema.Number.pipe(Schema.positive()),
  maxUnrelatedAccounts: Schema.Int.pipe(Schema.nonNegative()),
  maxMisses: Schema.Int.pipe(Schema.nonNegative()),
  blockSeconds: Schema.NonEmptyArray(Schema.Number.pipe(Schema.positive()))
})
export type AbuseLimits = typeof AbuseLimits.Type

/** Request limits and abuse controls (see docs/abuse-and-rate-limits.md). */
export const Limits = Schema.Struct({
  /** Every request with an API key, per key (live and test keys count apart). */
  perKey: RateLimitRule,
  /** Quote and track requests without a key, per client address (IPv6: per /64). */
  perClient: RateLimitRule,
  abuse: AbuseLimits
})
export type Limits = typeof Limits.Type

/**
 * Account provisioning (DECISIONS.md "Account provisioning"). Optional in the config so hosts
 * that predate provisioning keep decoding; absent means {@link provisioningDefaults}.
 */
export const ProvisioningLimits = Schema.Struct({
  otpTtlSeconds: Schema.Number.pipe(Schema.positive()),
  linkTtlSeconds: Schema.Number.pipe(Schema.positive()),
  validationKeyTtlSeconds: Schema.Number.pipe(Schema.positive()),
  maxFailuresPerCode: Schema.Int.pipe(Schema.positive()),
  maxFailuresPerRegistration: Schema.Int.pipe(Schema.positive()),
  resendCooldownSeconds: Schema.Number.pipe(Schema.nonNegative()),
  maxResendsPerDay: Schema.Int.pipe(Schema.nonNegative()),
  perIpHour: RateLimitRule,
  perIpDay: RateLimitRule,
  perDomainDay: RateLimitRule,
  mailsPerHour: RateLimitRule,
  /** Domains accepted even if the free-mail list names them (a customer on a listed host). */
  allowDomains: Schema.Array(Schema.String),
  /** The provider in `registered-with-<provider>-check`. */
  paymentProvider: Schema.String.pipe(Schema.pattern(/^[a-z0-9]{1,32}$/))
})
export type ProvisioningLimits = typeof ProvisioningLimits.Type

/** The provisioning defaults of DECISIONS.md. */
export const provisioningDefaults: ProvisioningLimits = {
  otpTtlSeconds: 600,
  linkTtlSeconds: 1800,
  validationKeyTtlSeconds: 3600,
  maxFailuresPerCode: 5,
  maxFailuresPerRegistration: 10,
  resendCooldownSeconds: 60,
  maxResendsPerDay: 5,
  perIpHour: { requests: 5, windowSeconds: 3600 },
  perIpDay: { requests: 20, windowSeconds: 86400 },
  perDomainDay: { requests: 20, windowSeconds: 86400 },
  mailsPerHour: { requests: 500, windowSeconds: 3600 },
  allowDomains: [],
  paymentProvider: "stripe"
}

export const WaybillConfigSchema = Schema.Struct({
  services: Schema.NonEmptyArray(ServiceOption),
  vehicles: Schema.NonEmptyArray(VehicleOption),
  fees: Fees,
  routing: Routing,
  businessHours: BusinessHours,
  truncation: Truncation,
  booking: BookingLimits,
  documents: DocumentLimits,
  limits: Limits,
  provisioning: Schema.optional(ProvisioningLimits)
})
export type WaybillConfigShape = typeof WaybillConfigSchema.Type

/** The defaults of `shared/design/DECISIONS.md`. */
export const defaults: WaybillConfigShape = {
  services: [
    {
      code: "rush",
      aliases: ["asap", "1hour", "hotshot", "direct"],
      kind: "window",
      windowMinutes: 90,
      dispatchLeadMinutes: 15,
      multiplier: 1.75
    },
    {
      code: "2hour",
      aliases: ["2hr", "2 hour", "two hour", "2 hours"],
      kind: "window",
      windowMinutes: 120,
      dispatchLeadMinutes: 30,
      multiplier: 1.4
    },
    {
      code: "4hour",
      aliases: ["4hr", "4 hour", "four hour", "4 hours"],
      kind: "window",
      windowMinutes: 240,
      dispatchLeadMinutes: 60,
      multiplier: 1.2
    },
    {
      code: "sameday",
      aliases: ["same day", "regular", "standard"],
      kind: "sameday",
      deadline: "17:00",
      cutoff: "14:00",
      dispatchLeadMinutes: 180,
      multiplier: 1
    },
    {
      code: "nextday",
      aliases: ["next day", "overnight", "economy"],
      kind: "nextday",
      deadline: "12:00",
      dispatchLeadMinutes: 0,
      multiplier: 0.85
    },
    {
      code: "scheduled",
      aliases: ["schedule", "appointment"],
      kind: "scheduled",
      dispatchLeadMinutes: 0,
      multiplier: 1
    }
  ],
  vehicles: [
    {
      code: "bike",
      aliases: ["bicycle", "cyclist", "courier"],
      maxWeightLb: 25,
      maxPieces: 3,
      speedMph: 12,
      rates: { base: 12, includedMiles: 3, perMile: 2, includedWeightLb: 10, perLb: 0.5, perExtraStop: 5, minimum: 12 }
    },
    {
      code: "car",
      aliases: ["sedan", "auto", "automobile"],
      maxWeightLb: 100,
      maxPieces: 10,
      speedMph: 20,
      rates: {
        base: 18,
        includedMiles: 5,
        perMile: 1.75,
        includedWeightLb: 25,
        perLb: 0.25,
        perExtraStop: 7.5,
        minimum: 18
      }
    },
    {
      code: "suv",
      aliases: ["minivan", "small van"],
      maxWeightLb: 300,
      maxPieces: 25,
      speedMph: 20,
      rates: {
        base: 28,
        includedMiles: 5,
        perMile: 2.1,
        includedWeightLb: 75,
        perLb: 0.2,
        perExtraStop: 10,
        minimum: 28
      }
    },
    {
      code: "cargovan",
      aliases: ["van", "cargo van", "sprinter"],
      maxWeightLb: 2000,
      maxPieces: 80,
      speedMph: 18,
      rates: {
        base: 45,
        includedMiles: 10,
        perMile: 2.5,
        includedWeightLb: 200,
        perLb: 0.1,
        perExtraStop: 15,
        minimum: 45
      }
    },
    {
      code: "boxtruck",
      aliases: ["box truck", "truck", "straight truck"],
      maxWeightLb: 8000,
      maxPieces: 300,
      speedMph: 15,
      rates: {
        base: 95,
        includedMiles: 10,
        perMile: 3.5,
        includedWeightLb: 1000,
        perLb: 0.05,
        perExtraStop: 25,
        minimum: 95
      }
    }
  ],
  fees: { liftgate: 35, signature: 3.5, fuelSurchargePercent: 12 },
  routing: { circuity: 1.25, serviceMinutesPerStop: 5, graceMiles: 30, stepMiles: 5, extraMinutesPerStep: 15 },
  businessHours: { open: "08:00", close: "18:00", days: [1, 2, 3, 4, 5] },
  truncation: { contact: 50, name: 50, phone: 15, instructions: 250, billingReference: 23, address: 60, city: 40 },
  booking: {
    maxShipmentsPerRequest: 100,
    maxBodyBytes: 1024 * 1024,
    pastPickupToleranceMinutes: 15,
    maxStops: 50,
    maxPieceDetails: 500
  },
  documents: {
    maxLookupValues: 100,
    maxSearchChars: 4096,
    maxMatchingOrders: 100,
    maxReferenceLength: 23,
    ticketTtlMinutes: 15,
    maxFileBytes: 25 * 1024 * 1024
  },
  limits: {
    perKey: { requests: 600, windowSeconds: 60 },
    perClient: { requests: 60, windowSeconds: 60 },
    abuse: { windowSeconds: 3600, maxUnrelatedAccounts: 10, maxMisses: 100, blockSeconds: [3600, 21600, 86400] }
  }
}

/** The configuration every use case reads. */
export class WaybillConfig extends Context.Tag("@waybill/core/WaybillConfig")<WaybillConfig, WaybillConfigShape>() {
  /** Provides the given configuration after checking it against the schema. */
  static readonly layer = (config: WaybillConfigShape = defaults) =>
    Layer.effect(WaybillConfig, Schema.decodeUnknown(WaybillConfigSchema)(config).pipe(Effect.orDie))
}
