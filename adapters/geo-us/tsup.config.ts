import { libraryConfig } from "../../tsup.base.js"

// The ZIP table (src/data/us-zips.tsv) goes beside the bundle, where the adapter reads it.
export default libraryConfig({ publicDir: "src/data" })
