/**
 * Status conditions as the Gateway API writes them (type, "True"/"False", reason, message,
 * observedGeneration, lastTransitionTime), and the problems that decide them: every check that
 * fails records a reason and a message; a condition is False with the first reason and all the
 * messages.
 */

export interface Condition {
  readonly type: string
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
  readonly observedGeneration?: number
  readonly lastTransitionTime: string
}

/** A failed check: the condition reason it stands for and what a person needs to fix it. */
export interface Problem {
  readonly reason: string
  readonly message: string
}

/** What every condition of one object shares: its generation and the clock reading. */
export interface ConditionContext {
  readonly generation?: number | undefined
  readonly now: string
}

export const condition = (
  ctx: ConditionContext,
  type: string,
  status: boolean,
  reason: string,
  message: string,
): Condition => ({
  type,
  status: status ? "True" : "False",
  reason,
  message,
  ...(ctx.generation !== undefined ? { observedGeneration: ctx.generation } : {}),
  lastTransitionTime: ctx.now,
})

/** True with `okReason` when there are no problems, else False with the first problem's reason. */
export const conditionFrom = (
  ctx: ConditionContext,
  type: string,
  problems: ReadonlyArray<Problem>,
  okReason: string,
  okMessage: string,
): Condition => {
  const [first] = problems
  if (first === undefined) return condition(ctx, type, true, okReason, okMessage)
  return condition(ctx, type, false, first.reason, [...new Set(problems.map((p) => p.message))].join("; "))
}

/** Condition types and reasons of the Gateway API (v1). */
export const ConditionType = {
  Accepted: "Accepted",
  Programmed: "Programmed",
  ResolvedRefs: "ResolvedRefs",
  Conflicted: "Conflicted",
} as const

export const Reason = {
  Accepted: "Accepted",
  Programmed: "Programmed",
  ResolvedRefs: "ResolvedRefs",
  NoConflicts: "NoConflicts",
  // Gateway
  ListenersNotValid: "ListenersNotValid",
  AddressNotAssigned: "AddressNotAssigned",
  UnsupportedAddress: "UnsupportedAddress",
  Invalid: "Invalid",
  InvalidParameters: "InvalidParameters",
  AddressNotUsable: "AddressNotUsable",
  // Listener
  UnsupportedProtocol: "UnsupportedProtocol",
  ProtocolConflict: "ProtocolConflict",
  HostnameConflict: "HostnameConflict",
  InvalidCertificateRef: "InvalidCertificateRef",
  InvalidCACertificateRef: "InvalidCACertificateRef",
  InvalidCACertificateKind: "InvalidCACertificateKind",
  NoValidCACertificate: "NoValidCACertificate",
  InvalidRouteKinds: "InvalidRouteKinds",
  RefNotPermitted: "RefNotPermitted",
  // Route
  NotAllowedByListeners: "NotAllowedByListeners",
  NoMatchingListenerHostname: "NoMatchingListenerHostname",
  NoMatchingParent: "NoMatchingParent",
  UnsupportedValue: "UnsupportedValue",
  BackendNotFound: "BackendNotFound",
  InvalidDestination: "InvalidDestination",
  InvalidKind: "InvalidKind",
} as const
