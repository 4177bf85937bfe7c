/**
 * Analyzers of the mesh's admission webhooks, as the reference checks them:
 * - externalcontrolplane: the mesh's validating (`meshd-default-validator`, `mesh-validator*`)
 *   and injecting (`mesh-sidecar-injector*`) webhooks must reach the control plane by a URL
 *   with a host name (an IP address is MSH0164) or by a Service; a malformed URL or neither is
 *   MSH0163.
 * - webhook: two injecting webhooks must not both match one namespace/pod label combination
 *   (injection would run twice), and a webhook's Service must exist (MSH0139).
 * - image auto: a Pod whose proxy container has `image: auto` was not injected (MSH0147); a
 *   Deployment's template with it must match a mesh injection webhook (MSH0146).
 * A webhook is the mesh's when its name ends in the mesh domain or (for overlaps) when its
 * configuration or selectors name a revision.
 */
import { Either } from "effect"
import { isIP } from "../../config-model/schemas/common.js"
import { Annotations, Labels, MESH_DOMAIN } from "../../constants.js"
import { parseLabelSelector, selectorMatches } from "../../injection/label-selector.js"
import { DEFAULT_INJECTOR_NAME, DEFAULT_VALIDATOR_NAME } from "../../revision-tags/names.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, str, stringMap } from "../snapshot.js"
import { INJECTION_LABEL, PROXY_CONTAINERS } from "./injection.js"

const VALIDATOR_PREFIX = "mesh-validator"
const ADMISSION = "admissionregistration.k8s.io"

const webhookConfigs = (snapshot: Snapshot, kind: "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration") =>
  snapshot.ofKind(kind, ADMISSION)

const hooksOf = (config: Entry) => arr(config.body.webhooks).map(rec)

/**
 * A webhook label selector over labels: an absent selector matches everything, as does an empty
 * one; one that does not parse matches nothing (the orchestrator's rules).
 */
export const webhookSelectorMatches = (selector: unknown, labels: Readonly<Record<string, string>>): boolean => {
  if (selector === undefined || selector === null) return true
  const parsed = parseLabelSelector(selector)
  if (Either.isLeft(parsed)) return false
  return parsed.right.requirements.length === 0 || selectorMatches(parsed.right, labels)
}

