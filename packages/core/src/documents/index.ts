/**
 * @module documents
 *
 * The only door into `documents/`: other capability folders and the package entry import from here.
 */
export * as BlobStore from "./BlobStore.js"
export * as ImageTransform from "./ImageTransform.js"
export * as Ticket from "./Ticket.js"
export * as Documents from "./Documents.js"
