/**
 * @module routes/shipments
 *
 * The Shipments pages. Every read and action is a core use case scoped by the viewer's customer
 * number, so another account's shipment is not found, exactly like an unknown one:
 *
 * - `GET /shipments?q=&starting_after=`: the account's shipments newest first
 *   (`Shipments.search`), a search box (tracking number, customer reference or invoice number;
 *   exact, case-insensitive), a cursor pager. A broken cursor shows a notice and the newest page.
 * - `GET /shipments/:trackingNo`: the shipment in full (`Shipments.detail`) with download links
 *   for its documents (`Documents.linksOf` on the documents `detail` read: the API's own tickets, so the link is the API's
 *   download path on the same server), and a Cancel link while it can be canceled.
 * - `GET /shipments/:trackingNo/cancel`: the confirmation step; `POST` the same path cancels
 *   (`Shipments.cancel`) and goes back to the shipment's page with a message.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Documents, Page, Shipments } from "@waybill/core"
import { type Answer, page, redirect } from "../internal/answer.js"
import { type Route, type ViewerContext, viewerRoute } from "../internal/context.js"
import { ErrorPage } from "../views/ErrorPage.js"
import type { Flash } from "../views/flash.js"
import { CancelPage, ShipmentList, ShipmentPage } from "../views/shipments.js"

/** The page size of the list. */
export const SHIPMENTS_PER_PAGE = 20

/** The notice of a cursor that is not one of this list's (edited, truncated, from another list). */
export const BAD_CURSOR =
  "That page of the list could not be found (the link is broken or out of date). Showing the newest shipments."

const notFound = (ctx: ViewerContext): Answer =>
  page(
    404,
    <ErrorPage
      chrome={ctx.chrome}
      status={404}
      detail="There is no shipment with this tracking number in your account."
    />
  )

const shipmentPath = (ctx: ViewerContext, trackNo: string) => ctx.href(`/shipments/${encodeURIComponent(trackNo)}`)

/** The list's URL for a search term and a cursor (each left out when empty). */
const listHref = (ctx: ViewerContext, q: string, startingAfter?: string) => {
  const query = new URLSearchParams()
  if (q !== "") query.set("q", q)
  if (startingAfter !== undefined) query.set("starting_after", startingAfter)
  const text = query.toString()
  return ctx.href(`/shipments${text === "" ? "" : `?${text}`}`)
}

/** `GET /shipments`: one page of the account's shipments, optionally narrowed by the search term. */
export const shipmentList = viewerRoute(
  "GET",
  "/shipments",
  Effect.fnUntraced(function* (ctx: ViewerContext) {
    const q = (ctx.url.searchParams.get("q") ?? "").trim()
    const customerNo = ctx.user.customerNo
    const parsed = Page.parseQuery(String(SHIPMENTS_PER_PAGE), ctx.url.searchParams.get("starting_after"))
    // A cursor that is not one of this list's (edited, cut short, from another list): say so and
    // show the newest page, which has no cursor and so always reads.
    const read = Either.isLeft(parsed)
      ? Either.left(parsed.left)
      : yield* Shipments.search(customerNo, { q }, parsed.right).pipe(
          Effect.map(Either.right),
          Effect.catchTag("InvalidPage", (e) => Effect.succeed(Either.left(e)))
        )
    const atCursor = Either.isRight(parsed) && parsed.right.startingAfter !== undefined && Either.isRight(read)
    const result = Either.isRight(read)
      ? read.right
      : yield* Shipments.search(customerNo, { q }, { limit: SHIPMENTS_PER_PAGE }).pipe(
          Effect.catchTag("InvalidPage", Effect.die)
        )
    const messages: ReadonlyArray<Flash> = Either.isLeft(read) ? [{ tone: "warning", text: BAD_CURSOR }] : []
    return page(
      Either.isLeft(read) ? 400 : 200,
      <ShipmentList
        chrome={ctx.chrome}
        href={ctx.href}
        q={q}
        rows={result.items}
        firstHref={atCursor ? listHref(ctx, q) : undefined}
        nextHref={result.nextCursor === null ? null : listHref(ctx, q, result.nextCursor)}
        messages={messages}
      />
    )
  })
)

/** `GET /shipments/:trackingNo`: the shipment, its documents' links, and Cancel while it can be. */
export const shipmentPage = viewerRoute(
  "GET",
  "/shipments/:trackingNo",
  Effect.fnUntraced(
    function* (ctx: ViewerContext) {
      const trackNo = ctx.params["trackingNo"]!
      const detail = yield* Shipments.detail(ctx.user.customerNo, trackNo)
      const links =
        detail.documents.length === 0
          ? ({ keyMode: null, expiresAt: null, links: [] } satisfies Documents.DocumentLinks)
          : yield* Documents.linksOf(ctx.user, detail.documents)
      return page(200, <ShipmentPage chrome={ctx.chrome} href={ctx.href} detail={detail} links={links} />)
    },
    (effect, ctx) => effect.pipe(Effect.catchTag("ShipmentNotFound", () => Effect.succeed(notFound(ctx))))
  )
)

/** `GET /shipments/:trackingNo/cancel`: asks before canceling; back to the shipment once it cannot be. */
export const cancelConfirm = viewerRoute(
  "GET",
  "/shipments/:trackingNo/cancel",
  Effect.fnUntraced(
    function* (ctx: ViewerContext) {
      const trackNo = ctx.params["trackingNo"]!
      const detail = yield* Shipments.detail(ctx.user.customerNo, trackNo)
      if (!detail.cancellable) return redirect(shipmentPath(ctx, trackNo), { flash: "shipment-not-cancellable" })
      return page(200, <CancelPage chrome={ctx.chrome} href={ctx.href} shipment={detail.shipment} />)
    },
    (effect, ctx) => effect.pipe(Effect.catchTag("ShipmentNotFound", () => Effect.succeed(notFound(ctx))))
  )
)

/** `POST /shipments/:trackingNo/cancel`: cancels, then the shipment's page shows its new state. */
export const cancelShipment = viewerRoute("POST", "/shipments/:trackingNo/cancel", (ctx) => {
  const trackNo = ctx.params["trackingNo"]!
  const back = shipmentPath(ctx, trackNo)
  return Shipments.cancel(ctx.user.customerNo, trackNo).pipe(
    Effect.as(redirect(back, { flash: "shipment-canceled" })),
    Effect.catchTags({
      ShipmentNotFound: () => Effect.succeed(notFound(ctx)),
      TransitionRejected: () => Effect.succeed(redirect(back, { flash: "shipment-not-cancellable" })),
      // Still conflicting after the use case's retries: someone else keeps changing it right now.
      VersionConflict: () => Effect.succeed(redirect(back, { flash: "shipment-not-cancellable" })),
      CancelProviderFailed: (e) =>
        Effect.logWarning("portal: the cancel provider refused", { trackNo, reason: e.message }).pipe(
          Effect.as(redirect(back, { flash: "shipment-cancel-failed" }))
        )
    })
  )
})

/** The routes of this group. */
export const shipmentRoutes: ReadonlyArray<Route> = [shipmentList, shipmentPage, cancelConfirm, cancelShipment]