/** Characters a URL host may not hold (the reference's URL parser rejects them). */
const BAD_HOST_CHARACTER = /[\s"#%/<>?@\\^`{|}]/
/** The reference's scheme grammar: a letter, then letters, digits, `+`, `-`, `.`. */
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/

/**
 * The host of a webhook URL as the reference's parser finds it: undefined when it does not
 * parse (control characters, a missing scheme before `:`, a bad host or port), "" when it has
 * no authority part.
 */
export const urlHost = (url: string): string | undefined => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is rejected
  if (/[\u0000-\u001f\u007f]/.test(url)) return undefined
  const scheme = SCHEME.exec(url)
  if (scheme === null) {
    if (url.startsWith(":")) return undefined
    const firstSegment = url.split("/")[0] ?? ""
    return firstSegment.includes(":") ? undefined : ""
  }
  const rest = url.slice(scheme[0].length)
  if (!rest.startsWith("//")) return ""
  const authority = rest.slice(2).split(/[/?#]/)[0] ?? ""
  const host = authority.slice(authority.lastIndexOf("@") + 1)
  let name = host
  let port = ""
  if (host.startsWith("[")) {
    const close = host.indexOf("]")
    if (close < 0) return undefined
    name = host.slice(1, close)
    const after = host.slice(close + 1)
    if (after !== "" && !after.startsWith(":")) return undefined
    port = after.slice(1)
  } else {
    const colon = host.lastIndexOf(":")
    if (colon >= 0) {
      name = host.slice(0, colon)
      port = host.slice(colon + 1)
    }
    if (BAD_HOST_CHARACTER.test(name)) return undefined
  }
  if (!/^\d*$/.test(port)) return undefined
  return name
}

const externalControlPlane = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const check = (config: Entry) => {
    for (const hook of hooksOf(config)) {
      const name = str(hook.name)
      const client = rec(hook.clientConfig)
      const url = client.url
      if (typeof url === "string") {
        const host = urlHost(url)
        if (host === undefined)
          out.push(
            message(
              MessageTypes.InvalidExternalControlPlaneConfig,
              config,
              `The hostname (${url}) that was provided for the webhook (${name}) to reach the ingress gateway on the external control plane cluster was provided in an invalid format. Traffic may not flow properly.`,
            ),
          )
        else if (isIP(host))
          out.push(
            message(
              MessageTypes.ExternalControlPlaneAddressIsNotAHostname,
              config,
              `The address (${url}) that was provided for the webhook (${name}) to reach the ingress gateway on the external control plane cluster is an IP address. This is not recommended for a production environment.`,
            ),
          )
      } else if (client.service === undefined || client.service === null)
        out.push(
          message(
            MessageTypes.InvalidExternalControlPlaneConfig,
            config,
            `The hostname () that was provided for the webhook (${name}) to reach the ingress gateway on the external control plane cluster is blank. Traffic may not flow properly.`,
          ),
        )
    }
  }
  for (const config of webhookConfigs(snapshot, "ValidatingWebhookConfiguration"))
    if (config.name === DEFAULT_VALIDATOR_NAME || config.name.startsWith(VALIDATOR_PREFIX)) check(config)
  for (const config of webhookConfigs(snapshot, "MutatingWebhookConfiguration"))
    if (config.name.startsWith(DEFAULT_INJECTOR_NAME)) check(config)
  return out
}

const isMeshWebhookName = (name: string): boolean => name.endsWith(MESH_DOMAIN)

/** The revisions a webhook configuration serves: its label and its selectors' `mesh.io/rev`. */
const revisionsOf = (config: Entry): ReadonlyArray<string> => {
  const out = new Set<string>()
  const label = config.labels[Labels.revision]
  if (label !== undefined) out.add(label)
  for (const hook of hooksOf(config))
    for (const field of ["namespaceSelector", "objectSelector"]) {
      const selector = rec(hook[field])
      const value = stringMap(selector.matchLabels)[Labels.revision]
      if (value !== undefined) out.add(value)
      for (const expression of arr(selector.matchExpressions).map(rec))
        if (str(expression.key) === Labels.revision)
          for (const v of arr(expression.values)) if (typeof v === "string") out.add(v)
    }
  return [...out]
}

/** The label sets a namespace or pod may carry to choose injection, for each revision known. */
const labelCombinations = (key: string, on: string, off: string, revisions: ReadonlyArray<string>) => {
  const base: ReadonlyArray<Record<string, string>> = [{}, { [key]: on }, { [key]: off }]
  return [...base, ...revisions.flatMap((revision) => base.map((b) => ({ ...b, [Labels.revision]: revision })))]
}

const invalidWebhooks = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const hooks: Array<{
    readonly config: Entry
    readonly id: string
    readonly hook: Readonly<Record<string, unknown>>
  }> = []
  const revisions = new Set<string>()
  for (const config of webhookConfigs(snapshot, "MutatingWebhookConfiguration")) {
    const own = revisionsOf(config)
    if (own.length === 0 && !hooksOf(config).some((h) => isMeshWebhookName(str(h.name)))) continue
    for (const r of own) revisions.add(r)
    for (const hook of hooksOf(config)) hooks.push({ config, id: `${config.name}/${str(hook.name)}`, hook })
  }
  const known = [...revisions].sort()
  const out: Array<Message> = []
  const reported = new Set<string>()
  const report = (config: Entry, text: string) => {
    const key = `${config.name}\u0000${text}`
    if (reported.has(key)) return
    reported.add(key)
    out.push(message(MessageTypes.InvalidWebhook, config, text))
  }
  for (const namespaceLabels of labelCombinations(INJECTION_LABEL, "enabled", "disabled", known))
    for (const objectLabels of labelCombinations(Annotations.sidecarInject, "true", "false", known)) {
      const matching = hooks.filter(
        ({ hook }) =>
          webhookSelectorMatches(hook.namespaceSelector, namespaceLabels) &&
          webhookSelectorMatches(hook.objectSelector, objectLabels),
      )
      if (new Set(matching.map((m) => m.id)).size < 2) continue
      for (const m of matching) {
        const others = [...new Set(matching.filter((o) => o.id !== m.id).map((o) => o.id))].sort()
        report(
          m.config,
          `Webhook overlaps with others: [${others.join(" ")}]. This may cause injection to occur twice.`,
        )
      }
    }
  const services = new Set(snapshot.ofKind("Service", "").map((s) => `${s.namespace}/${s.name}`))
  for (const { config, hook } of hooks) {
    const service = rec(rec(hook.clientConfig).service)
    if (Object.keys(service).length === 0) continue
    const name = `${str(service.namespace)}/${str(service.name)}`
    if (!services.has(name)) report(config, `Injector refers to a control plane service that does not exist: ${name}.`)
  }
  return out
}

