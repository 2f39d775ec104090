/**
 * The committed src/schema.d.ts is what openapi-typescript makes of docs/api/openapi.json now:
 * a change to the API's document without `pnpm --filter @waybill/client generate` fails here.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { generateSchema, schemaFile } from "../scripts/schema.js"

describe("src/schema.d.ts", () => {
  it("is the generator's output for the committed OpenAPI document", async () => {
    expect(readFileSync(schemaFile, "utf8")).toBe(await generateSchema())
  })
})
