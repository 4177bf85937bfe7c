/**
 * Workload identities: SPIFFE IDs `spiffe://<trust-domain>/ns/<ns>/sa/<sa>`, the rule that the
 * identities in a CSR must be exactly the caller's, and node impersonation
 * (`CA_TRUSTED_NODE_ACCOUNTS`): a trusted node agent may ask for the identity of a workload
 * that runs on its own node, as the reference allows.
 */
import { Effect, Either, Option } from "effect"
import { spiffeId } from "../constants.js"

export const SPIFFE_SCHEME = "spiffe://"

/** Metadata key of the request Struct naming the identity a node agent asks for. */
export const IMPERSONATED_IDENTITY_KEY = "ImpersonatedIdentity"
/** Metadata key naming a certificate signer (reference: `CertSigner`). */
export const CERT_SIGNER_KEY = "CertSigner"

export interface SpiffeIdentity {
  readonly trustDomain: string
  readonly namespace: string
  readonly serviceAccount: string
}

export { spiffeId }

export const parseSpiffeId = (uri: string): Either.Either<SpiffeIdentity, string> => {
  if (!uri.startsWith(SPIFFE_SCHEME)) return Either.left(`identity "${uri}" is not a SPIFFE URI`)
  const [trustDomain, ns, namespace, sa, serviceAccount, ...rest] = uri.slice(SPIFFE_SCHEME.length).split("/")
  if (
    trustDomain === undefined ||
    trustDomain === "" ||
    ns !== "ns" ||
    sa !== "sa" ||
    namespace === undefined ||
    namespace === "" ||
    serviceAccount === undefined ||
    serviceAccount === "" ||
    rest.length > 0
  ) {
    return Either.left(
      `identity "${uri}" is not of the form spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>`,
    )
  }
  return Either.right({ trustDomain, namespace, serviceAccount })
}

/** Orchestrator facts about the caller, from its token (namespace, service account, pod, node). */
export interface OrchestratorInfo {
  readonly namespace: string
  readonly serviceAccount: string
  readonly podName?: string
  readonly podUid?: string
  readonly nodeName?: string
}

/** The identities a certificate may carry: the CSR's URI SANs must be exactly these. */
export const checkCsrIdentities = (
  csrUris: ReadonlyArray<string>,
  allowed: ReadonlyArray<string>,
): Either.Either<ReadonlyArray<string>, string> => {
  if (csrUris.length === 0) return Either.left("the CSR carries no identity (no URI subject alternative name)")
  const wanted = new Set(allowed)
  const got = new Set(csrUris)
  const extra = [...got].filter((uri) => !wanted.has(uri))
  if (extra.length > 0) {
    return Either.left(`the CSR asks for identity [${extra.join(", ")}] but the caller is [${[...wanted].join(", ")}]`)
  }
  return Either.right([...got])
}

/** A `ns/sa` pair from `CA_TRUSTED_NODE_ACCOUNTS` (comma-separated). */
export interface NodeAccount {
  readonly namespace: string
  readonly serviceAccount: string
}

export const parseTrustedNodeAccounts = (text: string): Either.Either<ReadonlyArray<NodeAccount>, string> => {
  const accounts: Array<NodeAccount> = []
  for (const item of text.split(",").map((part) => part.trim())) {
    if (item === "") continue
    const [namespace, serviceAccount, ...rest] = item.split("/")
    if (
      namespace === undefined ||
      namespace === "" ||
      serviceAccount === undefined ||
      serviceAccount === "" ||
      rest.length > 0
    ) {
      return Either.left(`CA_TRUSTED_NODE_ACCOUNTS: "${item}" is not of the form <namespace>/<service-account>`)
    }
    accounts.push({ namespace, serviceAccount })
  }
  return Either.right(accounts)
}

/**
 * Where workloads run: answered by the orchestrator registry. A node agent may impersonate an
 * identity only if a pod with that namespace and service account runs on the agent's node.
 */
export interface PodLocator {
  /**
   * The node a pod runs on; None when unknown, or when the pod found is not the caller's (its
   * uid or service account differ from `expected`: a pod re-created under the same name).
   */
  readonly nodeOfPod: (
    namespace: string,
    podName: string,
    expected?: { readonly uid?: string; readonly serviceAccount?: string },
  ) => Effect.Effect<Option.Option<string>>
  /** Whether some pod of `namespace`/`serviceAccount` runs on `nodeName`. */
  readonly hasPodOnNode: (nodeName: string, namespace: string, serviceAccount: string) => Effect.Effect<boolean>
}

/** Without an orchestrator nothing is known about nodes: every impersonation is refused. */
export const noPodLocator: PodLocator = {
  nodeOfPod: () => Effect.succeed(Option.none()),
  hasPodOnNode: () => Effect.succeed(false),
}

/** Why a node agent may not act for an identity: a metric label (a fixed set) and the reason logged. */
export type NodeRefusalKind =
  | "not_configured"
  | "no_orchestrator_identity"
  | "untrusted_account"
  | "invalid_identity"
  | "caller_node_unknown"
  | "not_on_node"

export interface NodeRefusal {
  readonly kind: NodeRefusalKind
  readonly message: string
}

export interface NodeAuthorizer {
  /** Succeeds when `caller` may act as `impersonated`; fails with why (logged, not returned to the caller). */
  readonly authorize: (caller: OrchestratorInfo | undefined, impersonated: string) => Effect.Effect<void, NodeRefusal>
}

const refuse = (kind: NodeRefusalKind, message: string) => Effect.fail<NodeRefusal>({ kind, message })

export const makeNodeAuthorizer = (
  trusted: ReadonlyArray<NodeAccount>,
  locator: PodLocator,
  trustDomain: string,
): NodeAuthorizer => ({
  authorize: (caller, impersonated) =>
    Effect.gen(function* () {
      if (caller === undefined)
        return yield* refuse(
          "no_orchestrator_identity",
          "the caller has no orchestrator identity (pod and service account)",
        )
      if (!trusted.some((a) => a.namespace === caller.namespace && a.serviceAccount === caller.serviceAccount)) {
        return yield* refuse(
          "untrusted_account",
          `${caller.namespace}/${caller.serviceAccount} is not in CA_TRUSTED_NODE_ACCOUNTS`,
        )
      }
      const target = parseSpiffeId(impersonated)
      if (Either.isLeft(target)) return yield* refuse("invalid_identity", target.left)
      if (target.right.trustDomain !== trustDomain) {
        return yield* refuse(
          "invalid_identity",
          `impersonated identity ${impersonated} is not in trust domain ${trustDomain}`,
        )
      }
      let node = caller.nodeName
      if (node === undefined && caller.podName !== undefined) {
        const expected = {
          serviceAccount: caller.serviceAccount,
          ...(caller.podUid !== undefined ? { uid: caller.podUid } : {}),
        }
        node = Option.getOrUndefined(yield* locator.nodeOfPod(caller.namespace, caller.podName, expected))
      }
      if (node === undefined) return yield* refuse("caller_node_unknown", "the node of the caller's pod is unknown")
      const present = yield* locator.hasPodOnNode(node, target.right.namespace, target.right.serviceAccount)
      if (!present) {
        return yield* refuse(
          "not_on_node",
          `no pod of ${target.right.namespace}/${target.right.serviceAccount} runs on node ${node}`,
        )
      }
    }),
})
