/**
 * Issue 36 group 8 (CORS): the HTTPRoute CORS filter is accepted and becomes the route's
 * `corsPolicy` (origins as exact, prefix or regular-expression matches), not an unsupported
 * filter.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  convert,
  httpRoute,
  parentConditions,
  parentGw,
  routeStatusOf,
  schemaProblems,
  simpleGateway,
  vsForHost,
} from "./fixtures.js"

describe("the CORS filter", () => {
  it("becomes the route's corsPolicy and the route is accepted", () => {
    const out = convert({
      gateways: [simpleGateway()],
      httpRoutes: [
        httpRoute("r", {
          parentRefs: [parentGw],
          hostnames: ["c.example.com"],
          rules: [
            {
              filters: [
                {
                  type: "CORS",
                  cors: {
                    allowOrigins: ["https://app.example.com", "https://*.example.org", "https://dev.*", "*"],
                    allowCredentials: true,
                    allowMethods: ["GET", "POST"],
                    allowHeaders: ["x-token"],
                    exposeHeaders: ["x-trace"],
                    maxAge: 600,
                  },
                },
              ],
              backendRefs: [{ name: "backend", port: 8080 }],
            },
          ],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    const [http] = vsForHost(out, "c.example.com").spec.http!
    expect(http!.directResponse).toBeUndefined()
    expect(http!.corsPolicy).toEqual({
      allowOrigins: [
        { exact: "https://app.example.com" },
        { regex: "^https://.*\\.example\\.org$" },
        { prefix: "https://dev." },
        { regex: "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#]+$" },
      ],
      allowCredentials: true,
      allowMethods: ["GET", "POST"],
      allowHeaders: ["x-token"],
      exposeHeaders: ["x-trace"],
      maxAge: "600s",
      unmatchedPreflights: "IGNORE",
    })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
  })
})
