/**
 * The admission webhooks that point at mesh-discovery's Service (443 → 15017): the mutating
 * `/inject` webhook (namespaces labelled `mesh-injection=enabled`, or `mesh.io/rev=<revision>`;
 * pods labelled likewise) and the validating `/validate` webhook over the mesh config groups.
 * `caBundle` is left out: mesh-discovery patches it in at start (ca-bundle-patcher).
 */
import { Annotations, Labels } from "../constants.js"
import { InjectLabels } from "../injection/names.js"
import type { Obj } from "../orchestrator/json.js"
import { componentLabels, type InstallNames } from "./names.js"
import type { ResolvedOperator } from "./resolve.js"
import { meta } from "./workload.js"

type Expression = { key: string; operator: string; values?: Array<string> }
const exists = (key: string): Expression => ({ key, operator: "DoesNotExist" })
const isIn = (key: string, ...values: Array<string>): Expression => ({ key, operator: "In", values })
const notIn = (key: string, ...values: Array<string>): Expression => ({ key, operator: "NotIn", values })

const injectRules = [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }]

const injectionWebhook = (
  op: ResolvedOperator,
  names: InstallNames,
  name: string,
  namespaceSelector: Array<Expression>,
  objectSelector: Array<Expression>,
): Obj => ({
  name,
  clientConfig: { service: { name: names.discovery, namespace: op.namespace, path: "/inject", port: 443 } },
  sideEffects: "None",
  rules: structuredClone(injectRules),
  failurePolicy: "Fail",
  reinvocationPolicy: "Never",
  admissionReviewVersions: ["v1"],
  namespaceSelector: { matchExpressions: namespaceSelector },
  objectSelector: { matchExpressions: objectSelector },
})

export const injectionWebhookConfiguration = (op: ResolvedOperator, names: InstallNames): Obj => {
  const nsLabel = InjectLabels.namespaceInjection
  const inject = Annotations.sidecarInject
  const rev = names.revisionLabel
  const byRevision = [
    injectionWebhook(
      op,
      names,
      "rev.namespace.sidecar-injector.mesh.io",
      [isIn(Labels.revision, rev), exists(nsLabel)],
      [notIn(inject, "false")],
    ),
    injectionWebhook(
      op,
      names,
      "rev.object.sidecar-injector.mesh.io",
      [exists(Labels.revision), exists(nsLabel)],
      [notIn(inject, "false"), isIn(Labels.revision, rev)],
    ),
  ]
  // The default revision also serves the revision-less labels.
  const byDefault =
    names.revision === ""
      ? [
          injectionWebhook(
            op,
            names,
            "namespace.sidecar-injector.mesh.io",
            [isIn(nsLabel, "enabled")],
            [notIn(inject, "false")],
          ),
          injectionWebhook(
            op,
            names,
            "object.sidecar-injector.mesh.io",
            [exists(nsLabel), exists(Labels.revision)],
            [isIn(inject, "true"), exists(Labels.revision)],
          ),
        ]
      : []
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: meta(names.injectionWebhook, undefined, componentLabels(names, "Pilot")),
    webhooks: [...byRevision, ...byDefault],
  }
}

const CONFIG_GROUPS = ["networking", "security", "telemetry", "extensions"].flatMap((g) => [
  `${g}.mesh.io`,
  `${g}.istio.io`,
])

export const validationWebhookConfiguration = (op: ResolvedOperator, names: InstallNames): Obj => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: meta(names.validationWebhook, undefined, componentLabels(names, "Pilot")),
  webhooks: [
    {
      name: "rev.validation.mesh.io",
      clientConfig: { service: { name: names.discovery, namespace: op.namespace, path: "/validate", port: 443 } },
      rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: CONFIG_GROUPS, apiVersions: ["*"], resources: ["*"] }],
      // Ignore until mesh-discovery has patched in its CA bundle and checked it answers.
      failurePolicy: "Ignore",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      ...(names.revision === ""
        ? {}
        : { objectSelector: { matchExpressions: [isIn(Labels.revision, names.revisionLabel)] } }),
    },
  ],
})
