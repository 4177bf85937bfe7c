import { describe, expect, it } from "vitest"
import {
  PPROF_DEFAULT_SECONDS,
  PPROF_MAX_SECONDS,
  parsePprofRequest,
  pprofIndexHtml,
} from "../../../src/services/profiling/pprof-request.js"

const parse = (name: string, query = "") => parsePprofRequest(name, new URLSearchParams(query))

describe("parsePprofRequest", () => {
  it("reads the index, the heap and a CPU profile of Go's default length", () => {
    expect(parse("")).toEqual({ _tag: "Index" })
    expect(parse("heap")).toEqual({ _tag: "Heap" })
    expect(parse("profile")).toEqual({ _tag: "Cpu", seconds: PPROF_DEFAULT_SECONDS })
    expect(parse("profile", "seconds=")).toEqual({ _tag: "Cpu", seconds: PPROF_DEFAULT_SECONDS })
    expect(parse("profile", "seconds=1")).toEqual({ _tag: "Cpu", seconds: 1 })
    expect(parse("profile", `seconds=${PPROF_MAX_SECONDS}`)).toEqual({ _tag: "Cpu", seconds: PPROF_MAX_SECONDS })
  })

  it("refuses seconds outside 1..300 or not whole, saying what it takes", () => {
    for (const seconds of ["0", String(PPROF_MAX_SECONDS + 1), "-1", "1.5", "1e2", "ten", "99999999999999999999"]) {
      const request = parse("profile", `seconds=${encodeURIComponent(seconds)}`)
      expect(request, seconds).toEqual({
        _tag: "Invalid",
        message: `seconds must be a whole number from 1 to ${PPROF_MAX_SECONDS}, got "${seconds}"`,
      })
    }
  })

  it("names what it does not serve", () => {
    expect(parse("goroutine")).toEqual({ _tag: "Unknown", name: "goroutine" })
    expect(parse("heap/extra")).toEqual({ _tag: "Unknown", name: "heap/extra" })
  })

  it("links both profiles from the index, relative to it, with the title escaped", () => {
    const html = pprofIndexHtml("<meshd>")
    expect(html).toContain('href="profile?seconds=30"')
    expect(html).toContain('href="heap"')
    expect(html).toContain("&lt;meshd&gt;")
    expect(html).not.toContain("<meshd>")
  })
})
