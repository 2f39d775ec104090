/**
 * @module Look
 *
 * Waybill's one look, shared by everything it shows a person: the account portal's pages, the
 * pages `@waybill/http` serves on its own (the e-mail verification page), and every e-mail. The
 * palette and fonts are the values the portal's stylesheet is built from; {@link pageCss} is the
 * base stylesheet of a page, {@link mailHtml} the shell of an e-mail.
 *
 * Markup is built as {@link Html} values with the {@link markup} template: every interpolated
 * string is escaped, only `Html` values pass through as they are, so a name or an address given
 * by a user can never become markup. Pure: strings in, strings out.
 */

/** The colours, as CSS hex values. */
export const palette = {
  brand: "#0b5cad",
  brandDark: "#084a8c",
  ink: "#1a1f29",
  muted: "#5b6577",
  surface: "#ffffff",
  background: "#f4f6f9",
  border: "#d8dee8",
  danger: "#b42318",
  success: "#067647",
  warning: "#b54708"
} as const

/** Font stacks: the system's own fonts, so nothing is fetched from elsewhere. */
export const fonts = {
  sans: `system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif`,
  mono: `ui-monospace, SFMono-Regular, Menlo, Consolas, monospace`
} as const

/** The wordmark: plain text, no image (e-mail clients block remote images, pages fetch nothing). */
export const wordmark = "Waybill"

/** Markup that is already safe: made only by {@link markup}, {@link raw} and the helpers below. */
export interface Html {
  readonly _tag: "Html"
  readonly value: string
}

const make = (value: string): Html => ({ _tag: "Html", value })

/** True for an {@link Html} value. */
export const isHtml = (u: unknown): u is Html =>
  typeof u === "object" &&
  u !== null &&
  (u as { _tag?: unknown })._tag === "Html" &&
  typeof (u as Html).value === "string"

/** Escapes text for an element's content or a quoted attribute value (both quote kinds). */
export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Trusted markup, taken as it is: only for constants written in the source, never for input. */
export const raw = (value: string): Html => make(value)

/** What {@link markup} accepts between its parts. */
export type Interpolation = string | number | Html | ReadonlyArray<Html> | null | undefined

const piece = (value: Interpolation): string => {
  if (value === null || value === undefined) return ""
  if (typeof value === "number") return escapeHtml(String(value))
  if (typeof value === "string") return escapeHtml(value)
  if (isHtml(value)) return value.value
  return value.map((h) => h.value).join("")
}

/**
 * A template that escapes every interpolated string and number, and keeps {@link Html} values
 * (or arrays of them) as they are: `markup\`<p>${name}</p>\``. (Not named `html`: Prettier would
 * reformat templates with that tag, and change what they render.)
 */
export const markup = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html =>
  make(strings.reduce((out, s, i) => out + s + (i < values.length ? piece(values[i]) : ""), ""))

/**
 * An `href` for a link: http and https URLs only. Anything else (`javascript:`, `data:`) becomes
 * `about:invalid`, so a malformed link is dead rather than dangerous.
 */
