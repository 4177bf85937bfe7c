/** networking.mesh.io WorkloadEntry: one non-orchestrated workload (VM, bare metal). */
import { Schema } from "effect"
import {
  checked,
  fqdnProblem,
  isIP,
  Labels,
  opt,
  portNameProblem,
  portProblem,
  type Report,
  StringMap,
  structuralKeywords,
  UInt,
  UNIX_PREFIX,
  unixAddressProblem,
} from "./common.js"

export const WorkloadEntryFields = {
  address: opt(Schema.String),
  ports: opt(Schema.Record({ key: Schema.String, value: Schema.Number })),
  labels: opt(Labels),
  network: opt(Schema.String),
  locality: opt(Schema.String),
  weight: opt(UInt),
  serviceAccount: opt(Schema.String),
}

const Base = Schema.Struct(WorkloadEntryFields)
export type WorkloadEntrySpec = typeof Base.Type

/**
 * The reference's workload entry checks. `servicePorts` (port names of the owning ServiceEntry)
 * enables the "port defined by the service" check; `allowFqdn` admits DNS names as addresses.
 */
export const workloadEntryProblems = (
  entry: WorkloadEntrySpec,
  report: Report,
  options: { readonly servicePorts?: ReadonlySet<string>; readonly allowFqdn: boolean },
) => {
  const address = entry.address ?? ""
  if (address === "" && (entry.network ?? "") === "") {
    report(["address"], "address is required")
  } else if (address.startsWith(UNIX_PREFIX)) {
    const problem = unixAddressProblem(address.slice(UNIX_PREFIX.length))
    if (problem !== undefined) report(["address"], problem)
    if (Object.keys(entry.ports ?? {}).length > 0) report(["ports"], `unix endpoint ${address} must not include ports`)
    if (options.servicePorts !== undefined && options.servicePorts.size !== 1) {
      report(["address"], "exactly 1 service port required for unix endpoints")
    }
  } else if (address !== "" && !isIP(address)) {
    if (!options.allowFqdn) report(["address"], `endpoint address "${address}" is not a valid IP address`)
    else if (fqdnProblem(address) !== undefined) {
      report(["address"], `endpoint address "${address}" is not a valid FQDN or an IP address`)
    }
  }
  for (const [name, port] of Object.entries(entry.ports ?? {})) {
    if (options.servicePorts !== undefined && !options.servicePorts.has(name)) {
      report(["ports", name], `endpoint port ${port} is not defined by the service entry`)
    }
    const problem = portNameProblem(name) ?? portProblem(port)
    if (problem !== undefined) report(["ports", name], problem)
  }
}

export const WorkloadEntry = Base.annotations(
  // workloadEntryProblems: an address unless a network is set; the address a unix:// socket (an
  // abstract @name or an absolute file path), or an IP or DNS name, whose characters these are.
  structuralKeywords({
    anyOf: ["address", "network"].map((field) => ({ required: [field], properties: { [field]: { minLength: 1 } } })),
    allOf: [{ properties: { address: { pattern: "^(unix://(@[\\s\\S]*|/[\\s\\S]*[^/])|[-0-9A-Za-z.:]*)$" } } }],
  }),
).pipe(checked((entry, report) => workloadEntryProblems(entry, report, { allowFqdn: true })))

/** WorkloadGroup: a template for WorkloadEntries of auto-registered workloads. */
const HttpHeader = Schema.Struct({ name: Schema.String, value: opt(Schema.String) })

const ReadinessProbe = Schema.Struct({
  initialDelaySeconds: opt(Schema.Number),
  timeoutSeconds: opt(Schema.Number),
  periodSeconds: opt(Schema.Number),
  successThreshold: opt(Schema.Number),
  failureThreshold: opt(Schema.Number),
  httpGet: opt(
    Schema.Struct({
      path: opt(Schema.String),
      port: Schema.Number.annotations(structuralKeywords({ type: "integer", minimum: 1, maximum: 65535 })),
      host: opt(Schema.String),
      scheme: opt(Schema.String),
      httpHeaders: opt(Schema.Array(HttpHeader)),
    }),
  ),
  tcpSocket: opt(Schema.Struct({ host: opt(Schema.String), port: Schema.Number })),
  exec: opt(
    Schema.Struct({
      command: opt(Schema.Array(Schema.String).annotations(structuralKeywords({ minItems: 1 }))),
    }).annotations(structuralKeywords({ required: ["command"] })),
  ),
  grpc: opt(Schema.Struct({ port: Schema.Number, service: opt(Schema.String) })),
})
  .annotations(
    structuralKeywords({ oneOf: ["httpGet", "tcpSocket", "exec", "grpc"].map((method) => ({ required: [method] })) }),
  )
  .pipe(
    checked((probe, report) => {
      for (const field of [
        "periodSeconds",
        "initialDelaySeconds",
        "timeoutSeconds",
        "successThreshold",
        "failureThreshold",
      ] as const) {
        const value = probe[field]
        if (value !== undefined && value < 0) report([field], `${field} must be non-negative`)
      }
      const methods = (["httpGet", "tcpSocket", "exec", "grpc"] as const).filter((m) => probe[m] !== undefined)
      if (methods.length === 0) report([], "one of httpGet, tcpSocket, exec or grpc must be set")
      if (methods.length > 1) report([], `only one health check method may be set, found ${methods.join(", ")}`)
      if (probe.httpGet !== undefined) {
        const problem = portProblem(probe.httpGet.port)
        if (problem !== undefined) report(["httpGet", "port"], problem)
        const scheme = probe.httpGet.scheme
        if (scheme !== undefined && scheme !== "" && scheme !== "HTTP" && scheme !== "HTTPS") {
          report(["httpGet", "scheme"], `httpGet.scheme must be one of "HTTPS", "HTTP"`)
        }
        probe.httpGet.httpHeaders?.forEach((header, i) => {
          if (!/^[-_A-Za-z0-9]+$/.test(header.name)) {
            report(["httpGet", "httpHeaders", i, "name"], `header name ${header.name} is not a valid header name`)
          }
        })
      }
      if (probe.tcpSocket !== undefined) {
        const problem = portProblem(probe.tcpSocket.port)
        if (problem !== undefined) report(["tcpSocket", "port"], problem)
      }
      if (probe.exec !== undefined && (probe.exec.command ?? []).length === 0) {
        report(["exec", "command"], "exec.command is required")
      }
    }),
  )

export const WorkloadGroup = Schema.Struct({
  metadata: opt(Schema.Struct({ labels: opt(Labels), annotations: opt(StringMap) })),
  template: Schema.Struct(WorkloadEntryFields)
    .annotations(structuralKeywords({ allOf: [{ properties: { address: { maxLength: 0 } } }] }))
    .pipe(
      checked((template, report) => {
        // Entries get their address when they register: a template must not carry one.
        if ((template.address ?? "") !== "") report(["address"], "address is not allowed in a WorkloadGroup template")
        for (const [name, port] of Object.entries(template.ports ?? {})) {
          const problem = portNameProblem(name) ?? portProblem(port)
          if (problem !== undefined) report(["ports", name], problem)
        }
      }),
    ),
  probe: opt(ReadinessProbe),
})
export type WorkloadGroupSpec = typeof WorkloadGroup.Type
