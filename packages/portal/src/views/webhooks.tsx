/**
 * @module views/webhooks
 *
 * The pieces of the Webhooks pages that other pages do not need: the event-type picker (one
 * checkbox per catalog entry, with its one-line description) and a `datetime-local` field read
 * as UTC. Both follow `Field`'s pattern: a visible label (or legend), the hint and the error tied
 * to the control by `aria-describedby`.
 */
import { FieldFrame } from "./components.js"

/** One selectable event type: `Webhooks.catalog`'s entries. */
export interface EventTypeChoice {
  readonly type: string
  readonly description: string
}

/**
 * A fieldset of checkboxes named `eventTypes`, one per entry of the catalog, each labelled with
 * the type and its description; `selected` are checked. The error (no type picked) shows under
 * the legend.
 */
export const EventTypePicker = (props: {
  readonly catalog: ReadonlyArray<EventTypeChoice>
  readonly selected: ReadonlyArray<string>
  readonly error?: string | undefined
  /** Prefix of the checkboxes' ids, so two pickers on one page never share an id. */
  readonly idPrefix?: string
}) => {
  const prefix = props.idPrefix ?? "event"
  const errorId = `${prefix}-types-error`
  return (
    <fieldset class="field choices" aria-describedby={props.error === undefined ? undefined : errorId}>
      <legend>Event types</legend>
      {props.error === undefined ? null : (
        <span class="error" id={errorId}>
          {props.error}
        </span>
      )}
      <ul>
        {props.catalog.map((entry) => {
          const id = `${prefix}-${entry.type.replace(/[^a-z0-9]+/g, "-")}`
          return (
            <li key={entry.type}>
              <input
                type="checkbox"
                id={id}
                name="eventTypes"
                value={entry.type}
                checked={props.selected.includes(entry.type)}
                aria-describedby={`${id}-description`}
              />
              <label for={id}>
                <code>{entry.type}</code>
              </label>
              <span class="hint" id={`${id}-description`}>
                {entry.description}
              </span>
            </li>
          )
        })}
      </ul>
    </fieldset>
  )
}

/** A `datetime-local` input whose value the page reads as UTC (the label says so). */
export const UtcDateTimeField = (props: {
  readonly name: string
  readonly label: string
  readonly value: string
  readonly hint?: string
  readonly error?: string | undefined
}) => (
  <FieldFrame
    name={props.name}
    label={props.label}
    hint={props.hint}
    error={props.error}
    control={(ids) => (
      <input
        id={ids.id}
        name={props.name}
        type="datetime-local"
        value={props.value}
        step={60}
        required
        aria-invalid={ids.invalid}
        aria-describedby={ids.describedBy}
      />
    )}
  />
)
