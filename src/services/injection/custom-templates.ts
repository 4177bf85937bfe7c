/**
 * Applies the injector ConfigMap's own templates a pod selects (for example one mounting a CSI
 * workload socket): each is rendered in the reference's template language over the pod, values,
 * mesh and proxy config (custom-template-data.ts), read as a partial pod (YAML, within the
 * config readers' bounds) and merged into the injected pod as the reference merges templates
 * (strategic-merge.ts). They run after the built-in templates, in the order selected.
 *
 * A template that fails to run (an error, or a render bound: template/exec.ts) or renders
 * something other than a partial pod refuses the pod, naming the template, as the reference
 * fails the injection. The status annotation gains the containers, volumes and pull secrets a
 * template added (not those of the pod it only changed: re-injection removes what the status
 * lists). With native sidecars, a template's `mesh-proxy` container merges into the proxy where
 * it is, among the init containers.
 */
import { Either } from "effect"
import { asObject, asObjects, asStringMap, isObject, type Obj, stringAt } from "../orchestrator/json.js"
import { parseYamlObject } from "./config.js"
import type { InjectionInput, Json } from "./contract.js"
import { customTemplateData } from "./custom-template-data.js"
import { ContainerNames, InjectAnnotations } from "./names.js"
import { workloadOwnerOf } from "./owner.js"
import type { PodSettings } from "./pod-settings.js"
import { proxyConfigEnvValue } from "./proxy-config.js"
import { parseStatus, renderStatus } from "./status.js"
import { strategicMerge } from "./strategic-merge.js"
import { renderTemplate, templateFunctions } from "./template/index.js"

const names = (list: unknown): ReadonlyArray<string> =>
  asObjects(list)
    .map((o) => stringAt(o.name))
    .filter((n): n is string => n !== undefined)

/** A rendered template as a partial pod; a Left says why it is not one. */
const readOverlay = (name: string, text: string): Either.Either<Obj, string> =>
  Either.flatMap(parseYamlObject(text, `template "${name}" output`), (overlay) => {
    for (const key of ["metadata", "spec"] as const) {
      if (overlay[key] !== undefined && overlay[key] !== null && !isObject(overlay[key])) {
        return Either.left(`template "${name}" output: ${key} must be a mapping`)
      }
    }
    return Either.right(overlay)
  })

/** With the proxy among the init containers, the template's `mesh-proxy` goes there too. */
const placeProxy = (pod: Obj, overlay: Obj): Obj => {
  const spec = asObject(overlay.spec)
  const proxyInInit = names(asObject(pod.spec).initContainers).includes(ContainerNames.proxy)
  const declared = asObjects(spec.containers).find((c) => c.name === ContainerNames.proxy)
  if (!proxyInInit || declared === undefined) return overlay
  return {
    ...overlay,
    spec: {
      ...spec,
      containers: asObjects(spec.containers).filter((c) => c !== declared),
      initContainers: [...asObjects(spec.initContainers), declared],
    },
  }
}

/** The status annotation with what `overlay` added to the original pod. */
const withAddedStatus = (pod: Obj, original: Obj, overlay: Obj): Obj => {
  const metadata = asObject(pod.metadata)
  const annotations = asStringMap(metadata.annotations)
  const current = parseStatus(annotations[InjectAnnotations.status] ?? "")
  if (current === undefined) return pod
  const spec = asObject(overlay.spec)
  const originalSpec = asObject(original.spec)
  const add = (listed: ReadonlyArray<string>, fromOverlay: unknown, inOriginal: ReadonlyArray<string>) => [
    ...listed,
    ...names(fromOverlay).filter((n) => !listed.includes(n) && !inOriginal.includes(n)),
  ]
  const originalContainers = [...names(originalSpec.containers), ...names(originalSpec.initContainers)]
  const status = renderStatus({
    initContainers: add(current.initContainers, spec.initContainers, originalContainers),
    containers: add(current.containers, spec.containers, originalContainers),
    volumes: add(current.volumes, spec.volumes, names(originalSpec.volumes)),
    imagePullSecrets: add(current.imagePullSecrets, spec.imagePullSecrets, names(originalSpec.imagePullSecrets)),
    revision: current.revision,
  })
  return { ...pod, metadata: { ...metadata, annotations: { ...annotations, [InjectAnnotations.status]: status } } }
}

export const applyCustomTemplates = (
  input: InjectionInput,
  settings: PodSettings,
  injected: Json,
): Either.Either<Json, string> => {
  // The common case costs nothing: no template data is built unless a template runs.
  if (settings.customTemplates.length === 0) return Either.right(injected)
  const templates = input.config.executableTemplates ?? {}
  const owner = input.owner ?? workloadOwnerOf(input.pod)
  const original = asObject(input.pod)
  let pod = injected as Obj
  for (const name of settings.customTemplates) {
    const template = templates[name]
    if (template === undefined) return Either.left(`template "${name}" is not in the injector config`)
    // Fresh data for each template: `set` may change the dicts a template is given.
    const { data, structs, proxyConfig } = customTemplateData(input, settings, owner)
    const functions = templateFunctions({
      env: {},
      protoJson: (value) => (value === proxyConfig ? proxyConfigEnvValue(settings.proxyConfig) : undefined),
      proxyContainerName: ContainerNames.proxy,
    })
    const rendered = renderTemplate(template, data, { functions, structs })
    if (Either.isLeft(rendered)) return Either.left(`template "${name}" failed: ${rendered.left.message}`)
    const overlay = readOverlay(name, rendered.right)
    if (Either.isLeft(overlay)) return Either.left(overlay.left)
    const placed = placeProxy(pod, overlay.right)
    pod = withAddedStatus(strategicMerge(pod, placed), original, placed)
  }
  return Either.right(pod)
}
