/**
 * The TokenRequest subresource (`POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`):
 * answers with a token for an existing service account, carrying the requested audiences and
 * lifetime (`expirationSeconds`, default 3600). The token is JWT-shaped but unsigned: its claims
 * are what tests inspect, nothing here verifies it.
 */
import { randomUUID } from "node:crypto"
import type { Registry } from "./resources.js"
import type { Api } from "./rest.js"
import { badRequest } from "./status.js"

export interface TokenRequestTarget {
  readonly namespace: string
  readonly serviceAccount: string
}

const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)\/token$/

/** The service account a path asks a token for, if it is a TokenRequest path. */
export const tokenRequestTarget = (path: string): TokenRequestTarget | undefined => {
  const m = PATH.exec(path)
  return m === null ? undefined : { namespace: decodeURIComponent(m[1]!), serviceAccount: decodeURIComponent(m[2]!) }
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")

/** The created TokenRequest (status filled); 404 when the service account does not exist. */
export const issueServiceAccountToken = (
  api: Api,
  registry: Registry,
  target: TokenRequestTarget,
  body: unknown,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): unknown => {
  const accounts = registry.lookup("", "v1", "serviceaccounts")!
  const account = api.get({ type: accounts, version: "v1", namespace: target.namespace }, target.serviceAccount)
  const request = (body ?? {}) as { spec?: { audiences?: Array<string>; expirationSeconds?: number } }
  if (
    (body as { kind?: unknown } | undefined)?.kind !== undefined &&
    (body as { kind: unknown }).kind !== "TokenRequest"
  )
    throw badRequest("the body of a token request must be a TokenRequest")
  const seconds = request.spec?.expirationSeconds ?? 3600
  if (!Number.isInteger(seconds) || seconds < 600)
    throw badRequest("spec.expirationSeconds: may not specify a duration less than 10 minutes")
  const audiences = request.spec?.audiences ?? []
  const claims = {
    aud: audiences,
    exp: nowSeconds + seconds,
    iat: nowSeconds,
    iss: "https://orchestrator.default.svc",
    sub: `system:serviceaccount:${target.namespace}:${target.serviceAccount}`,
    "kubernetes.io": {
      namespace: target.namespace,
      serviceaccount: { name: target.serviceAccount, uid: account.metadata.uid },
    },
    jti: randomUUID(),
  }
  return {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    metadata: { name: target.serviceAccount, namespace: target.namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds: seconds },
    status: {
      token: `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.unsigned`,
      expirationTimestamp: new Date((nowSeconds + seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    },
  }
}