export const safeUrl = (url: string): string => (/^https?:\/\//i.test(url.trim()) ? url.trim() : "about:invalid")

// ---------------------------------------------------------------------------------------------
// E-mail
// ---------------------------------------------------------------------------------------------

/**
 * E-mail clients drop `<style>` and `<link>` (or rewrite them), so every rule is an inline
 * `style` attribute; these are the ones the helpers share.
 */
const mailStyle = {
  text: `font-family:${fonts.sans};font-size:16px;line-height:1.5;color:${palette.ink}`,
  paragraph: `margin:0 0 16px;font-family:${fonts.sans};font-size:16px;line-height:1.5;color:${palette.ink}`,
  small: `margin:0 0 12px;font-family:${fonts.sans};font-size:13px;line-height:1.5;color:${palette.muted}`,
  h1: `margin:0 0 16px;font-family:${fonts.sans};font-size:22px;line-height:1.3;font-weight:700;color:${palette.ink}`,
  code: `font-family:${fonts.mono};font-size:14px;color:${palette.ink};background:${palette.background};border:1px solid ${palette.border};border-radius:4px;padding:1px 4px;word-break:break-all`
} as const

/** A paragraph of an e-mail's body. */
export const paragraph = (content: Html): Html => markup`<p style="${mailStyle.paragraph}">${content}</p>`

/** A smaller, muted paragraph (validity, "ignore this if ..."). */
export const note = (content: Html): Html => markup`<p style="${mailStyle.small}">${content}</p>`

/** Inline code (an id, a URL). */
export const code = (text: string): Html => markup`<code style="${mailStyle.code}">${text}</code>`

/**
 * A button-shaped link for an e-mail: a table cell with a background (what Outlook renders) around
 * a padded link (what every other client renders). `id` lets tests and scripts find it.
 */
export const button = (options: { readonly href: string; readonly label: string; readonly id?: string }): Html =>
  markup`<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:8px 0 20px"><tr><td style="background:${palette.brand};border-radius:6px"><a href="${safeUrl(options.href)}"${options.id === undefined ? "" : markup` id="${options.id}"`} style="display:inline-block;padding:12px 22px;font-family:${fonts.sans};font-size:16px;font-weight:600;line-height:1.2;color:#ffffff;text-decoration:none;border-radius:6px">${options.label}</a></td></tr></table>`

/**
 * A code set apart: large, monospace, spaced, easy to copy (a one-time code). `id` lets tests and
 * scripts find it.
 */
export const codeBlock = (options: { readonly text: string; readonly id?: string }): Html =>
  markup`<p${options.id === undefined ? "" : markup` id="${options.id}"`} style="margin:0 0 16px;padding:12px 16px;font-family:${fonts.mono};font-size:28px;font-weight:700;letter-spacing:4px;color:${palette.ink};background:${palette.background};border:1px solid ${palette.border};border-radius:6px;text-align:center">${options.text}</p>`

/** What {@link mailHtml} takes. */
export interface MailHtmlOptions {
  /** The heading and `<title>`: plain text. */
  readonly title: string
  /** The line a mail client shows next to the subject in the list: plain text, hidden in the body. */
  readonly preheader?: string
  /** The card's content, after the heading. */
  readonly body: Html
}

/**
 * An e-mail's HTML part: the wordmark, a card with the title and body, a footer. Tables for
 * layout and inline styles only, 600 px wide at most, so Outlook, Gmail and phones render it the
 * same way.
 */
export const mailHtml = (options: MailHtmlOptions): string =>
  markup`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light"><meta name="supported-color-schemes" content="light"><title>${options.title}</title></head><body style="margin:0;padding:0;background:${palette.background}">${
    options.preheader === undefined
      ? ""
      : markup`<div style="display:none;max-height:0;max-width:0;overflow:hidden;opacity:0;mso-hide:all">${options.preheader}</div>`
  }<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:${palette.background}"><tr><td align="center" style="padding:24px 12px"><table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:600px"><tr><td style="padding:0 4px 16px;font-family:${fonts.sans};font-size:22px;font-weight:700;letter-spacing:-0.5px;color:${palette.brand}">${wordmark}</td></tr><tr><td style="background:${palette.surface};border:1px solid ${palette.border};border-radius:8px;padding:28px 24px;${mailStyle.text}"><h1 style="${mailStyle.h1}">${options.title}</h1>${options.body}</td></tr><tr><td style="padding:16px 4px;font-family:${fonts.sans};font-size:12px;line-height:1.5;color:${palette.muted}">Sent by ${wordmark}. This is an automated message; replies are not read.</td></tr></table></td></tr></table></body></html>`
    .value

// ---------------------------------------------------------------------------------------------
// Pages
// ---------------------------------------------------------------------------------------------

/**
 * The base stylesheet of a page: the palette as custom properties, the system fonts, a header
 * with the wordmark, a centred card, readable forms (labels above their fields, large targets, a
 * visible focus ring) and a narrow-screen layout. Pages that stand alone (the verification page)
 * put it in a `<style>` allowed by its hash ({@link page}); the portal serves it as the first part
 * of its own stylesheet. No `url()`: nothing is fetched.
 */
export const pageCss = [
  `:root{--brand:${palette.brand};--brand-dark:${palette.brandDark};--ink:${palette.ink};--muted:${palette.muted};--surface:${palette.surface};--background:${palette.background};--border:${palette.border};--danger:${palette.danger};--success:${palette.success};--warning:${palette.warning};--font:${fonts.sans};--mono:${fonts.mono}}`,
  `*,*::before,*::after{box-sizing:border-box}`,
  `html{-webkit-text-size-adjust:100%;text-size-adjust:100%}`,
  `body{margin:0;min-height:100vh;background:var(--background);color:var(--ink);font-family:var(--font);font-size:1rem;line-height:1.5}`,
  `a{color:var(--brand)}a:hover{color:var(--brand-dark)}`,
  `:focus-visible{outline:3px solid var(--brand);outline-offset:2px}`,
  `.skip{position:absolute;left:-9999px}.skip:focus{left:1rem;top:1rem;background:var(--surface);padding:.5rem 1rem;z-index:10}`,
  `.site-header{background:var(--surface);border-bottom:1px solid var(--border)}`,
  `.site-header .inner{max-width:72rem;margin:0 auto;padding:.75rem 1.5rem;display:flex;align-items:center;gap:1.5rem}`,
  `.wordmark{font-weight:700;font-size:1.375rem;letter-spacing:-.02em;color:var(--brand);text-decoration:none}`,
  `main{display:block;max-width:72rem;margin:0 auto;padding:2rem 1.5rem}`,
  `main.narrow{max-width:34rem}`,
  `.card{background:var(--surface);border:1px solid var(--border);border-radius:.5rem;padding:2rem 1.75rem}`,
  `h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}h2{font-size:1.25rem;line-height:1.3;margin:1.5rem 0 .75rem}`,
  `p{margin:0 0 1rem}.muted{color:var(--muted)}`,
  `code,kbd,pre{font-family:var(--mono);font-size:.9375em}`,
  `form{margin:0}label{display:block;font-weight:600;margin:0 0 .375rem}`,
  `.field{margin:0 0 1.25rem}.hint{display:block;color:var(--muted);font-size:.875rem;margin:.25rem 0 0}`,
  `input,select,textarea{font:inherit;color:inherit;width:100%;min-height:2.75rem;padding:.5rem .75rem;background:var(--surface);border:1px solid var(--muted);border-radius:.375rem}`,
  `input[type=checkbox],input[type=radio]{width:auto;min-height:0}`,
  `.button,button{display:inline-block;font:inherit;font-weight:600;min-height:2.75rem;padding:.625rem 1.25rem;border:1px solid var(--brand);border-radius:.375rem;background:var(--brand);color:#fff;cursor:pointer;text-decoration:none;text-align:center}`,
  `.button:hover,button:hover{background:var(--brand-dark);border-color:var(--brand-dark);color:#fff}`,
  `.button.secondary,button.secondary{background:var(--surface);color:var(--brand)}`,
  `.button.danger,button.danger{background:var(--danger);border-color:var(--danger)}`,
  `.notice{border:1px solid var(--border);border-left:4px solid var(--brand);background:var(--surface);border-radius:.375rem;padding:.75rem 1rem;margin:0 0 1rem}`,
  `.notice.error{border-left-color:var(--danger)}.notice.success{border-left-color:var(--success)}.notice.warning{border-left-color:var(--warning)}`,
  `.site-footer{max-width:72rem;margin:0 auto;padding:1rem 1.5rem 2rem;color:var(--muted);font-size:.875rem}`,
  `@media (max-width:40rem){main{padding:1rem .75rem}.card{padding:1.25rem 1rem}.site-header .inner{padding:.75rem}.button,button{width:100%}}`,
  `@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}`
].join("\n")

/** What {@link page} takes. */
export interface PageOptions {
  /** The `<title>` (after which " · Waybill" follows) and, unless `heading` is false, the `<h1>`. */
  readonly title: string
  /** The card's content, after the heading. */
  readonly body: Html
  /** Whether the card opens with the title as `<h1>` (default true). */
  readonly heading?: boolean
}

/**
 * A whole page that stands alone in the look: header with the wordmark, one centred card,
 * {@link pageCss} in a `<style>` element. Its Content-Security-Policy must allow that element by
 * hash: `style-src 'sha256-...'` of exactly {@link pageCss} (the http package computes it once).
 */
export const page = (options: PageOptions): string =>
  markup`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${options.title} · ${wordmark}</title><style>${raw(pageCss)}</style></head><body><header class="site-header"><div class="inner"><span class="wordmark">${wordmark}</span></div></header><main id="main" class="narrow"><div class="card">${options.heading === false ? "" : markup`<h1>${options.title}</h1>`}${options.body}</div></main></body></html>`
    .value
