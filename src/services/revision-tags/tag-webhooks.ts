/**
 * The objects of a revision tag, built from the revision's own injector webhook: its first
 * webhook is the template (client config with CA bundle, rules, failure and reinvocation
 * policies), copied under the reference's four webhook names with selectors rewritten to the
 * tag. For the `default` tag the revision-less labels are served too (`mesh-injection=enabled`
 * namespaces; `sidecar.mesh.io/inject=true` pods in unlabelled namespaces; with
 * `--auto-inject-namespaces` every unlabelled namespace but the orchestrator's own), and a
 * cluster-wide validating webhook points at the revision's service.
 */
import { Annotations, ApiGroups, Labels } from "../constants.js"
import { InjectLabels, UPSTREAM_DOMAIN } from "../injection/names.js"
import { asObject, asObjects, asStringMap, cloneJson, type Obj } from "../orchestrator/json.js"
import { DEACTIVATED_LABEL, DEFAULT_TAG, DEFAULT_VALIDATOR_NAME, TAG_LABEL } from "./names.js"

type Expression = { key: string; operator: string; values?: Array<string> }
const absent = (key: string): Expression => ({ key, operator: "DoesNotExist" })
const isIn = (key: string, ...values: Array<string>): Expression => ({ key, operator: "In", values })
const notIn = (key: string, ...values: Array<string>): Expression => ({ key, operator: "NotIn", values })

/** Namespaces the orchestrator owns: never injected by `--auto-inject-namespaces`. */
const SYSTEM_NAMESPACES = ["kube-system", "kube-public", "kube-node-lease", "local-path-storage"]
/** Set by the orchestrator on every namespace (an orchestrator name, not the mesh's). */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

interface Selectors {
  readonly namespace: Array<Expression>
  readonly object: Array<Expression>
}

/** The webhooks of tag `tag`, by name, with their namespace and object selectors. */
export const tagSelectors = (tag: string, autoInjectNamespaces: boolean): ReadonlyArray<[string, Selectors]> => {
  const nsLabel = InjectLabels.namespaceInjection
  const inject = Annotations.sidecarInject
  const rev = Labels.revision
  const byTag: Array<[string, Selectors]> = [
    [
      "rev.namespace.sidecar-injector.mesh.io",
      { namespace: [isIn(rev, tag), absent(nsLabel)], object: [notIn(inject, "false")] },
    ],
    [
      "rev.object.sidecar-injector.mesh.io",
      {
        namespace: [absent(rev), absent(nsLabel)],
        object: [notIn(inject, "false"), isIn(rev, tag)],
      },
    ],
  ]
  if (tag !== DEFAULT_TAG) return byTag
  return [
    ...byTag,
    ["namespace.sidecar-injector.mesh.io", { namespace: [isIn(nsLabel, "enabled")], object: [notIn(inject, "false")] }],
    [
      "object.sidecar-injector.mesh.io",
      { namespace: [absent(nsLabel), absent(rev)], object: [isIn(inject, "true"), absent(rev)] },
    ],
    ...(autoInjectNamespaces
      ? [
          [
            "auto.sidecar-injector.mesh.io",
            {
              namespace: [absent(nsLabel), absent(rev), notIn(NAMESPACE_NAME_LABEL, ...SYSTEM_NAMESPACES)],
              object: [absent(inject), absent(rev)],
            },
          ] as [string, Selectors],
        ]
      : []),
  ]
}

/** The `mesh.io/rev` label of a webhook configuration ("" when missing). */
export const revisionOf = (configuration: Obj): string =>
  asStringMap(asObject(configuration.metadata).labels)[Labels.revision] ?? ""

export const tagOf = (configuration: Obj): string =>
  asStringMap(asObject(configuration.metadata).labels)[TAG_LABEL] ?? ""

export const nameOf = (configuration: Obj): string => String(asObject(configuration.metadata).name ?? "")

/** The revision's first injector webhook: what every tag webhook copies. Undefined when it has none. */
export const injectorTemplate = (canonical: Obj): Obj | undefined => {
  const first = asObjects(canonical.webhooks)[0]
  if (first === undefined) return undefined
  const { name: _name, namespaceSelector: _ns, objectSelector: _object, ...rest } = cloneJson(first)
  return rest
}

export interface TagWebhookRequest {
  readonly tag: string
  /** The revision's injector MutatingWebhookConfiguration, as read from the cluster. */
  readonly canonical: Obj
  /** The configuration's name (`--webhook-name`, else `mesh-revision-tag-<tag>`). */
  readonly name: string
  readonly autoInjectNamespaces: boolean
}

export const tagWebhookConfiguration = (request: TagWebhookRequest): Obj => {
  const template = injectorTemplate(request.canonical) ?? {}
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: {
      name: request.name,
      labels: {
        [TAG_LABEL]: request.tag,
        [Labels.revision]: revisionOf(request.canonical),
        app: "sidecar-injector",
      },
    },
    webhooks: tagSelectors(request.tag, request.autoInjectNamespaces).map(([name, selectors]) => ({
      name,
      ...cloneJson(template),
      namespaceSelector: { matchExpressions: selectors.namespace },
      objectSelector: { matchExpressions: selectors.object },
    })),
  }
}

const VALIDATED_GROUPS = Object.values(ApiGroups).flatMap((group) => [
  group,
  group.replace(/mesh\.io$/, UPSTREAM_DOMAIN),
])

/** The injector's client config turned to the validation path of the same server. */
const validationClientConfig = (template: Obj): Obj => {
  const config = cloneJson(asObject(template.clientConfig))
  if (config.service !== undefined) config.service = { ...asObject(config.service), path: "/validate" }
  if (typeof config.url === "string") {
    const url = new URL(config.url)
    url.pathname = "/validate"
    config.url = url.toString()
  }
  return config
}

/** The cluster-wide validating webhook of `tag set default`, served by the revision's control plane. */
export const defaultValidatorConfiguration = (canonical: Obj): Obj => {
  const template = injectorTemplate(canonical) ?? {}
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: DEFAULT_VALIDATOR_NAME, labels: { app: "meshd", [Labels.revision]: revisionOf(canonical) } },
    webhooks: [
      {
        name: "validation.mesh.io",
        clientConfig: validationClientConfig(template),
        rules: [
          { operations: ["CREATE", "UPDATE"], apiGroups: VALIDATED_GROUPS, apiVersions: ["*"], resources: ["*"] },
        ],
        // Fail open until the control plane has patched its CA bundle in and answers.
        failurePolicy: "Ignore",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
      },
    ],
  }
}

/** The default revision's own injector with every webhook made to match nothing (the tag takes over). */
export const deactivated = (configuration: Obj): Obj => {
  const never = { matchLabels: { [DEACTIVATED_LABEL]: "never-match" } }
  return {
    ...cloneJson(configuration),
    // Objects from a list carry no kind; a write needs it.
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    webhooks: asObjects(configuration.webhooks).map((webhook) => ({
      ...cloneJson(webhook),
      namespaceSelector: cloneJson(never),
      objectSelector: cloneJson(never),
    })),
  }
}
