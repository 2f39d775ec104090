/**
 * @module Layout
 *
 * The frame of every page: a skip link, the header with the wordmark and (for a signed-in
 * viewer) the navigation with Sign out as a POST form button, the main landmark with the page's
 * heading and flash messages, and the footer. Rendered to a full HTML document by
 * {@link renderDocument}.
 */
import * as Redacted from "effect/Redacted"
import type { ComponentChildren, VNode } from "preact"
import { renderToString } from "preact-render-to-string"
import type { Viewer } from "../internal/session.js"
import { Button, PostForm } from "./components.js"
import type { Flash } from "./flash.js"

/** The sections of the navigation. */
export type Section = "keys" | "webhooks" | "shipments" | "account"

/** The navigation's entries: label and path below the base path. */
export const NAV: ReadonlyArray<{ readonly section: Section; readonly label: string; readonly path: string }> = [
  { section: "keys", label: "API Access and Activity", path: "/keys" },
  { section: "webhooks", label: "Webhooks", path: "/webhooks" },
  { section: "shipments", label: "Shipments", path: "/shipments" },
  { section: "account", label: "Account", path: "/account" }
]

/** What every page knows of the request: filled by the pipeline (`PortalContext.chrome`). */
export interface Chrome {
  /** The portal's base path (`/portal`): every link is built on it. */
  readonly basePath: string
  /** The stylesheet's full path (`/portal/assets/portal.<hash>.css`). */
  readonly stylesheet: string
  /** The signed-in user; absent on the sign-in and error pages. */
  readonly viewer: Viewer | undefined
  /** The CSRF token forms carry (the session's, or the pre-session token). */
  readonly csrf: string
  /** Messages carried over a redirect. */
  readonly flash: ReadonlyArray<Flash>
}

export interface LayoutProps {
  readonly chrome: Chrome
  /** The page's title: the `<title>` (with "— Waybill") and its `<h1>`. */
  readonly title: string
  /** The navigation entry to mark as current. */
  readonly section?: Section
  /** A narrow column (sign-in and the other single-form pages). */
  readonly narrow?: boolean
  /** Messages of this answer (a form's outcome), after the carried ones. */
  readonly messages?: ReadonlyArray<Flash>
  readonly children?: ComponentChildren
}

const Messages = (props: { readonly messages: ReadonlyArray<Flash> }) =>
  props.messages.length === 0 ? null : (
    <div class="flashes">
      {props.messages.map((m, i) => (
        <div class={`flash flash-${m.tone}`} role={m.tone === "error" ? "alert" : "status"} key={i}>
          {m.text}
        </div>
      ))}
    </div>
  )

const Nav = (props: { readonly chrome: Chrome; readonly viewer: Viewer; readonly section: Section | undefined }) => (
  <nav class="site-nav" aria-label="Portal">
    <ul>
      {NAV.map((entry) => (
        <li key={entry.section}>
          <a
            href={`${props.chrome.basePath}${entry.path}`}
            aria-current={entry.section === props.section ? "page" : undefined}
          >
            {entry.label}
          </a>
        </li>
      ))}
      <li class="signout">
        {/* Sign-out is a signed-in route: its token is the session's, even on a public page,
            whose own forms carry the pre-session token. */}
        <PostForm action={`${props.chrome.basePath}/signout`} csrf={Redacted.value(props.viewer.csrfToken)}>
          <Button variant="link">Sign out</Button>
        </PostForm>
      </li>
    </ul>
  </nav>
)

/** The page frame. */
export const Layout = (props: LayoutProps) => {
  const { chrome } = props
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} — Waybill`}</title>
        <link rel="stylesheet" href={chrome.stylesheet} />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <div class="site-header-inner">
            <a class="wordmark" href={`${chrome.basePath}/`}>
              Waybill
            </a>
            {chrome.viewer === undefined ? null : (
              <Nav chrome={chrome} viewer={chrome.viewer} section={props.section} />
            )}
          </div>
        </header>
        <main id="main" class={props.narrow === true ? "narrow" : undefined}>
          <h1>{props.title}</h1>
          <Messages messages={[...chrome.flash, ...(props.messages ?? [])]} />
          {props.children}
        </main>
        <footer class="site-footer">
          <div class="site-footer-inner">
            {chrome.viewer === undefined ? (
              <span>Waybill account portal</span>
            ) : (
              <span>
                Signed in as {chrome.viewer.email} (account {chrome.viewer.customerNo})
              </span>
            )}
          </div>
        </footer>
      </body>
    </html>
  )
}

/** A page as a full HTML document. */
export const renderDocument = (page: VNode): string => `<!doctype html>${renderToString(page)}`
