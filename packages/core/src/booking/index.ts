/**
 * @module booking
 *
 * The only door into `booking/`: other capability folders and the package entry import from here.
 */
export * as Booking from "./Booking.js"
export * as Catalog from "./Catalog.js"
export * as Sanitize from "./Sanitize.js"
export * as DateInput from "./DateInput.js"
export * as Eta from "./Eta.js"
export * as Rating from "./Rating.js"
export * as Quote from "./Quote.js"
