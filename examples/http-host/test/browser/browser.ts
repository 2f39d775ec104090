/**
 * The browser-test harness: Playwright (`playwright-core`, no bundled browser) driving Debian's
 * Chromium (`/usr/bin/chromium`; `.ci/run` installs it with apt-get when missing), and axe-core
 * for accessibility checks.
 *
 * `useBrowser()` launches one browser per test file and gives each test a new context (fresh
 * cookies and storage). `screenshot(page, name)` writes `docs/portal/<name>.png` for the docs when
 * `WAYBILL_SCREENSHOTS=1` (pages show times and numbers that change per run, so a plain test run
 * leaves the committed pictures alone), and otherwise into a temporary folder, so the capture
 * itself is exercised on every run.
 */
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import AxeBuilder from "@axe-core/playwright"
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest"

/** The Chromium the tests drive (`WAYBILL_CHROMIUM` overrides Debian's). */
export const chromiumPath = (): string => process.env["WAYBILL_CHROMIUM"] ?? "/usr/bin/chromium"

/** Flags for a headless Chromium in a container: no sandbox (root), no GPU, no calls home. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update"
] as const

/** Where the documentation's pictures live. */
export const DOCS_PICTURES = resolve(import.meta.dirname, "../../../../docs/portal")

export interface BrowserSession {
  /** The test's page (in its own context). */
  readonly page: () => Page
  /** The test's context (cookies, viewport). */
  readonly context: () => BrowserContext
  /** A further context with other options (a phone's viewport); closed after the test. */
  readonly newContext: (options?: BrowserContextOptions) => Promise<BrowserContext>
}

/**
 * One Chromium for the test file, a new context and page for each test. Call at the top level of
 * a test file.
 */
export const useBrowser = (options: BrowserContextOptions = {}): BrowserSession => {
  let browser: Browser | undefined
  let context: BrowserContext | undefined
  let page: Page | undefined
  const extra: Array<BrowserContext> = []
  const launched = (): Browser => {
    if (browser === undefined) throw new Error("useBrowser: the browser did not start")
    return browser
  }
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS], headless: true })
  })
  afterAll(async () => {
    await browser?.close()
  })
  beforeEach(async () => {
    context = await launched().newContext({ viewport: { width: 1280, height: 800 }, ...options })
    page = await context.newPage()
  })
  afterEach(async () => {
    for (const c of extra.splice(0)) await c.close()
    await context?.close()
    context = undefined
    page = undefined
  })
  return {
    page: () => page ?? launched().contexts()[0]!.pages()[0]!,
    context: () => context ?? launched().contexts()[0]!,
    newContext: async (more = {}) => {
      const c = await launched().newContext(more)
      extra.push(c)
      return c
    }
  }
}

let scratch: string | undefined

/** A full-page PNG of `page` named `<name>.png` (see the module's note on where it goes). */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`screenshot: "${name}" is not a plain file name`)
  const dir =
    process.env["WAYBILL_SCREENSHOTS"] === "1"
      ? DOCS_PICTURES
      : (scratch ??= mkdtempSync(join(tmpdir(), "waybill-screenshots-")))
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** axe-core finds no violation on the page as it is now (WCAG 2.x A and AA, and best practices). */
export const expectAxeClean = async (page: Page): Promise<void> => {
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"])
    .analyze()
  const found = results.violations.map((v) => ({
    rule: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => n.target.join(" "))
  }))
  expect(found, `axe-core violations on ${page.url()}`).toEqual([])
}

/** Whether the page scrolls sideways (content wider than the viewport). */
export const scrollsSideways = (page: Page): Promise<boolean> =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)
