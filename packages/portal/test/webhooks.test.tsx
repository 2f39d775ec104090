/**
 * The Webhooks pages' own pieces: UTC times (what a `datetime-local` field sends is read as UTC,
 * round trips, impossible dates refused), and the event-type picker's markup (every checkbox
 * labelled, described, the error tied to the fieldset).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { renderToString } from "preact-render-to-string"
import { formatUtc, parseUtcLocalInput, toUtcLocalInput } from "../src/internal/utcTime.js"
import { EventTypePicker, UtcDateTimeField } from "../src/views/webhooks.js"

/** Whole minutes from 1970 to 9999. */
const minutes = fc.integer({ min: 0, max: 253_402_300_740_000 / 60_000 }).map((m) => m * 60_000)

describe("UTC times", () => {
  it.prop("a datetime-local value made from a time reads back as that time", [minutes], ([ms]) => {
    expect(parseUtcLocalInput(toUtcLocalInput(ms))).toBe(ms)
  })

  it.prop("seconds and milliseconds are read too", [fc.integer({ min: 0, max: 4_102_444_800_000 })], ([ms]) => {
    expect(parseUtcLocalInput(new Date(ms).toISOString().slice(0, 23))).toBe(ms)
  })

  it.prop("never throws, and anything it accepts is a real instant from 1970", [fc.string()], ([text]) => {
    const parsed = parseUtcLocalInput(text)
    if (parsed !== undefined) expect(Number.isFinite(parsed) && parsed >= 0).toBe(true)
  })

  it("is UTC whatever the process's time zone, and refuses dates that do not exist", () => {
    expect(parseUtcLocalInput("2026-11-24T08:00")).toBe(Date.UTC(2026, 10, 24, 8, 0))
    expect(parseUtcLocalInput(" 2026-11-24T08:00:30 ")).toBe(Date.UTC(2026, 10, 24, 8, 0, 30))
    for (const bad of [
      "",
      "2026-02-30T10:00",
      "2026-11-24T24:00",
      "2026-11-24T10:60",
      "2026-13-01T10:00",
      "2026-11-24 10:00",
      "2026-11-24T10:00Z",
      "1969-12-31T23:59",
      "+02026-11-24T10:00"
    ])
      expect([bad, parseUtcLocalInput(bad)]).toEqual([bad, undefined])
    expect(formatUtc(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02 03:04:05 UTC")
    expect(toUtcLocalInput(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04")
  })
})

describe("EventTypePicker", () => {
  const catalog = [
    { type: "shipment.booked", description: "A shipment was booked." },
    { type: "shipment.canceled", description: "The shipment was <canceled>." }
  ]

  it("labels and describes every checkbox, checks the selected ones, escapes text", () => {
    const html = renderToString(<EventTypePicker catalog={catalog} selected={["shipment.canceled"]} />)
    expect(html).toContain("<legend>Event types</legend>")
    expect(html).toContain(
      '<input type="checkbox" id="event-shipment-booked" name="eventTypes" value="shipment.booked" aria-describedby="event-shipment-booked-description"/>'
    )
    expect(html).toContain('<label for="event-shipment-booked"><code>shipment.booked</code></label>')
    expect(html).toContain('value="shipment.canceled" checked')
    expect(html).toContain("The shipment was &lt;canceled>.")
    expect(html).not.toContain('aria-describedby="event-types-error"')
  })

  it("ties the error to the fieldset", () => {
    const html = renderToString(
      <EventTypePicker catalog={catalog} selected={[]} error="Pick at least one event type." />
    )
    expect(html).toContain('<fieldset class="field choices" aria-describedby="event-types-error">')
    expect(html).toContain('<span class="error" id="event-types-error">Pick at least one event type.</span>')
  })

  it("a UTC date-time field says its hint and error through aria-describedby", () => {
    const html = renderToString(
      <UtcDateTimeField name="since" label="Since (UTC)" value="2026-11-24T08:00" hint="UTC" error="Too late." />
    )
    expect(html).toContain('type="datetime-local"')
    expect(html).toContain('aria-invalid="true"')
    expect(html).toContain('aria-describedby="field-since-hint field-since-error"')
  })
})
