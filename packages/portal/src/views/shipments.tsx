/**
 * @module views/shipments
 *
 * The Shipments pages' templates: the account's list with its search box, one shipment in full
 * (state, stops with their windows, legs, pieces, the event timeline, documents with download
 * links) and the cancel confirmation. Pure templates over core's `ShipmentSummary`,
 * `ShipmentDetail` and `DocumentLinks`; the route module (`routes/shipments.tsx`) reads them.
 *
 * Times are shown in UTC in the list and the timeline (one account's shipments can span time
 * zones, and UTC sorts the same for everyone); a stop's window and ETA in the stop's own time zone,
 * which is what the people at that address read their clocks by.
 */
import type { ComponentChildren } from "preact"
import type { Documents, Shipment, Shipments } from "@waybill/core"
import { type Chrome, Layout } from "./Layout.js"
import { Badge, type BadgeTone, Button, Field, Pager, PostForm, Table } from "./components.js"
import type { Flash } from "./flash.js"

type ShipmentDetail = Shipments.ShipmentDetail
type ShipmentRecord = ShipmentDetail["shipment"]
type State = ShipmentRecord["state"]
type Stop = ShipmentRecord["stops"][number]
type DocumentLinks = Documents.DocumentLinks
type ShipmentSummary = Shipment.ShipmentSummary

/** The hint under the search box: what it matches, and that it matches whole values only. */
export const SEARCH_HINT =
  "A tracking number, customer reference or invoice number. Exact match, not case-sensitive: part of a value finds nothing."

// ---------------------------------------------------------------------------------------------
// Formatting (pure: the times come from the records, never from a clock)

const pad = (n: number) => String(n).padStart(2, "0")

/** `2026-11-24 19:35 UTC`. */
export const formatUtc = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes()
  )} UTC`
}

/** A time in an IANA zone, with the zone's short name: `2026-11-24 13:35 CST`. UTC if the zone is unknown. */
export const formatLocal = (ms: number, timeZone: string): string => {
  let parts: Array<Intl.DateTimeFormatPart>
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short"
    }).formatToParts(new Date(ms))
  } catch {
    return formatUtc(ms)
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? ""
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")} ${part("timeZoneName")}`
}

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" })

/** `$12.34`. */
export const formatUsd = (amount: number): string => usd.format(amount)

