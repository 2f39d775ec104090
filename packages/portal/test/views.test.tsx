/**
 * The layout and the components as HTML: the navigation for a viewer (current entry, Sign out as
 * a POST form with the session's token), labels and errors tied to their inputs, tables with
 * captions, pagers, badges, the one-time secret box, the error pages, and escaping.
 */
import { describe, expect, it } from "vitest"
import * as Redacted from "effect/Redacted"
import { Badge, Field, OneTimeSecret, Pager, Table } from "../src/views/components.js"
import { ErrorPage } from "../src/views/ErrorPage.js"
import { type Chrome, Layout, renderDocument } from "../src/views/Layout.js"
import { viewer } from "./fakes.js"

const chrome: Chrome = {
  basePath: "/portal",
  stylesheet: "/portal/assets/portal.0123456789abcdef.css",
  viewer,
  csrf: Redacted.value(viewer.csrfToken),
  flash: [{ tone: "success", text: "Saved." }]
}

describe("Layout", () => {
  it("frames a viewer's page: landmarks, navigation with the current entry, Sign out as a POST button", () => {
    const html = renderDocument(
      <Layout chrome={chrome} title="Webhooks" section="webhooks">
        <p>body</p>
      </Layout>
    )
    expect(html).toMatch(/^<!doctype html><html lang="en">/)
    expect(html).toContain("<title>Webhooks — Waybill</title>")
    expect(html).toContain('<link rel="stylesheet" href="/portal/assets/portal.0123456789abcdef.css"/>')
    expect(html).toContain('<main id="main"><h1>Webhooks</h1>')
    expect(html).toContain('<a href="/portal/webhooks" aria-current="page">Webhooks</a>')
    expect(html).toContain('<a href="/portal/keys">API Access and Activity</a>')
    expect(html).toContain(
      `<form method="post" action="/portal/signout"><input type="hidden" name="csrf" value="${chrome.csrf}"/>`
    )
    expect(html).toContain('<div class="flash flash-success" role="status">Saved.</div>')
    expect(html).toContain("Signed in as ada@example.com (account 100001)")
    expect(html).not.toContain("<script")
  })

  it("has no navigation without a viewer, and error pages show no internals", () => {
    const html = renderDocument(<ErrorPage chrome={{ ...chrome, viewer: undefined, flash: [] }} status={500} />)
    expect(html).not.toContain('class="site-nav"')
    expect(html).toContain("Something went wrong")
  })
})

describe("components", () => {
  it("ties a field's hint and error to its input and escapes what they show", () => {
    const html = renderDocument(
      <Field name="url" label="Endpoint URL" hint="HTTPS only" error={'<b>"bad"</b>'} value={'"><script>'} />
    )
    expect(html).toContain('<label for="field-url">Endpoint URL</label>')
    expect(html).toContain('aria-invalid="true"')
    expect(html).toContain('aria-describedby="field-url-hint field-url-error"')
    expect(html).toContain('id="field-url-error">&lt;b>&quot;bad&quot;&lt;/b></span>')
    expect(html).not.toContain("<script>")
  })

  it("renders tables with a caption, pagers, badges and the one-time secret", () => {
    const table = renderDocument(
      <Table
        caption="Recent calls"
        columns={[
          { header: "Path", cell: (r: { path: string }) => r.path },
          { header: "Status", cell: () => <Badge tone="success">200</Badge> }
        ]}
        rows={[{ path: "/api/v1/order/json/" }]}
        rowKey={(r) => r.path}
      />
    )
    expect(table).toContain("<caption>Recent calls</caption>")
    expect(table).toContain('<th scope="col">Path</th>')
    expect(table).toContain('<span class="badge badge-success">200</span>')
    const empty = renderDocument(
      <Table caption="None" columns={[{ header: "A", cell: () => "" }]} rows={[]} rowKey={() => ""} empty="No calls." />
    )
    expect(empty).toContain('<td colSpan="1" class="muted">No calls.</td>'.replace("colSpan", "colspan"))
    expect(renderDocument(<Pager label="Pages" nextHref={null} />)).toBe("<!doctype html>")
    const pager = renderDocument(<Pager label="Pages" firstHref="/portal/x" nextHref="/portal/x?starting_after=abc" />)
    expect(pager).toContain('<nav class="pager" aria-label="Pages">')
    expect(pager).toContain('<a href="/portal/x?starting_after=abc">Older</a>')
    const secret = renderDocument(<OneTimeSecret title="Your new test key" secret="wb_test_123" />)
    expect(secret).toContain('<code class="secret">wb_test_123</code>')
    expect(secret).toContain("shown only once")
  })
})
