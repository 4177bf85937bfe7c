/** networking.mesh.io ServiceEntry: services added to the mesh's registry. */
import { Schema } from "effect"
import {
  atMostOneOf,
  checked,
  Enum,
  exportToProblems,
  fqdnProblem,
  IP_OR_CIDR_KEYWORDS,
  ipOrCidrProblem,
  isHttpProtocol,
  isTlsProtocol,
  NetworkingWorkloadSelector,
  opt,
  PortNumber,
  Protocol,
  portNameProblem,
  portProblem,
  StringList,
  structuralKeywords,
  wildcardDomainProblem,
  withDefault,
} from "./common.js"
import { WorkloadEntryFields, workloadEntryProblems } from "./workload-entry.js"

export const ServicePort = Schema.Struct({
  number: PortNumber,
  protocol: opt(Protocol),
  name: Schema.String,
  targetPort: opt(Schema.Number),
})
export type ServicePort = typeof ServicePort.Type

export const Location = Enum("MESH_EXTERNAL", "MESH_INTERNAL")
export const Resolution = Enum("NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN", "DYNAMIC_DNS")

const Endpoint = Schema.Struct(WorkloadEntryFields)

export const ServiceEntry = Schema.Struct({
  hosts: Schema.Array(Schema.String),
  addresses: opt(Schema.Array(Schema.String.annotations(structuralKeywords(IP_OR_CIDR_KEYWORDS)))),
  // Port names are unique (numbers too, which a list-map's single key cannot also say).
  ports: opt(
    Schema.Array(ServicePort).annotations(
      structuralKeywords({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
    ),
  ),
  location: withDefault(Location, () => "MESH_EXTERNAL" as const),
  resolution: withDefault(Resolution, () => "NONE" as const),
  endpoints: opt(Schema.Array(Endpoint)),
  workloadSelector: opt(NetworkingWorkloadSelector),
  exportTo: opt(StringList),
  subjectAltNames: opt(StringList),
})
  .annotations(structuralKeywords(atMostOneOf("workloadSelector", "endpoints")))
  .pipe(
    checked((se, report) => {
      const endpoints = se.endpoints ?? []
      const ports = se.ports ?? []
      if (se.workloadSelector !== undefined && se.endpoints !== undefined) {
        report([], "only one of WorkloadSelector or Endpoints is allowed in Service Entry")
      }
      if (se.hosts.length === 0) report(["hosts"], "service entry must have at least one host")
      se.hosts.forEach((host, i) => {
        const problem = host === "*" ? `invalid host ${host}` : wildcardDomainProblem(host)
        if (problem !== undefined) report(["hosts", i], problem)
      })
      let cidrFound = false
      se.addresses?.forEach((address, i) => {
        cidrFound ||= address.includes("/")
        const problem = ipOrCidrProblem(address)
        if (problem !== undefined) report(["addresses", i], problem)
      })
      if (cidrFound && se.resolution !== "NONE" && se.resolution !== "STATIC") {
        report(["addresses"], "CIDR addresses are allowed only for NONE/STATIC resolution types")
      }
      const names = new Set<string>()
      const numbers = new Set<number>()
      ports.forEach((port, i) => {
        if (names.has(port.name)) report(["ports", i, "name"], `service entry port name "${port.name}" already defined`)
        names.add(port.name)
        if (numbers.has(port.number))
          report(["ports", i, "number"], `service entry port ${port.number} already defined`)
        numbers.add(port.number)
        const nameProblem = portNameProblem(port.name)
        if (nameProblem !== undefined) report(["ports", i, "name"], nameProblem)
        if (port.targetPort !== undefined && port.targetPort !== 0) {
          const problem = portProblem(port.targetPort)
          if (problem !== undefined) report(["ports", i, "targetPort"], problem)
        }
      })
      switch (se.resolution) {
        case "NONE":
          if (endpoints.length > 0) report(["endpoints"], "no endpoints should be provided for resolution type none")
          break
        case "STATIC":
          if (endpoints.length === 0 && se.workloadSelector === undefined) {
            report(["endpoints"], "endpoints must be provided if service entry discovery mode is static")
          }
          for (const [i, endpoint] of endpoints.entries()) {
            workloadEntryProblems(endpoint, (path, message) => report(["endpoints", i, ...path], message), {
              servicePorts: names,
              allowFqdn: false,
            })
          }
          break
        case "DNS":
        case "DNS_ROUND_ROBIN":
        case "DYNAMIC_DNS":
          if (endpoints.length === 0) {
            se.hosts.forEach((host, i) => {
              if (host !== "*" && wildcardDomainProblem(host) === undefined && fqdnProblem(host) !== undefined) {
                report(
                  ["hosts", i],
                  `hosts must be FQDN if no endpoints are provided for resolution mode ${se.resolution}`,
                )
              }
            })
          }
          if (se.resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1) {
            report(["endpoints"], `there must only be 0 or 1 endpoint for resolution mode ${se.resolution}`)
          }
          for (const [i, endpoint] of endpoints.entries()) {
            workloadEntryProblems(endpoint, (path, message) => report(["endpoints", i, ...path], message), {
              servicePorts: names,
              allowFqdn: true,
            })
          }
          break
      }
      if (se.resolution !== "NONE" && se.hosts.length > 1) {
        const i = ports.findIndex((port) => !isHttpProtocol(port.protocol ?? "") && !isTlsProtocol(port.protocol ?? ""))
        if (i >= 0) report(["ports", i, "protocol"], "multiple hosts provided with non-HTTP, non-TLS ports")
      }
      exportToProblems(se.exportTo, report, { serviceEntry: true })
    }),
  )
export type ServiceEntrySpec = typeof ServiceEntry.Type