/** A file size in bytes, KB or MB. */
export const formatSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1048576).toFixed(1)} MB`

/** `picked_up` -> `picked up`. */
export const humanize = (word: string): string => word.replace(/_/g, " ")

const STATE_TONE: Readonly<Record<State, BadgeTone>> = {
  booked: "info",
  assigned: "info",
  picked_up: "info",
  in_transit: "info",
  attempt_failed: "warning",
  returning: "warning",
  delivered: "success",
  returned: "neutral",
  canceled: "neutral",
  failed: "danger"
}

/** A shipment's state as a badge (the word is always there; the colour follows its meaning). */
export const StateBadge = (props: { readonly state: State }) => (
  <Badge tone={STATE_TONE[props.state]}>{humanize(props.state)}</Badge>
)

/** Live or test booking. */
export const ModeBadge = (props: { readonly livemode: boolean }) =>
  props.livemode ? <Badge tone="success">live</Badge> : <Badge tone="warning">test</Badge>

const place = (p: { readonly city: string; readonly state: string }) =>
  [p.city, p.state].filter((x) => x !== "").join(", ") || "—"

const orDash = (text: string) => (text === "" ? <span class="muted">—</span> : text)

// ---------------------------------------------------------------------------------------------
// The list

export interface ListProps {
  readonly chrome: Chrome
  readonly href: (path: string) => string
  /** The search term as typed ("" for none). */
  readonly q: string
  readonly rows: ReadonlyArray<ShipmentSummary>
  /** The newest page's link, when this is not it. */
  readonly firstHref: string | undefined
  readonly nextHref: string | null
  readonly messages: ReadonlyArray<Flash>
}

/** `GET /shipments`: the search box and one page of the account's shipments, newest first. */
export const ShipmentList = (props: ListProps) => {
  const link = (trackNo: string) => props.href(`/shipments/${encodeURIComponent(trackNo)}`)
  return (
    <Layout chrome={props.chrome} title="Shipments" section="shipments" messages={props.messages}>
      <form method="get" action={props.href("/shipments")} class="card search" role="search" aria-label="Shipments">
        <Field name="q" label="Search shipments" type="search" value={props.q} hint={SEARCH_HINT} maxLength={200} />
        <div class="actions">
          <Button>Search</Button>
          {props.q === "" ? null : (
            <a class="button button-secondary" href={props.href("/shipments")}>
              Show all shipments
            </a>
          )}
        </div>
      </form>
      <Table
        caption={props.q === "" ? "Shipments, newest first" : `Shipments matching “${props.q}”`}
        rows={props.rows}
        rowKey={(s) => s.trackNo}
        empty={
          props.q === "" ? "No shipments booked yet." : "No shipment has this tracking number, reference or invoice."
        }
        columns={[
          {
            header: "Tracking number",
            cell: (s) => (
              <a class="mono" href={link(s.trackNo)}>
                {s.trackNo}
              </a>
            )
          },
          { header: "Created", cell: (s) => formatUtc(s.createdAt) },
          { header: "State", cell: (s) => <StateBadge state={s.state} /> },
          { header: "Reference", cell: (s) => orDash(s.reference) },
          { header: "Invoice", cell: (s) => orDash(s.invoice) },
          { header: "From → to", cell: (s) => `${place(s.from)} → ${place(s.to)}` },
          { header: "Service / vehicle", cell: (s) => `${s.serviceType} / ${s.vehicleType}` },
          { header: "Price", cell: (s) => formatUsd(s.total) },
          { header: "Mode", cell: (s) => <ModeBadge livemode={s.livemode} /> }
        ]}
      />
      <Pager label="Shipment pages" firstHref={props.firstHref} nextHref={props.nextHref} />
    </Layout>
  )
}

// ---------------------------------------------------------------------------------------------
// One shipment

const Facts = (props: { readonly rows: ReadonlyArray<readonly [string, ComponentChildren]> }) => (
  <dl class="facts">
    {props.rows.map(([term, value]) => (
      <div key={term}>
        <dt>{term}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)

/**
 * A stop's window: the pickup's ready time; the final delivery's requested time, and the
 * guaranteed one when the service sets another.
 */
export const windowOf = (
  shipment: Pick<ShipmentRecord, "stops" | "readyAt" | "requestedDeliveryAt" | "guaranteedDeliveryAt">,
  stop: Stop
): string => {
  const last = shipment.stops.length - 1
  if (stop.seq === 0) return `ready from ${formatLocal(shipment.readyAt, stop.timeZone)}`
  if (stop.seq === last) {
    const requested = `requested by ${formatLocal(shipment.requestedDeliveryAt, stop.timeZone)}`
    return shipment.guaranteedDeliveryAt > 0 && shipment.guaranteedDeliveryAt !== shipment.requestedDeliveryAt
      ? `${requested}; guaranteed by ${formatLocal(shipment.guaranteedDeliveryAt, stop.timeZone)}`
      : requested
  }
  return "—"
}

const address = (s: Stop) => (
  <>
    {s.name === "" ? null : (
      <>
        <strong>{s.name}</strong>
        <br />
      </>
    )}
    {s.address}
    <br />
    {[s.city, [s.state, s.zip].filter((x) => x !== "").join(" ")].filter((x) => x !== "").join(", ")}
  </>
)

const contact = (s: Stop) =>
  s.contactName === "" && s.phone === "" && s.note === "" ? (
    <span class="muted">—</span>
  ) : (
    <>
      {[s.contactName, s.phone].filter((x) => x !== "").join(", ")}
      {s.note === "" ? null : (
        <>
          <br />
          <span class="muted">{s.note}</span>
        </>
      )}
    </>
  )

/** Data fields the page shows elsewhere already (its heading, its summary). */
const SHOWN_ELSEWHERE = new Set(["track_no", "trackNo", "customer_no", "customerNo", "livemode"])

/**
 * A timeline entry's details: its first few plain data fields (a stop, a reason, a document
 * type), skipping what the page already shows. Nested values are left to the API's events.
 */
export const eventDetail = (data: Readonly<Record<string, unknown>>): string =>
  Object.entries(data)
    .filter(([k]) => !SHOWN_ELSEWHERE.has(k))
    .filter(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")
    .slice(0, 4)
    .map(([k, v]) => `${humanize(k)}: ${String(v)}`)
    .join(", ")

export interface DetailProps {
  readonly chrome: Chrome
  readonly href: (path: string) => string
  readonly detail: ShipmentDetail
  readonly links: DocumentLinks
}

const Documents_ = (props: { readonly detail: ShipmentDetail; readonly links: DocumentLinks }) => {
  const { detail, links } = props
  if (detail.documents.length === 0) return <p class="muted">No documents yet.</p>
  const byId = new Map(links.links.map((l) => [l.document.id, l.path]))
  return (
    <>
      {links.keyMode === null ? (
        <p class="flash flash-warning" role="status">
          No API key of this account is active, so download links cannot be made. Enable a key on the API Access page to
          download these documents.
        </p>
      ) : (
        <p class="muted">
          Download links are issued under the account's {links.keyMode} key and work until{" "}
          {links.expiresAt === null ? "the key changes" : formatUtc(links.expiresAt)}; regenerating or disabling that
          key ends them at once.
        </p>
      )}
      <Table
        caption="Documents"
        rows={detail.documents}
        rowKey={(d) => d.id}
        columns={[
          { header: "Type", cell: (d) => humanize(d.type) },
          { header: "Page", cell: (d) => (d.kind === "signature" ? "signature" : `${d.batch}.${d.page}`) },
          { header: "Format", cell: (d) => d.contentType },
          { header: "Size", cell: (d) => formatSize(d.size) },
          { header: "Added", cell: (d) => formatUtc(d.createdAt) },
          {
            header: "Download",
            cell: (d) => {
              const path = byId.get(d.id)
              return path === undefined ? (
                <span class="muted">no link</span>
              ) : (
                <a href={path} aria-label={`Download ${humanize(d.type)} ${d.batch}.${d.page}`}>
                  Download
                </a>
              )
            }
          }
        ]}
      />
    </>
  )
}

/** `GET /shipments/:trackingNo`: everything about one shipment, and Cancel while it can be. */
export const ShipmentPage = (props: DetailProps) => {
  const { detail } = props
  const s = detail.shipment
  const stopName = (seq: number) => `${seq + 1}. ${s.stops[seq]?.name || s.stops[seq]?.city || "stop"}`
  return (
    <Layout chrome={props.chrome} title={`Shipment ${s.trackNo}`} section="shipments">
      <p>
        <a class="back-link" href={props.href("/shipments")}>
          ← All shipments
        </a>
      </p>
      <section class="card" aria-labelledby="summary-title">
        <h2 id="summary-title">Summary</h2>
        <Facts
          rows={[
            ["State", <StateBadge state={s.state} />],
            ["Mode", <ModeBadge livemode={s.livemode} />],
            ["Created", formatUtc(s.createdAt)],
            ["Reference", orDash(s.billingReference)],
            ["Invoice", orDash(detail.invoice)],
            ["Service / vehicle", `${s.serviceType} / ${s.vehicleType}`],
            ["Pieces", `${s.pieces} (${s.weightLb} lb)`],
            ["Price", formatUsd(s.charge.total)],
            ["Estimated delivery", formatUtc(s.estimatedDeliveryAt)],
            ["Contact", [s.contact, s.phone, s.email].filter((x) => x !== "").join(", ") || "—"]
          ]}
        />
        {detail.cancellable ? (
          <p>
            <a class="button button-danger" href={props.href(`/shipments/${encodeURIComponent(s.trackNo)}/cancel`)}>
              Cancel shipment
            </a>
          </p>
        ) : null}
      </section>
      <h2>Stops</h2>
      <Table
        caption="Stops, in route order"
        rows={s.stops}
        rowKey={(stop) => String(stop.seq)}
        columns={[
          { header: "Stop", cell: (stop) => `${stop.seq + 1} (${stop.role})` },
          { header: "Address", cell: address },
          { header: "Contact", cell: contact },
          { header: "Window", cell: (stop) => windowOf(s, stop) },
          { header: "ETA", cell: (stop) => formatLocal(stop.etaAt, stop.timeZone) },
          { header: "Status", cell: (stop) => humanize(stop.status) }
        ]}
      />
      <h2>Legs</h2>
      <Table
        caption="Legs between stops"
        rows={s.legs}
        rowKey={(leg) => String(leg.seq)}
        empty="No legs."
        columns={[
          { header: "Leg", cell: (leg) => String(leg.seq + 1) },
          { header: "From", cell: (leg) => stopName(leg.fromStop) },
          { header: "To", cell: (leg) => stopName(leg.toStop) },
          { header: "Miles", cell: (leg) => leg.miles.toFixed(1) }
        ]}
      />
      <h2>Pieces</h2>
      <Table
        caption="Piece details"
        rows={s.pieceDetails}
        rowKey={(p) => String(p.seq)}
        empty="No piece details were given at booking."
        columns={[
          { header: "Piece", cell: (p) => orDash(p.pieceNo) },
          { header: "Weight", cell: (p) => orDash(p.weight) },
          {
            header: "Dimensions",
            cell: (p) =>
              p.length === "" && p.width === "" && p.height === ""
                ? orDash("")
                : `${p.length} × ${p.width} × ${p.height}`
          },
          { header: "Count", cell: (p) => orDash(p.pc) },
          { header: "Id", cell: (p) => orDash(p.sourceId) },
          { header: "Description", cell: (p) => orDash(p.description) }
        ]}
      />
      <h2>Timeline</h2>
      <Table
        caption="Events, oldest first"
        rows={detail.events}
        rowKey={(e) => e.id}
        empty="No events yet."
        columns={[
          { header: "Time", cell: (e) => formatUtc(e.occurredAt) },
          { header: "Event", cell: (e) => e.type },
          { header: "Details", cell: (e) => orDash(eventDetail(e.data)) }
        ]}
      />
      <h2>Documents</h2>
      <Documents_ detail={detail} links={props.links} />
    </Layout>
  )
}

/** `GET /shipments/:trackingNo/cancel`: the confirmation step before the POST. */
export const CancelPage = (props: {
  readonly chrome: Chrome
  readonly href: (path: string) => string
  readonly shipment: ShipmentRecord
}) => {
  const s = props.shipment
  const back = props.href(`/shipments/${encodeURIComponent(s.trackNo)}`)
  return (
    <Layout chrome={props.chrome} title={`Cancel shipment ${s.trackNo}?`} section="shipments" narrow>
      <div class="card">
        <p>
          Shipment <span class="mono">{s.trackNo}</span>
          {s.billingReference === "" ? null : <> (reference {s.billingReference})</>} will be canceled. A canceled
          shipment is not picked up, and this cannot be undone.
        </p>
        <PostForm action={`${back}/cancel`} csrf={props.chrome.csrf} label="Cancel the shipment" class="actions">
          <Button variant="danger">Yes, cancel shipment</Button>
          <a class="button button-secondary" href={back}>
            No, keep it
          </a>
        </PostForm>
      </div>
    </Layout>
  )
}
