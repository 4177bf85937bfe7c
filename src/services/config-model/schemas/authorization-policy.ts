/** security.mesh.io AuthorizationPolicy: access control for workloads. */
import { Schema } from "effect"
import {
  checked,
  Enum,
  IP_OR_CIDR_KEYWORDS,
  ipOrCidrProblem,
  opt,
  PolicyTargetReference,
  portProblem,
  type Report,
  StringList,
  structuralKeywords,
  WorkloadSelector,
  withDefault,
} from "./common.js"
import { attachmentProblems, attachmentRule, maxItemsProblem, TargetRefs } from "./policy-attachment.js"

/** The CRD's bounds: rules and sources per policy, service accounts per source and their length. */
const MAX_RULES = 512
const MAX_FROM = 512
const MAX_SERVICE_ACCOUNTS = 16
const MAX_SERVICE_ACCOUNT_LENGTH = 320

/** `ipProblems`: each entry empty, an IP address or a CIDR block. */
const IpBlocks = Schema.Array(
  Schema.String.annotations(structuralKeywords({ anyOf: [{ maxLength: 0 }, ...IP_OR_CIDR_KEYWORDS.anyOf] })),
)

const Source = Schema.Struct({
  principals: opt(StringList),
  notPrincipals: opt(StringList),
  requestPrincipals: opt(StringList),
  notRequestPrincipals: opt(StringList),
  namespaces: opt(StringList),
  notNamespaces: opt(StringList),
  serviceAccounts: opt(StringList.annotations(structuralKeywords({ maxItems: MAX_SERVICE_ACCOUNTS }))),
  notServiceAccounts: opt(StringList),
  ipBlocks: opt(IpBlocks),
  notIpBlocks: opt(IpBlocks),
  remoteIpBlocks: opt(IpBlocks),
  notRemoteIpBlocks: opt(IpBlocks),
  trustDomains: opt(StringList),
  notTrustDomains: opt(StringList),
}).annotations(
  // serviceAccountProblems: no (not)serviceAccounts beside (not)principals or (not)namespaces.
  structuralKeywords({
    not: {
      anyOf: ["serviceAccounts", "notServiceAccounts"].flatMap((accounts) =>
        ["principals", "notPrincipals", "namespaces", "notNamespaces"].map((other) => ({
          required: [accounts, other],
        })),
      ),
    },
  }),
)

const Operation = Schema.Struct({
  hosts: opt(StringList),
  notHosts: opt(StringList),
  ports: opt(StringList),
  notPorts: opt(StringList),
  methods: opt(StringList),
  notMethods: opt(StringList),
  paths: opt(StringList),
  notPaths: opt(StringList),
})

const Condition = Schema.Struct({ key: Schema.String, values: opt(StringList), notValues: opt(StringList) })

const Rule = Schema.Struct({
  from: opt(Schema.Array(Schema.Struct({ source: opt(Source) }))),
  to: opt(Schema.Array(Schema.Struct({ operation: opt(Operation) }))),
  when: opt(Schema.Array(Condition)),
})

const emptyValues = (
  record: Readonly<Record<string, ReadonlyArray<string> | undefined>>,
  report: Report,
  at: ReadonlyArray<PropertyKey>,
) => {
  for (const [field, values] of Object.entries(record)) {
    values?.forEach((v, i) => {
      if (v === "") report([...at, field, i], `empty value not allowed, found in ${field}`)
    })
  }
}

/**
 * Service accounts name identities on their own: the CRD refuses them beside namespaces or
 * principals (either form), and bounds how many and how long.
 */
const serviceAccountProblems = (src: typeof Source.Type, report: Report, at: ReadonlyArray<PropertyKey>) => {
  if (src.serviceAccounts !== undefined || src.notServiceAccounts !== undefined) {
    const clashing = (["principals", "notPrincipals", "namespaces", "notNamespaces"] as const).filter(
      (field) => src[field] !== undefined,
    )
    if (clashing.length > 0) {
      report(at, `Cannot set serviceAccounts with namespaces or principals (found ${clashing.join(", ")})`)
    }
  }
  for (const field of ["serviceAccounts", "notServiceAccounts"] as const) {
    const accounts = src[field]
    maxItemsProblem(accounts, MAX_SERVICE_ACCOUNTS, [...at, field], report)
    accounts?.forEach((account, i) => {
      if (account.length > MAX_SERVICE_ACCOUNT_LENGTH) {
        report([...at, field, i], `must be at most ${MAX_SERVICE_ACCOUNT_LENGTH} characters long`)
      }
    })
  }
}

