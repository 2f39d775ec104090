/** The committed form of the document: two-space JSON and a final newline (docs/api/openapi.json). */
import { openApiDocument } from "./document.js"

export const openApiDocumentText = (): string => `${JSON.stringify(openApiDocument(), null, 2)}\n`
