/**
 * The one way src/schema.d.ts is made, shared by the `generate` script and the test that
 * compares the committed file with it.
 */
import { readFileSync } from "node:fs"
import openapiTS, { astToString } from "openapi-typescript"

/** The committed OpenAPI document, written by @waybill/http's build. */
export const documentFile = new URL("../../../docs/api/openapi.json", import.meta.url)

/** The generated types, committed next to the client. */
export const schemaFile = new URL("../src/schema.d.ts", import.meta.url)

const banner = [
  "/**",
  " * The /api/v1 types, generated from docs/api/openapi.json by openapi-typescript.",
  " * Do not edit: run `pnpm --filter @waybill/client generate` (test/schema.test.ts checks it).",
  " */",
  ""
].join("\n")

/** The text of src/schema.d.ts for the document as it is on disk now. */
export const generateSchema = async (): Promise<string> => {
  const document: unknown = JSON.parse(readFileSync(documentFile, "utf8"))
  // The document as a parsed object: openapi-typescript reads nothing else from disk or network.
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { alphabetize: false })
  return banner + astToString(ast)
}
