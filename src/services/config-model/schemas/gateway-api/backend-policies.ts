/**
 * The Gateway-API policies that attach to backends: BackendTLSPolicy
 * (`gateway.networking.k8s.io` v1, and the deprecated v1alpha3 of the experimental channel: the
 * same shape) — how to originate TLS to a Service or ServiceEntry — and XBackendTrafficPolicy
 * (`gateway.networking.x-k8s.io` v1alpha1) — retry budget and session persistence of a Service.
 * Only what the conversion reads or the upstream CRDs refuse is typed; the CRDs' limits apply.
 */
import { Schema } from "effect"
import { checked, Enum, labelKeyProblem, opt } from "../common.js"
import {
  annotationValueProblem,
  boundedMap,
  GatewayDuration,
  Group,
  HeaderName,
  Hostname,
  IntIn,
  Kind,
  listOf,
  ObjectName,
  PreciseHostname,
  SectionName,
} from "./names.js"

const MAX_TARGET_REFS = 16
const MAX_CA_REFS = 8
const MAX_SANS = 5

/** `LocalPolicyTargetReferenceWithSectionName`: group and kind are required (empty group: core). */
const TargetRef = Schema.Struct({ group: Group, kind: Kind, name: ObjectName, sectionName: opt(SectionName) })

/** `LocalObjectReference`: an object of the policy's own namespace. */
const LocalObjectRef = Schema.Struct({ group: Group, kind: Kind, name: ObjectName })

const SubjectAltName = Schema.Struct({
  type: Enum("Hostname", "URI"),
  hostname: opt(Hostname),
  uri: opt(Schema.String.pipe(Schema.maxLength(253))),
}).pipe(
  checked((san, report) => {
    if (san.type === "Hostname" && (san.hostname ?? "") === "")
      report([], "SubjectAltName element must contain Hostname, if Type is set to Hostname")
    if (san.type !== "Hostname" && (san.hostname ?? "") !== "")
      report([], "SubjectAltName element must not contain Hostname, if Type is not set to Hostname")
    if (san.type === "URI" && (san.uri ?? "") === "")
      report([], "SubjectAltName element must contain URI, if Type is set to URI")
    if (san.type !== "URI" && (san.uri ?? "") !== "")
      report([], "SubjectAltName element must not contain URI, if Type is not set to URI")
  }),
)

const WELL_KNOWN_CA =
  /^(System|([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]))$/

const Validation = Schema.Struct({
  caCertificateRefs: opt(listOf(LocalObjectRef, { max: MAX_CA_REFS })),
  wellKnownCACertificates: opt(
    Schema.String.pipe(
      Schema.filter((v) =>
        WELL_KNOWN_CA.test(v) ? undefined : `invalid wellKnownCACertificates "${v}": System or a domain-prefixed name`,
      ),
    ),
  ),
  hostname: PreciseHostname,
  subjectAltNames: opt(listOf(SubjectAltName, { max: MAX_SANS })),
}).pipe(
  checked((v, report) => {
    const refs = (v.caCertificateRefs ?? []).length > 0
    const wellKnown = (v.wellKnownCACertificates ?? "") !== ""
    if (refs && wellKnown) report([], "must not contain both CACertificateRefs and WellKnownCACertificates")
    if (!refs && !wellKnown) report([], "must specify either CACertificateRefs or WellKnownCACertificates")
  }),
)

const sameTarget = (a: typeof TargetRef.Type, b: typeof TargetRef.Type) =>
  a.group === b.group && a.kind === b.kind && a.name === b.name

export const BackendTLSPolicy = Schema.Struct({
  // The CRD also refuses a target named both with and without a sectionName; that rule is left
  // out: the reference converts such a policy (whole-service TLS plus a port's own), and so do we.
  targetRefs: listOf(TargetRef, { min: 1, max: MAX_TARGET_REFS }).pipe(
    checked((refs, report) => {
      refs.forEach((ref, i) => {
        const twin = refs.findIndex(
          (other) => sameTarget(ref, other) && (other.sectionName ?? "") === (ref.sectionName ?? ""),
        )
        if (twin !== i)
          report([i], "sectionName must be unique when targetRefs includes 2 or more references to the same target")
      })
    }),
  ),
  validation: Validation,
  options: opt(boundedMap(16, labelKeyProblem, annotationValueProblem)),
})

const SessionPersistence = Schema.Struct({
  sessionName: opt(Schema.String.pipe(Schema.maxLength(128))),
  absoluteTimeout: opt(GatewayDuration),
  idleTimeout: opt(GatewayDuration),
  type: opt(Enum("Cookie", "Header")),
  cookieConfig: opt(Schema.Struct({ lifetimeType: opt(Enum("Permanent", "Session")) })),
  cookie: opt(Schema.Struct({ lifetimeType: opt(Enum("Permanent", "Session")), name: opt(HeaderName) })),
  header: opt(Schema.Struct({ name: HeaderName })),
})

const RetryConstraint = Schema.Struct({
  budget: opt(Schema.Struct({ percent: opt(IntIn(0, 100)), interval: opt(GatewayDuration) })),
  minRetryRate: opt(Schema.Struct({ count: opt(IntIn(1, 1_000_000)), interval: opt(GatewayDuration) })),
})

/** `LocalPolicyTargetReference` of the x-k8s group: no sectionName. */
const XTargetRef = Schema.Struct({ group: Group, kind: Kind, name: ObjectName })

export const XBackendTrafficPolicy = Schema.Struct({
  targetRefs: listOf(XTargetRef, { min: 1, max: MAX_TARGET_REFS }).pipe(
    checked((refs, report) => {
      refs.forEach((ref, i) => {
        if (refs.findIndex((other) => sameTarget(ref, other)) !== i) report([i], "targetRefs must be unique")
      })
    }),
  ),
  retryConstraint: opt(RetryConstraint),
  sessionPersistence: opt(SessionPersistence),
})

export type BackendTLSPolicySpec = typeof BackendTLSPolicy.Type
export type XBackendTrafficPolicySpec = typeof XBackendTrafficPolicy.Type
