/**
 * @module assets
 *
 * The portal's stylesheet (`src/assets/portal.css`), served by the package itself under a path
 * named by its content's hash (`/assets/portal.<hash>.css` below the base path), so it can be
 * cached forever and a new version is a new URL. No CDN, no web font: the font stack is the
 * system's.
 *
 * This module sits at the top of `src/` on purpose: from here (sources) and from `dist/index.js`
 * (the build, which bundles it) the file is one folder away, as `./assets/` or `../src/assets/`.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export interface Assets {
  /** The stylesheet's path below the base path: `/assets/portal.<hash>.css`. */
  readonly cssPath: string
  readonly css: Uint8Array
}

/** Where the stylesheet is, from the sources or from the build. */
const stylesheetFile = (): string => {
  const candidates = ["./assets/portal.css", "../src/assets/portal.css"].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url))
  )
  const found = candidates.find((file) => existsSync(file))
  if (found === undefined)
    throw new Error(`@waybill/portal: the stylesheet is missing (looked at ${candidates.join(", ")})`)
  return found
}

/** Reads the stylesheet once and names it by the first 16 hex digits of its SHA-256. */
export const loadAssets = (): Assets => {
  const css = new Uint8Array(readFileSync(stylesheetFile()))
  const hash = createHash("sha256").update(css).digest("hex").slice(0, 16)
  return { cssPath: `/assets/portal.${hash}.css`, css }
}
