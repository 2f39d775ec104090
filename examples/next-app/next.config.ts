import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import type { NextConfig } from "next"

const config: NextConfig = {
  // Waybill loads from node_modules at run time, one copy shared by every route, as
  // published packages would.
  serverExternalPackages: ["@waybill/example-http-host", "@waybill/http"],
  // Waybill's answers go out with the bytes it made (answers holding download links next to
  // echoed input are not compressed here); compress in the proxy in front, if anywhere.
  compress: false,
  turbopack: { root: dirname(dirname(dirname(fileURLToPath(import.meta.url)))) },
  // The repository's `pnpm typecheck` checks these files; the build need not do it again.
  typescript: { ignoreBuildErrors: true }
}

export default config