const AUTO_IMAGE = "auto"

const hasAutoImage = (podSpec: Readonly<Record<string, unknown>>): boolean =>
  arr(podSpec.containers)
    .map(rec)
    .some((c) => PROXY_CONTAINERS.has(str(c.name)) && str(c.image) === AUTO_IMAGE)

const imageAuto = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const meshHooks = snapshot
    .ofKind("MutatingWebhookConfiguration", ADMISSION)
    .flatMap((config) => hooksOf(config).filter((h) => isMeshWebhookName(str(h.name))))
  const namespaces = new Map(snapshot.ofKind("Namespace", "").map((n) => [n.name, n.labels]))
  const out: Array<Message> = []
  const text = (kind: string, name: string) =>
    `${kind} ${name} contains \`image: auto\` but does not match any mesh injection webhook selectors.`
  for (const pod of snapshot.ofKind("Pod", ""))
    if (hasAutoImage(rec(pod.body.spec)))
      out.push(message(MessageTypes.ImageAutoWithoutInjectionError, pod, text("Pod", pod.name)))
  for (const deployment of snapshot.ofKind("Deployment", "apps")) {
    const template = rec(rec(deployment.body.spec).template)
    if (!hasAutoImage(rec(template.spec))) continue
    const namespaceLabels = namespaces.get(deployment.namespace === "" ? "default" : deployment.namespace) ?? {}
    const podLabels = stringMap(rec(template.metadata).labels)
    const injected = meshHooks.some(
      (h) =>
        webhookSelectorMatches(h.namespaceSelector, namespaceLabels) &&
        webhookSelectorMatches(h.objectSelector, podLabels),
    )
    if (!injected)
      out.push(message(MessageTypes.ImageAutoWithoutInjectionWarning, deployment, text("Deployment", deployment.name)))
  }
  return out
}

export const webhookAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "externalcontrolplane.ExternalControlPlaneAnalyzer",
    description: "Checks that the remote mesh installation's webhooks reference an external control plane",
    types: [MessageTypes.InvalidExternalControlPlaneConfig, MessageTypes.ExternalControlPlaneAddressIsNotAHostname],
    run: externalControlPlane,
  },
  {
    name: "webhook.Analyzer",
    description: "Checks the validity of the mesh's webhooks",
    types: [MessageTypes.InvalidWebhook],
    run: invalidWebhooks,
  },
  {
    name: "injection.ImageAutoAnalyzer",
    description: "Makes sure that Pods and Deployments with `image: auto` are going to be injected",
    types: [MessageTypes.ImageAutoWithoutInjectionWarning, MessageTypes.ImageAutoWithoutInjectionError],
    run: imageAuto,
  },
]
