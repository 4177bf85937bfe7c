/** The pages' escaping: no value can become markup or end an embedded JSON block. */
import { describe, expect, it } from "vitest"
import { escapeHtml, htmlPage, jsonForScript, keyValueTable } from "../../../src/services/debug/html.js"

const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;`

describe("page escaping", () => {
  it("escapes every markup character of text and attributes", () => {
    expect(escapeHtml(HOSTILE)).toBe(
      "&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;",
    )
    expect(escapeHtml(42)).toBe("42")
  })

  it("embeds JSON that cannot close its script block and parses back to the same value", () => {
    const value = { name: `</script><script>alert(1)</script>`, sep: "a\u2028b", html: "<!-- x -->&" }
    const text = jsonForScript(value)
    expect(text).not.toMatch(/[<>&\u2028]/)
    expect(JSON.parse(text)).toEqual(value)
  })

  it("escapes the title, heading, navigation and table cells of a page", () => {
    const page = htmlPage({
      title: HOSTILE,
      heading: HOSTILE,
      nav: [{ href: `/x?a=1&b="2"`, title: HOSTILE }],
      body: keyValueTable([[HOSTILE, HOSTILE]]),
    })
    expect(page).not.toContain("<script>alert")
    expect(page).not.toContain("<img")
    expect(page).toContain(`href="/x?a=1&amp;b=&quot;2&quot;"`)
  })
})
