/**
 * Parsing files: multi-document YAML, syntax errors with line numbers, document-level checks
 * (apiVersion, kind, metadata), alias groups and versions, and reports that carry file,
 * document index, kind/namespace/name and field path.
 */
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { fastDocuments, parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import { formatIssue, resourceKey } from "../../../src/services/config-model/resource.js"
import { GO_YAML_OPTIONS, goFlowScalars } from "../../../src/services/config-model/yaml-dialect.js"
import { doc, parse, problems } from "./helpers.js"

const serviceEntry = (name: string) =>
  doc(
    "ServiceEntry",
    { hosts: [`${name}.example.com`], ports: [{ number: 80, name: "http", protocol: "HTTP" }] },
    { name },
  )

describe("parseConfigDocuments", () => {
  it("returns one resource per document, normalised, with its source", () => {
    const result = parse(`${serviceEntry("a")}---\n${serviceEntry("b")}`)
    expect(result.issues).toEqual([])
    expect(result.resources.map(resourceKey)).toEqual(["ServiceEntry/ns/a", "ServiceEntry/ns/b"])
    expect(result.resources[1]).toMatchObject({
      group: "networking.mesh.io",
      version: "v1",
      kind: "ServiceEntry",
      meta: { name: "b", namespace: "ns", labels: {}, annotations: {} },
      source: { file: "test.yaml", documentIndex: 1 },
    })
  })

  it("applies the reference's defaults", () => {
    const [se] = parse(serviceEntry("a")).resources
    expect(se?.spec).toMatchObject({ resolution: "NONE", location: "MESH_EXTERNAL" })
    const [ap] = parse(doc("AuthorizationPolicy", {})).resources
    expect(ap?.spec).toEqual({ action: "ALLOW" })
  })

  it("defaults the namespace to default and leaves cluster-scoped kinds without one", () => {
    const result = parse(
      "apiVersion: networking.mesh.io/v1\nkind: ProxyConfig\nmetadata: {name: p}\nspec: {concurrency: 2}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: demo, labels: {mesh.io/rev: canary}}\n",
    )
    expect(result.issues).toEqual([])
    expect(result.resources.map((r) => r.meta.namespace)).toEqual(["default", ""])
    expect(result.resources[1]?.meta.labels).toEqual({ "mesh.io/rev": "canary" })
  })

  it("skips empty documents but counts them in the document index", () => {
    const result = parse(`---\n---\n# only a comment\n---\n${serviceEntry("a")}---\n`)
    expect(result.issues).toEqual([])
    expect(result.resources.map((r) => r.source?.documentIndex)).toEqual([2])
  })

  it("accepts the upstream groups and versions as aliases of the mesh groups", () => {
    const cases = [
      ["networking.istio.io/v1alpha3", "ServiceEntry", { hosts: ["a.example.com"] }],
      ["networking.istio.io/v1beta1", "DestinationRule", { host: "a.example.com" }],
      ["networking.mesh.io/v1alpha3", "DestinationRule", { host: "a.example.com" }],
      ["security.istio.io/v1beta1", "PeerAuthentication", { mtls: { mode: "STRICT" } }],
      ["security.istio.io/v1", "AuthorizationPolicy", {}],
      ["telemetry.istio.io/v1alpha1", "Telemetry", {}],
      ["extensions.istio.io/v1alpha1", "WasmPlugin", { url: "oci://ghcr.io/example/plugin:1.0" }],
    ] as const
    for (const [apiVersion, kind, spec] of cases) {
      const text = doc(kind, spec, { apiVersion })
      const result = parse(text)
      expect(result.issues).toEqual([])
      expect(result.resources[0]?.group).toBe(apiVersion.split("/")[0]?.replace("istio.io", "mesh.io"))
      expect(result.resources[0]?.version).toBe("v1")
    }
  })

  it("reports a YAML syntax error with its line and keeps the other documents", () => {
    const text = `${serviceEntry("a")}---\napiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata:\n  name: a: broken\n---\n${serviceEntry("c")}`
    const result = parseConfigDocuments("bad.yaml", text)
    expect(result.resources.map((r) => r.meta.name)).toEqual(["a", "c"])
    expect(result.issues).toHaveLength(1)
    const [issue] = result.issues
    expect(issue?.documentIndex).toBe(1)
    const line = text.split("\n").findIndex((l) => l.includes("a: broken")) + 1
    expect(issue?.message).toMatch(new RegExp(`^YAML syntax error at line ${line}: `))
  })

  it("reports duplicate keys as YAML errors", () => {
    expect(problems("apiVersion: v1\nkind: Namespace\nkind: Namespace\nmetadata: {name: a}\n")[0]).toMatch(
      /^-: YAML syntax error at line 3: Map keys must be unique/,
    )
  })

  it("reports missing and malformed apiVersion, kind and metadata", () => {
    expect(problems("kind: ServiceEntry\n")).toEqual(["apiVersion: is required", "metadata: is required"])
    expect(problems("apiVersion: networking.mesh.io/v1\nmetadata: {name: a}\n")).toEqual(["kind: is required"])
    expect(problems("just a string\n")).toEqual(["-: document must be a mapping with apiVersion, kind and metadata"])
    expect(problems("apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {namespace: ns}\n")).toEqual([
      "metadata.name: is required",
      "spec.hosts: is required",
    ])
    expect(
      problems(
        "apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: Bad_Name, namespace: Not.A.Label, labels: {'a b': x, ok: 3}}\nspec: {hosts: [a.com]}\n",
      ),
    ).toEqual([
      `metadata.name: invalid name "Bad_Name": must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-' and '.', starting and ending with an alphanumeric character)`,
      `metadata.namespace: invalid namespace "Not.A.Label": must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)`,
      `metadata.labels["a b"]: invalid label key: "a b"`,
      "metadata.labels.ok: value must be a string, got number",
    ])
  })

  it("reports unknown kinds and unsupported versions", () => {
    expect(problems("apiVersion: networking.mesh.io/v1\nkind: Frobnicator\nmetadata: {name: a}\n")).toEqual([
      'kind: unknown kind "Frobnicator" (apiVersion "networking.mesh.io/v1")',
    ])
    expect(problems("apiVersion: security.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: a}\n")).toEqual([
      'kind: unknown kind "ServiceEntry" in group "security.mesh.io"; expected apiVersion "networking.mesh.io/v1"',
    ])
    expect(problems("apiVersion: networking.mesh.io/v2\nkind: Gateway\nmetadata: {name: a}\n")).toEqual([
      'apiVersion: unsupported version "v2" for Gateway; accepted: v1, v1beta1, v1alpha3',
    ])
  })

  it("reports unknown fields", () => {
    expect(problems(doc("DestinationRule", { host: "a.example.com", subset: [] }))).toEqual([
      "spec.subset: unknown field",
    ])
  })

  it("reports every problem of a document, type errors and cross-field rules together", () => {
    const text = doc(
      "VirtualService",
      {
        hosts: ["reviews.ns.svc.cluster.local"],
        http: [
          {
            match: [{ uri: { regex: "(unclosed" } }],
            route: [
              { destination: { host: "reviews.ns.svc.cluster.local", subset: "v1" }, weight: 50 },
              { destination: { host: "reviews.ns.svc.cluster.local", subset: "Not_A_Label" }, weight: 40 },
            ],
            timeout: "soon",
          },
          { route: [{ destination: { host: "*" } }], retries: { attempts: "three" } },
        ],
      },
      { name: "reviews" },
    )
    expect(problems(text)).toEqual([
      'spec.http[0].match[0].uri.regex: invalid regex "(unclosed": Unterminated group',
      "spec.http[0].route[1].destination.subset: subset name is invalid: Not_A_Label",
      'spec.http[0].timeout: invalid duration "soon" (expected a duration such as "1s", "0.5s" or "100ms")',
      "spec.http[1].route[0].destination.host: invalid destination host *",
      'spec.http[1].retries.attempts: expected a number, got "three"',
      "spec.http[0].route: total destination weight 90 != 100",
    ])
  })

  it("formats issues with file, document, kind, namespace/name and field path", () => {
    const text = `${serviceEntry("ok")}---\n${doc("DestinationRule", { host: "r.example.com", subsets: [{ name: "v1" }, { name: "v1" }] }, { name: "reviews" })}`
    const result = parseConfigDocuments("mesh/rules.yaml", text)
    expect(result.issues.map(formatIssue)).toEqual([
      "mesh/rules.yaml document 1 DestinationRule ns/reviews: field spec.subsets[1].name: duplicate subset names: v1",
    ])
    expect(result.issues[0]).toEqual({
      file: "mesh/rules.yaml",
      documentIndex: 1,
      kind: "DestinationRule",
      namespace: "ns",
      name: "reviews",
      path: "spec.subsets[1].name",
      message: "duplicate subset names: v1",
    })
  })

  it("treats empty YAML values as absent fields", () => {
    const result = parse(
      "apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: a}\nspec:\n  hosts: [a.example.com]\n  endpoints:\n  exportTo:\n",
    )
    expect(result.issues).toEqual([])
    expect(result.resources[0]?.spec).toEqual({
      hosts: ["a.example.com"],
      location: "MESH_EXTERNAL",
      resolution: "NONE",
    })
  })
})

describe("typed specs", () => {
  it("narrows resources by kind", async () => {
    const { ofKind } = await import("../../../src/services/config-model/specs.js")
    const result = parse(`${serviceEntry("a")}---\n${doc("DestinationRule", { host: "a.example.com" })}`)
    const entries = ofKind(result.resources, "ServiceEntry")
    expect(entries.map((e) => e.spec.hosts)).toEqual([["a.example.com"]])
    expect(ofKind(result.resources, "DestinationRule").map((d) => d.spec.host)).toEqual(["a.example.com"])
  })
})

describe("rules that need the resource's metadata", () => {
  const withMeta = (kind: string, metadata: string, spec: string) =>
    `apiVersion: ${kind === "AuthorizationPolicy" ? "security" : "networking"}.mesh.io/v1\nkind: ${kind}\nmetadata: ${metadata}\nspec: ${spec}\n`

  it("treats . and the resource's own namespace in exportTo as duplicates", () => {
    expect(
      problems(
        withMeta(
          "VirtualService",
          "{name: a, namespace: shop}",
          "{hosts: [a], exportTo: [., shop], http: [{route: [{destination: {host: a}}]}]}",
        ),
      ),
    ).toEqual(["spec.exportTo: duplicate entries in exportTo: . and current namespace shop"])
  })

  it("lets a DestinationRule with a workload selector export only to its own namespace", () => {
    const dr = (exportTo: string) =>
      withMeta(
        "DestinationRule",
        "{name: a, namespace: shop}",
        `{host: a, workloadSelector: {matchLabels: {app: a}}, exportTo: ${exportTo}}`,
      )
    expect(problems(dr("[shop]"))).toEqual([])
    expect(problems(dr("[.]"))).toEqual([])
    expect(problems(dr("[other]"))).toEqual([
      "spec.exportTo: destination rule with workload selector cannot have exportTo beyond current namespace",
    ])
    expect(problems(dr("[shop, other]"))).toEqual([
      "spec.exportTo: destination rule with workload selector cannot have multiple entries in exportTo",
    ])
  })

  it("accepts the dry-run annotation only on ALLOW/DENY AuthorizationPolicies, with a boolean value", () => {
    const ap = (annotation: string, spec: string) =>
      withMeta(
        "AuthorizationPolicy",
        `{name: a, namespace: shop, annotations: {"mesh.io/dry-run": "${annotation}"}}`,
        spec,
      )
    expect(problems(ap("true", "{action: DENY, rules: [{}]}"))).toEqual([])
    expect(problems(ap("maybe", "{}"))).toEqual([
      'metadata.annotations["mesh.io/dry-run"]: annotation mesh.io/dry-run has an invalid value (maybe): expected true or false',
    ])
    expect(problems(ap("true", "{action: AUDIT}"))).toEqual([
      'metadata.annotations["mesh.io/dry-run"]: the annotation mesh.io/dry-run currently only supports action ALLOW/DENY, found action AUDIT',
    ])
    expect(
      problems(
        withMeta(
          "DestinationRule",
          `{name: a, namespace: shop, annotations: {"mesh.io/dry-run": "true"}}`,
          "{host: a}",
        ),
      ),
    ).toEqual([
      'metadata.annotations["mesh.io/dry-run"]: shop/a has unsupported annotation mesh.io/dry-run, please remove the annotation',
    ])
  })
})

describe("document fields", () => {
  it("reports unknown top-level fields of mesh kinds (a misspelt spec is not silently empty)", () => {
    expect(
      problems(
        "apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: a}\nspecs: {action: DENY}\n",
      ),
    ).toEqual(["specs: unknown field"])
    expect(
      problems("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\napiExtra: 1\nspec: {containers: [{name: app}]}\n"),
    ).toEqual([])
  })
})

describe("YAML features", () => {
  it("resolves anchors, aliases and merge keys as the orchestrator's YAML reader does", () => {
    const result = parse(`apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: a}
spec:
  host: a.example.com
  trafficPolicy:
    connectionPool: &pool
      tcp: {maxConnections: 10}
  subsets:
  - name: v1
    labels: &v1 {version: v1}
    trafficPolicy:
      connectionPool:
        <<: *pool
        http: {maxRetries: 2}
  - name: v2
    labels: {<<: *v1, version: v2}
`)
    expect(result.issues).toEqual([])
    expect(result.resources[0]?.spec).toMatchObject({
      subsets: [
        {
          name: "v1",
          labels: { version: "v1" },
          trafficPolicy: { connectionPool: { tcp: { maxConnections: 10 }, http: { maxRetries: 2 } } },
        },
        { name: "v2", labels: { version: "v2" } },
      ],
    })
  })
})

describe("orchestrator lists", () => {
  it("validates every item of a v1 List, paths prefixed with the item", () => {
    const result = parse(`apiVersion: v1
kind: List
items:
- apiVersion: networking.mesh.io/v1
  kind: DestinationRule
  metadata: {name: a}
  spec: {host: a.example.com}
- apiVersion: networking.mesh.io/v1
  kind: DestinationRule
  metadata: {name: b}
  spec: {host: "b..com"}
`)
    expect(result.resources.map((r) => r.meta.name)).toEqual(["a"])
    expect(result.issues.map(formatIssue)).toEqual([
      'test.yaml document 0 DestinationRule default/b: field items[1].spec.host: domain name "b..com" invalid (label "" invalid)',
    ])
  })
})

describe("fast YAML path (js-yaml) and the yaml library agree", () => {
  /** What the `yaml` library reads: one value per document, `null` for empty ones, or the error. */
  const slow = (text: string): ReadonlyArray<unknown> =>
    parseAllDocuments(goFlowScalars(text), { ...GO_YAML_OPTIONS, uniqueKeys: true }).map((d) =>
      d.errors.length > 0 ? "error" : d.contents === null ? null : d.toJS({ maxAliasCount: 1000 }),
    )

  const agreeing = [
    "a: 1\n",
    "---\na: 1\n",
    "a: 1\n---\n",
    "a: 1\n---\n# only a comment\n---\nb: 2\n",
    "# only a comment\n",
    "",
    "---\n---\na: 1\n",
    "a: 1\n...\n---\nb: 2\n",
    "x: 0o17\ny: 0x1F\nz: 0b101\nw: 1_000\nv: 017\nu: +12\nt: .inf\ns: -.Inf\nq: 1e3\np: 1.\no: .5\n",
    "a: yes\nb: no\nc: on\nd: True\ne: TRUE\nf: ~\ng: Null\nh:\ni: 2020-01-01\nj: 2020-01-01T00:00:00Z\n",
    "a: 12345678901234567890\nb: -0\nc: 0.1e-2\nd: '1'\n",
    '8080: {mode: STRICT}\n1.5: x\ntrue: "y"\n',
    "a: |\n  x\n  y\nb: >-\n  p\n  q\n",
    "a: \"\\u00e9\\t\"\nb: 'it''s'\n",
    "{a: 1, b: [x, {y: z}]}\n",
    "- 1\n- 2\n",
    "just a string\n",
    "a: 1:2\nb: x:y\nc: 1#c\nd: x #\n",
    "a:\n  - b\n  -\n  - c\n",
    'a: plain\n  multi\n  line\nb: "multi\n  line"\n',
    "\ufeffa: 1\r\nb: 2\r\n",
    "a: &x 1\n",
  ]
  it.each(agreeing)("reads %j as the yaml library does", (text) => {
    const fast = fastDocuments(text)
    expect(fast).toBeDefined()
    expect(fast).toEqual(slow(text))
  })

  const slowOnly = [
    "%YAML 1.1\n---\na: yes\n",
    "a: &x {b: 1}\nc:\n  <<: *x\n",
    "c:\n  <<: {b: 1}\n",
    "null: x\n",
    "~: x\n",
    "a: &x 1\nb: *x\n",
    "? [a, b]\n: c\n",
    "a: !foo x\n",
    "a: !!binary aGk=\n",
    "a: 1\na: 2\n",
    "a: b: c\n",
    "a:\n\tb: 1\n",
  ]
  it.each(slowOnly)("leaves %j to the yaml library", (text) => {
    expect(fastDocuments(text)).toBeUndefined()
  })
})
