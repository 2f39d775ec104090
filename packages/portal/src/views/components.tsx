/**
 * @module components
 *
 * The building blocks of every page: labelled fields with their errors, buttons, POST forms with
 * their CSRF field, tables with captions, cursor pagers, status badges, and the box that shows a
 * secret once. Each renders plain HTML (no script); preact-render-to-string escapes every text
 * and attribute.
 */
import type { ComponentChildren, InputHTMLAttributes } from "preact"
import { PasswordPolicy } from "@waybill/core"

/** The hidden field every state-changing form carries (the session's or the pre-session token). */
export const CsrfField = (props: { readonly token: string }) => <input type="hidden" name="csrf" value={props.token} />

/** A form that POSTs to `action` with its CSRF field. */
export const PostForm = (props: {
  readonly action: string
  readonly csrf: string
  readonly class?: string
  readonly label?: string
  readonly children: ComponentChildren
}) => (
  <form method="post" action={props.action} class={props.class} aria-label={props.label}>
    <CsrfField token={props.csrf} />
    {props.children}
  </form>
)

export interface FieldProps {
  /** The form field's name; the input's id is `field-<name>`. */
  readonly name: string
  /** The visible label. */
  readonly label: string
  readonly type?: "text" | "email" | "password" | "url" | "search" | "number"
  readonly value?: string
  /** One line under the label (a format, a rule). */
  readonly hint?: string
  /** The field's error: shown under it, tied by `aria-describedby`, and the input is `aria-invalid`. */
  readonly error?: string | undefined
  /** The `autocomplete` token (`username`, `current-password`, `new-password`, `email`...). */
  readonly autocomplete?: string
  readonly required?: boolean
  readonly autofocus?: boolean
  readonly maxLength?: number
  readonly inputMode?: "text" | "email" | "numeric" | "search" | "url"
}

/** How a field's control is tied to its label, hint and error (from {@link FieldFrame}). */
export interface ControlIds {
  /** `field-<name>`: the control's id, which the label names. */
  readonly id: string
  /** `"true"` while the field shows an error. */
  readonly invalid: "true" | undefined
  /** The hint's and the error's ids, for `aria-describedby`. */
  readonly describedBy: string | undefined
}

/**
 * What every field shares whatever its control: the visible label, an optional hint above the
 * control and error text under it, tied to the control by the ids `control` receives.
 */
export const FieldFrame = (props: {
  readonly name: string
  readonly label: string
  readonly hint?: string | undefined
  readonly error?: string | undefined
  readonly control: (ids: ControlIds) => ComponentChildren
}) => {
  const id = `field-${props.name}`
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [props.hint === undefined ? undefined : hintId, props.error === undefined ? undefined : errorId]
    .filter((x) => x !== undefined)
    .join(" ")
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint === undefined ? null : (
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      )}
      {props.control({
        id,
        invalid: props.error === undefined ? undefined : "true",
        describedBy: describedBy === "" ? undefined : describedBy
      })}
      {props.error === undefined ? null : (
        <span class="error" id={errorId}>
          {props.error}
        </span>
      )}
    </div>
  )
}

/** A text input with its visible label, optional hint and error text. */
export const Field = (props: FieldProps) => (
  <FieldFrame
    name={props.name}
    label={props.label}
    hint={props.hint}
    error={props.error}
    control={(ids) => (
      // One object, typed once: Preact types `<input>` as a union per `type`, and the type here is a prop.
      <input
        {...({
          id: ids.id,
          name: props.name,
          type: props.type ?? "text",
          value: props.value,
          autocomplete: props.autocomplete,
          required: props.required,
          autofocus: props.autofocus,
          maxLength: props.maxLength,
          inputMode: props.inputMode,
          "aria-invalid": ids.invalid,
          "aria-describedby": ids.describedBy
        } as InputHTMLAttributes<HTMLInputElement>)}
      />
    )}
  />
)

/** A submit button (or a plain one); `link` looks like a navigation link (the Sign out button). */
export const Button = (props: {
  readonly children: ComponentChildren
  readonly variant?: "primary" | "secondary" | "danger" | "link"
  readonly type?: "submit" | "button"
  readonly name?: string
  readonly value?: string
}) => {
  const variant = props.variant ?? "primary"
  return (
    <button
      type={props.type ?? "submit"}
      class={variant === "primary" ? "button" : `button button-${variant}`}
      name={props.name}
      value={props.value}
    >
      {props.children}
    </button>
  )
}

/** One column of a {@link Table}: its header and how a row shows in it. */
export interface Column<Row> {
  readonly header: string
  readonly cell: (row: Row) => ComponentChildren
}

/** A data table with a caption (its accessible name); `empty` shows when there are no rows. */
export const Table = <Row,>(props: {
  readonly caption: string
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row>
  readonly rowKey: (row: Row) => string
  readonly empty?: string
}) => (
  // Focusable and named: on a narrow screen the wrapper scrolls sideways, and keyboard users must reach it.
  <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col" key={c.header}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 ? (
          <tr>
            <td colSpan={props.columns.length} class="muted">
              {props.empty ?? "Nothing here yet."}
            </td>
          </tr>
        ) : (
          props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  </div>
)

