/**
 * Writes `src/data/us-zips.tsv` from the `zipcodes` dataset (see `src/internal/table.ts`):
 * `pnpm --filter @waybill/geo-us run table` after upgrading `zipcodes`.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import zipcodes from "zipcodes"
import { encodeTable, usableRows } from "../src/internal/table.js"

const file = fileURLToPath(new URL("../src/data/us-zips.tsv", import.meta.url))
const rows = usableRows(zipcodes.codes)
writeFileSync(file, encodeTable(rows))
console.log(`${file}: ${rows.length} rows`)
