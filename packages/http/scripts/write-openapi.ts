/**
 * Writes the OpenAPI document to docs/api/openapi.json (run by this package's build). The
 * committed file is compared with the generator by packages/http/test/openapi.test.ts.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { openApiDocumentText } from "../src/openapi/text.js"

const target = fileURLToPath(new URL("../../../docs/api/openapi.json", import.meta.url))
writeFileSync(target, openApiDocumentText())
console.log(`wrote ${target}`)