/**
 * Links between cursor pages (core's `Page`): back to the newest page when the list was entered
 * at a cursor, and on to the next page while `nextHref` is given.
 */
export const Pager = (props: {
  readonly label: string
  /** The first (newest) page; given only when the current page is not it. */
  readonly firstHref?: string | undefined
  /** The next (older) page: the list's URL with `starting_after=<nextCursor>`; null on the last page. */
  readonly nextHref: string | null
}) =>
  props.firstHref === undefined && props.nextHref === null ? null : (
    <nav class="pager" aria-label={props.label}>
      {props.firstHref === undefined ? <span /> : <a href={props.firstHref}>Newest</a>}
      {props.nextHref === null ? <span /> : <a href={props.nextHref}>Older</a>}
    </nav>
  )

/** How a status reads: its colour follows its meaning, and the word is always there. */
export type BadgeTone = "neutral" | "success" | "warning" | "danger" | "info"

export const Badge = (props: { readonly tone: BadgeTone; readonly children: ComponentChildren }) => (
  <span class={`badge badge-${props.tone}`}>{props.children}</span>
)

/**
 * A key or signing secret shown once (after regeneration or creation): the secret in a
 * monospace box, and the warning that it will not be shown again.
 */
export const OneTimeSecret = (props: {
  readonly title: string
  readonly secret: string
  readonly children?: ComponentChildren
}) => (
  <section class="one-time-secret" aria-labelledby="one-time-secret-title">
    <h2 id="one-time-secret-title">{props.title}</h2>
    <p>Copy it now: it is shown only once, and Waybill keeps only a hash of it.</p>
    <code class="secret">{props.secret}</code>
    {props.children}
  </section>
)

/** A select with its visible label, optional hint and error text (ids as {@link Field}'s). */
export const SelectField = (props: {
  readonly name: string
  readonly label: string
  readonly options: ReadonlyArray<{ readonly value: string; readonly label: string }>
  readonly value?: string
  readonly hint?: string
  readonly error?: string | undefined
}) => (
  <FieldFrame
    name={props.name}
    label={props.label}
    hint={props.hint}
    error={props.error}
    control={(ids) => (
      <select id={ids.id} name={props.name} aria-invalid={ids.invalid} aria-describedby={ids.describedBy}>
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.value} key={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    )}
  />
)

/** The longest e-mail address (RFC 5321 path limit) the forms accept. */
export const MAX_EMAIL = 254
/** The longest password the forms accept (the portal's policy, DECISIONS.md). */
export const MAX_PASSWORD = PasswordPolicy.PORTAL.maxLength

/**
 * An e-mail address field: the person's own sign-in address (`username`, the sign-in and reset
 * forms), or someone else's (`off`, the invite form, so the browser offers nothing of its own).
 */
export const EmailField = (props: {
  readonly value: string
  readonly error?: string | undefined
  readonly autocomplete: "username" | "off"
}) => (
  <Field
    name="email"
    label="E-mail"
    type="email"
    value={props.value}
    autocomplete={props.autocomplete}
    inputMode="email"
    maxLength={MAX_EMAIL}
    required
    error={props.error}
  />
)

/** A password the person has now (signing in, confirming, changing it). */
export const CurrentPasswordField = (props: {
  readonly name: string
  readonly label: string
  readonly error?: string | undefined
  readonly autofocus?: boolean
}) => (
  <Field
    name={props.name}
    label={props.label}
    type="password"
    autocomplete="current-password"
    maxLength={MAX_PASSWORD}
    required
    {...(props.autofocus === true ? { autofocus: true } : {})}
    error={props.error}
  />
)

/** A multi-line text field with its visible label, optional hint and error text. */
export const TextAreaField = (props: {
  readonly name: string
  readonly label: string
  readonly value?: string
  readonly hint?: string
  readonly error?: string | undefined
  readonly rows?: number
  readonly maxLength?: number
}) => (
  <FieldFrame
    name={props.name}
    label={props.label}
    hint={props.hint}
    error={props.error}
    control={(ids) => (
      <textarea
        id={ids.id}
        name={props.name}
        rows={props.rows ?? 4}
        maxLength={props.maxLength}
        spellcheck={false}
        aria-invalid={ids.invalid}
        aria-describedby={ids.describedBy}
      >
        {props.value ?? ""}
      </textarea>
    )}
  />
)

/** A link that looks like a button (a GET step such as "Regenerate…", which asks before acting). */
export const LinkButton = (props: {
  readonly href: string
  readonly variant?: "primary" | "secondary" | "danger"
  readonly children: ComponentChildren
}) => (
  <a
    href={props.href}
    class={props.variant === undefined || props.variant === "primary" ? "button" : `button button-${props.variant}`}
  >
    {props.children}
  </a>
)

/** A term–value list (a record's fields): `<dl>` with one row per entry. */
export const Details = (props: {
  readonly label?: string
  readonly rows: ReadonlyArray<readonly [term: string, value: ComponentChildren]>
}) => (
  <dl class="details" aria-label={props.label}>
    {props.rows.map(([term, value]) => (
      <div class="details-row" key={term}>
        <dt>{term}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)
