/**
 * Writes src/schema.d.ts: the TypeScript types of docs/api/openapi.json, by openapi-typescript
 * (`pnpm --filter @waybill/client generate`). test/schema.test.ts fails when the committed file
 * differs from what this produces, so the client's types cannot drift from the document.
 */
import { writeFileSync } from "node:fs"
import { generateSchema, schemaFile } from "./schema.js"

writeFileSync(schemaFile, await generateSchema())
console.log(`wrote ${schemaFile.pathname}`)
