/**
 * @module flash
 *
 * One-line messages shown at the top of the next page after a redirect ("You are signed out.").
 * The redirect names a message by its key in {@link FLASHES} (a short-lived cookie carries the
 * key, never text), so nothing a request supplies is ever shown as a message.
 */

export interface Flash {
  readonly tone: "success" | "error" | "warning" | "info"
  readonly text: string
}

/** Every message a redirect can carry, by key. */
export const FLASHES = {
  "signed-out": { tone: "success", text: "You are signed out." },
  "session-ended": { tone: "info", text: "Your session has ended. Sign in again to continue." },
  "shipment-canceled": { tone: "success", text: "The shipment is canceled." },
  "shipment-not-cancellable": { tone: "warning", text: "This shipment can no longer be canceled." },
  "shipment-cancel-failed": {
    tone: "error",
    text: "The shipment could not be canceled: the courier's system refused. Try again later or contact support."
  },
  "webhook-updated": { tone: "success", text: "The endpoint is saved." },
  "webhook-enabled": { tone: "success", text: "The endpoint is enabled: events are sent to it again." },
  "webhook-disabled": { tone: "success", text: "The endpoint is disabled: nothing is sent to it until you enable it." },
  "webhook-deleted": { tone: "success", text: "The endpoint is deleted, with its queued deliveries and its log." },
  "webhook-test-sent": { tone: "success", text: "A webhook.test event is queued for the endpoint." },
  "webhook-resent": { tone: "success", text: "The event is queued to be sent again (same webhook-id)." },
  "webhook-recovered": {
    tone: "success",
    text: "Every event since that time that the endpoint selected and did not get is queued again."
  },
  "webhook-nothing-to-recover": {
    tone: "info",
    text: "Nothing to recover: the endpoint got every event it selected since that time."
  },
  "reset-requested": {
    tone: "info",
    text: "If an account uses that address, a link to set a new password is on its way. It works for 30 minutes."
  },
  "password-set": { tone: "success", text: "Your password is set. You are signed in." },
  "password-changed": { tone: "success", text: "Your password is changed. Every other session has ended." },
  "password-confirmed": { tone: "success", text: "Password confirmed." },
  "key-disabled": { tone: "warning", text: "The key is disabled: calls with it are refused until it is enabled." },
  "key-enabled": { tone: "success", text: "The key is enabled." },
  "user-invited": { tone: "success", text: "The invitation is sent." },
  "user-removed": { tone: "success", text: "The user is removed." },
  "allowlist-saved": { tone: "success", text: "The IP allowlist is saved." }
} as const satisfies Record<string, Flash>

export type FlashKey = keyof typeof FLASHES

/** The message of a key, or undefined for a key that is not one. */
export const flashOf = (key: string | undefined): Flash | undefined =>
  key !== undefined && Object.hasOwn(FLASHES, key) ? FLASHES[key as FlashKey] : undefined
