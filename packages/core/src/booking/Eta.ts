/**
 * @module Eta
 *
 * The delivery estimate and the delivery promise of a booking. They are separate on purpose:
 * the estimate is a drive-time simulation over the route (pickup, legs, service stops, business
 * hours in each stop's zone), while the guarantee follows the service's commercial rule
 * (window, same-day cutoff, next-day deadline, customer appointment). The guarantee is then
 * lifted to the estimate so Waybill never promises something its own estimate says it misses.
 *
 * Everything is an instant in epoch ms on whole seconds; formatting in the destination zone is
 * the caller's job (see `LocalTime.formatInZone` / `LocalTime.abbreviation`).
 */
import type { BusinessHours, Routing, ServiceOption, VehicleOption } from "../shared/index.js"
import { atClock, fromLocal, nextBusinessDay, parseClock, rollToBusinessHours, toLocal } from "../geo/index.js"

/** Everything the estimate needs, already resolved from the request and the configuration. */
export interface EtaInput {
  /** When the goods are ready (the parsed Pickupdate), epoch ms. */
  readonly readyAt: number
  readonly service: ServiceOption
  readonly vehicle: VehicleOption
  /** IANA zone of every stop in route order: pickup first, final delivery last (2 or more). */
  readonly stopTimeZones: ReadonlyArray<string>
  /** Road miles of each leg between consecutive stops (one fewer than the stops). */
  readonly legMiles: ReadonlyArray<number>
  /** The parsed Deliverdate, epoch ms: the promise of a `scheduled` service. */
  readonly requestedDeliveryAt: number
  readonly routing: Routing
  readonly hours: BusinessHours
}

/** Instants (epoch ms, whole seconds) of the estimate and the promise. */
export interface EtaResult {
  /** When a driver is expected at the pickup. */
  readonly pickupAt: number
  /** Expected arrival at each stop in route order; `[0]` is `pickupAt`. */
  readonly stopEtas: ReadonlyArray<number>
  /** Expected arrival at the last stop. */
  readonly estimatedDeliveryAt: number
  /** The promise: never earlier than the estimate rounded up to a quarter hour. */
  readonly guaranteedDeliveryAt: number
}

const MS_PER_SECOND = 1000
const MS_PER_MINUTE = 60_000
const QUARTER_HOUR_MS = 15 * MS_PER_MINUTE

const floorToSecond = (ms: number): number => Math.floor(ms / MS_PER_SECOND) * MS_PER_SECOND

/** Rounds up to the next multiple of 15 minutes since the epoch (unchanged if already on one). */
const ceilToQuarterHour = (ms: number): number => Math.ceil(ms / QUARTER_HOUR_MS) * QUARTER_HOUR_MS

/**
 * Drive time of a leg, in whole seconds so every instant stays on a second. Rounding is
 * monotone, so a longer leg never gives an earlier arrival.
 */
const legDurationMs = (miles: number, speedMph: number): number => Math.round((miles / speedMph) * 3600) * MS_PER_SECOND

const required = <A>(value: A | undefined, service: ServiceOption, field: string): A => {
  if (value === undefined) {
    throw new RangeError(`Service "${service.code}" of kind ${service.kind} has no ${field}`)
  }
  return value
}

/** The deadline clock on a pickup-zone calendar date, as an instant in the destination zone. */
const deadlineOn = (
  day: { readonly year: number; readonly month: number; readonly day: number },
  deadline: string,
  destinationZone: string
): number =>
  fromLocal(
    atClock({ year: day.year, month: day.month, day: day.day, hour: 0, minute: 0, second: 0 }, parseClock(deadline)),
    destinationZone
  )

/**
 * Estimates pickup, each stop and delivery, and the guaranteed delivery.
 *
 * - Pickup: ready time + the service's dispatch lead, rolled into business hours in the pickup
 *   zone; `nextday` picks up at the next business day's opening after the ready date;
 *   `scheduled` picks up at the ready time (rolled) without a lead.
 * - Route: the pickup and every later stop take `serviceMinutesPerStop` before the driver
 *   leaves; each leg takes `legMiles / speedMph`; an arrival outside business hours waits for
 *   the next opening in that stop's zone. The estimate is the last arrival.
 * - Guarantee: `window` = rolled ready time + `windowMinutes` + `extraMinutesPerStep` per
 *   started `stepMiles` beyond `graceMiles` of total route miles; `sameday` = `deadline` (in
 *   the destination zone) on the ready date if the rolled ready time is before `cutoff`, else on
 *   the next business day; `nextday` = `deadline` on the next business day after the ready
 *   date; `scheduled` = the requested delivery. Then raised to the estimate rounded up to the
 *   quarter hour.
 *
 * Throws a `RangeError` for inputs the booking flow never produces (fewer than two stops, leg
 * count not matching, negative or non-finite miles, non-positive speed, a service missing the setting its kind needs,
 * unusable business hours): those are defects, not customer errors.
 */