const ipProblems = (values: ReadonlyArray<string> | undefined, report: Report, at: ReadonlyArray<PropertyKey>) =>
  values?.forEach((v, i) => {
    if (v !== "" && ipOrCidrProblem(v) !== undefined) report([...at, i], `invalid IP address or CIDR range: ${v}`)
  })

const portListProblems = (values: ReadonlyArray<string> | undefined, report: Report, at: ReadonlyArray<PropertyKey>) =>
  values?.forEach((v, i) => {
    if (v === "") return
    if (!/^\d+$/.test(v) || portProblem(Number(v)) !== undefined) report([...at, i], `invalid port: ${v}`)
  })

/** A segment beside a path template must be an RFC 3986 pchar literal (what the proxy's matcher takes). */
const TEMPLATE_LITERAL = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/

/**
 * `{*}` matches one segment and `{**}` any number; the reference takes literal segments after
 * `{**}` (`/{**}/edit`) but no template after it. Any other `{` or `}` is refused, and in a path
 * with a template every other segment must be a plain literal (so no `*` globs and no `//`).
 */
const pathTemplateProblem = (path: string): string | undefined => {
  const templated = path.includes("{*}") || path.includes("{**}")
  let matchAnySeen = false
  for (const segment of path.replace(/^\/+|\/+$/g, "").split("/")) {
    const template = segment === "{*}" || segment === "{**}"
    if (template && matchAnySeen) return "{**} is not the last operator"
    if (template) {
      matchAnySeen = segment === "{**}"
      continue
    }
    if (/[{}]/.test(segment)) return "contains '{' or '}' beyond a supported path template"
    if (templated && !TEMPLATE_LITERAL.test(segment)) return `contains segment "${segment}" that is not a valid literal`
  }
  return undefined
}

const pathTemplateProblems = (
  values: ReadonlyArray<string> | undefined,
  report: Report,
  at: ReadonlyArray<PropertyKey>,
) =>
  values?.forEach((v, i) => {
    const problem = v.includes("{") || v.includes("}") ? pathTemplateProblem(v) : undefined
    if (problem !== undefined) report([...at, i], `invalid or unsupported path ${v}: ${problem}`)
  })

const KNOWN_KEYS = [
  "source.ip",
  "remote.ip",
  "source.namespace",
  "source.principal",
  "source.serviceAccount",
  "request.auth.principal",
  "request.auth.audiences",
  "request.auth.presenter",
  "destination.ip",
  "destination.port",
  "connection.sni",
]

const conditionProblems = (cond: typeof Condition.Type, report: Report, at: ReadonlyArray<PropertyKey>) => {
  const key = cond.key
  if (key === "") {
    report([...at, "key"], "`key` must not be empty")
    return
  }
  const known =
    KNOWN_KEYS.includes(key) ||
    /^request\.headers\[[^\]]+\]$/.test(key) ||
    /^request\.auth\.claims\[[^\]]+\](\[[^\]]+\])*$/.test(key) ||
    key.startsWith("experimental.envoy.filters.")
  if (!known) report([...at, "key"], `unknown attribute (${key})`)
  if ((cond.values?.length ?? 0) === 0 && (cond.notValues?.length ?? 0) === 0) {
    report([...at], `at least one of \`values\` or \`notValues\` must be set for key ${key}`)
    return
  }
  for (const field of ["values", "notValues"] as const) {
    const values = cond[field]
    if (key === "source.ip" || key === "remote.ip" || key === "destination.ip")
      ipProblems(values, report, [...at, field])
    if (key === "destination.port") portListProblems(values, report, [...at, field])
  }
}

const DENY_ACTION = { required: ["action"], properties: { action: { enum: ["DENY"] } } }
const CUSTOM_ACTION = { required: ["action"], properties: { action: { enum: ["CUSTOM"] } } }

