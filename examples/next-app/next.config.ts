import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import type { NextConfig } from "next"

const config: NextConfig = {
  // Waybill's packages load from node_modules at run time instead of being bundled: geo-us reads
  // its ZIP table from beside its own module, and every route shares one copy of Waybill.
  serverExternalPackages: ["@waybill/example-http-host", "@waybill/http"],
  // Waybill's answers go out with the bytes it made (answers holding download links next to
  // echoed input are not compressed here); compress in the proxy in front, if anywhere.
  compress: false,
  turbopack: { root: dirname(dirname(dirname(fileURLToPath(import.meta.url)))) },
  // The repository's `pnpm typecheck` checks these files; the build need not do it again.
  typescript: { ignoreBuildErrors: true }
}

export default config