export const estimate = (input: EtaInput): EtaResult => {
  const { hours, legMiles, routing, service, stopTimeZones, vehicle } = input
  const pickupZone = stopTimeZones[0]
  const destinationZone = stopTimeZones[stopTimeZones.length - 1]
  if (pickupZone === undefined || destinationZone === undefined || stopTimeZones.length < 2) {
    throw new RangeError("An estimate needs at least two stops")
  }
  if (legMiles.length !== stopTimeZones.length - 1) {
    throw new RangeError(
      `Expected ${stopTimeZones.length - 1} legs for ${stopTimeZones.length} stops, got ${legMiles.length}`
    )
  }
  if (!(vehicle.speedMph > 0) || !Number.isFinite(vehicle.speedMph)) {
    throw new RangeError(`Vehicle "${vehicle.code}" has no usable speed`)
  }
  if (!legMiles.every((m) => Number.isFinite(m) && m >= 0)) {
    throw new RangeError("Leg miles must be finite and not negative")
  }

  const readyAt = floorToSecond(input.readyAt)
  const readyLocal = toLocal(readyAt, pickupZone)
  const rolledReady = rollToBusinessHours(readyAt, pickupZone, hours)
  const open = parseClock(hours.open)
  const serviceMs = Math.max(0, routing.serviceMinutesPerStop) * MS_PER_MINUTE
  const leadMs = Math.max(0, service.dispatchLeadMinutes) * MS_PER_MINUTE

  let pickupAt: number
  switch (service.kind) {
    case "scheduled":
      pickupAt = rolledReady
      break
    case "nextday": {
      const nextOpen = fromLocal(atClock(nextBusinessDay(readyLocal, hours), open), pickupZone)
      // A lead longer than a day (configurable) still pushes the pickup further out.
      pickupAt = Math.max(nextOpen, rollToBusinessHours(readyAt + leadMs, pickupZone, hours))
      break
    }
    default:
      pickupAt = rollToBusinessHours(readyAt + leadMs, pickupZone, hours)
  }
  pickupAt = floorToSecond(pickupAt)

  const stopEtas: Array<number> = [pickupAt]
  let departure = pickupAt + serviceMs
  let totalMiles = 0
  for (let i = 1; i < stopTimeZones.length; i++) {
    const miles = legMiles[i - 1] ?? 0
    totalMiles += miles
    const zone = stopTimeZones[i] ?? destinationZone
    const arrival = floorToSecond(rollToBusinessHours(departure + legDurationMs(miles, vehicle.speedMph), zone, hours))
    stopEtas.push(arrival)
    departure = arrival + serviceMs
  }
  const estimatedDeliveryAt = stopEtas[stopEtas.length - 1] ?? pickupAt

  let promised: number
  switch (service.kind) {
    case "window": {
      const windowMinutes = required(service.windowMinutes, service, "windowMinutes")
      const beyond = Math.max(0, totalMiles - routing.graceMiles)
      const steps = routing.stepMiles > 0 ? Math.ceil(beyond / routing.stepMiles) : 0
      promised = rolledReady + (windowMinutes + routing.extraMinutesPerStep * steps) * MS_PER_MINUTE
      break
    }
    case "sameday": {
      const deadline = required(service.deadline, service, "deadline")
      const cutoff = parseClock(required(service.cutoff, service, "cutoff"))
      const ready = toLocal(rolledReady, pickupZone)
      const beforeCutoff = ready.hour * 60 + ready.minute < cutoff.hour * 60 + cutoff.minute
      // The rolled ready time is always on a business day.
      promised = deadlineOn(beforeCutoff ? ready : nextBusinessDay(ready, hours), deadline, destinationZone)
      break
    }
    case "nextday": {
      const deadline = required(service.deadline, service, "deadline")
      promised = deadlineOn(nextBusinessDay(readyLocal, hours), deadline, destinationZone)
      break
    }
    case "scheduled":
      promised = input.requestedDeliveryAt
      break
  }

  const guaranteedDeliveryAt = floorToSecond(Math.max(promised, ceilToQuarterHour(estimatedDeliveryAt)))
  return { pickupAt, stopEtas, estimatedDeliveryAt, guaranteedDeliveryAt }
}