export const AuthorizationPolicy = Schema.Struct({
  selector: opt(WorkloadSelector),
  targetRef: opt(PolicyTargetReference),
  targetRefs: opt(TargetRefs),
  rules: opt(Schema.Array(Rule)),
  action: withDefault(Enum("ALLOW", "DENY", "AUDIT", "CUSTOM"), () => "ALLOW" as const),
  provider: opt(Schema.Struct({ name: opt(Schema.String) })),
})
  .annotations(
    // A provider only with CUSTOM (the default action is ALLOW); CUSTOM needs rules and a provider name.
    structuralKeywords({
      allOf: [
        attachmentRule,
        { anyOf: [{ not: DENY_ACTION }, { required: ["rules"] }] },
        { anyOf: [{ not: { required: ["provider"] } }, CUSTOM_ACTION] },
        {
          anyOf: [
            { not: CUSTOM_ACTION },
            {
              required: ["rules", "provider"],
              properties: { provider: { required: ["name"], properties: { name: { minLength: 1 } } } },
            },
          ],
        },
      ],
    }),
  )
  .pipe(
    checked((ap, report) => {
      attachmentProblems(ap, report)
      maxItemsProblem(ap.rules, MAX_RULES, ["rules"], report)
      if (ap.action === "CUSTOM") {
        if (ap.rules === undefined) {
          report(
            ["rules"],
            "CUSTOM action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
          )
        } else if ((ap.provider?.name ?? "") === "") report(["provider", "name"], "`provider.name` must not be empty")
        ap.rules?.forEach((rule, i) => {
          rule.from?.forEach((from, j) => {
            const src = from.source
            if (src === undefined) return
            for (const field of [
              "namespaces",
              "notNamespaces",
              "principals",
              "notPrincipals",
              "requestPrincipals",
              "notRequestPrincipals",
            ] as const) {
              if ((src[field]?.length ?? 0) > 0) {
                report(
                  ["rules", i, "from", j, "source", field],
                  `${field} is currently not supported with CUSTOM action`,
                )
              }
            }
          })
          rule.when?.forEach((cond, j) => {
            if (
              cond.key === "source.namespace" ||
              cond.key === "source.principal" ||
              cond.key.startsWith("request.auth.")
            ) {
              report(["rules", i, "when", j, "key"], `${cond.key} is currently not supported with CUSTOM action`)
            }
          })
        })
      }
      if (ap.provider !== undefined && ap.action !== "CUSTOM") {
        report(["provider"], `\`provider\` must not be with non CUSTOM action, found ${ap.action}`)
      }
      if (ap.action === "DENY" && ap.rules === undefined) {
        report(
          ["rules"],
          "DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request",
        )
      }
      ap.rules?.forEach((rule, i) => {
        const at = ["rules", i] as const
        if (rule.from !== undefined && rule.from.length === 0)
          report([...at, "from"], `\`from\` must not be empty, found at rule ${i}`)
        maxItemsProblem(rule.from, MAX_FROM, [...at, "from"], report)
        rule.from?.forEach((from, j) => {
          const src = from.source
          if (src === undefined) {
            report([...at, "from", j, "source"], `\`from.source\` must not be nil, found at rule ${i}`)
            return
          }
          if (Object.values(src).every((v) => v === undefined || v.length === 0)) {
            report([...at, "from", j, "source"], `\`from.source\` must not be empty, found at rule ${i}`)
          }
          for (const field of ["ipBlocks", "notIpBlocks", "remoteIpBlocks", "notRemoteIpBlocks"] as const) {
            ipProblems(src[field], report, [...at, "from", j, "source", field])
          }
          emptyValues(src, report, [...at, "from", j, "source"])
          serviceAccountProblems(src, report, [...at, "from", j, "source"])
        })
        if (rule.to !== undefined && rule.to.length === 0)
          report([...at, "to"], `\`to\` must not be empty, found at rule ${i}`)
        rule.to?.forEach((to, j) => {
          const op = to.operation
          if (op === undefined) {
            report([...at, "to", j, "operation"], `\`to.operation\` must not be nil, found at rule ${i}`)
            return
          }
          if (Object.values(op).every((v) => v === undefined || v.length === 0)) {
            report([...at, "to", j, "operation"], `\`to.operation\` must not be empty, found at rule ${i}`)
          }
          portListProblems(op.ports, report, [...at, "to", j, "operation", "ports"])
          portListProblems(op.notPorts, report, [...at, "to", j, "operation", "notPorts"])
          pathTemplateProblems(op.paths, report, [...at, "to", j, "operation", "paths"])
          pathTemplateProblems(op.notPaths, report, [...at, "to", j, "operation", "notPaths"])
          emptyValues(op, report, [...at, "to", j, "operation"])
        })
        for (const [j, cond] of (rule.when ?? []).entries()) conditionProblems(cond, report, [...at, "when", j])
      })
    }),
  )
export type AuthorizationPolicySpec = typeof AuthorizationPolicy.Type
