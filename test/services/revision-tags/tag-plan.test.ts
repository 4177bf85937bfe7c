/**
 * Planning `tag generate`/`tag set` from the injector webhooks `meshctl manifest generate`
 * renders: the tag's webhooks copy the revision's client config and rules, and their selectors
 * (evaluated here as the orchestrator would) send exactly the namespaces and pods of spec part 3
 * §1 rule 1 to the tag; existing tags are refused without --overwrite (§7 rule 2).
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { installNames } from "../../../src/services/install/names.js"
import { resolveOperator } from "../../../src/services/install/resolve.js"
import { injectionWebhookConfiguration } from "../../../src/services/install/webhooks.js"
import { asObject, asObjects, type Obj } from "../../../src/services/orchestrator/json.js"
import { planTag, type TagClusterView, type TagRequest } from "../../../src/services/revision-tags/tag-plan.js"
import { tagWebhookConfiguration } from "../../../src/services/revision-tags/tag-webhooks.js"

const installedInjector = (revision: string): Obj => {
  const op = Either.getOrThrow(resolveOperator({ files: [], sets: [], revision }))
  const webhook = injectionWebhookConfiguration(op, installNames(op))
  // As in a cluster: the control plane has patched its CA bundle in.
  for (const w of asObjects(webhook.webhooks)) asObject(w.clientConfig).caBundle = "Q0EtY2FuYXJ5"
  return webhook
}

const canary = installedInjector("canary")
const stableDefault = installedInjector("")

const request = (over: Partial<TagRequest> = {}): TagRequest => ({
  tag: "prod",
  revision: "canary",
  meshNamespace: "mesh-system",
  webhookName: "",
  overwrite: false,
  autoInjectNamespaces: false,
  ...over,
})

const view = (over: Partial<TagClusterView> = {}): TagClusterView => ({
  taggedAlready: [],
  revisionsNamedLikeTag: [],
  revisionInjectors: [canary],
  defaultInjector: undefined,
  defaultRevisionInjectors: [],
  ...over,
})

type Labels = Record<string, string>
/** A LabelSelector's matchExpressions/matchLabels as the orchestrator evaluates them. */
const matches = (selector: unknown, labels: Labels): boolean => {
  const s = asObject(selector)
  const byLabel = Object.entries(asObject(s.matchLabels)).every(([k, v]) => labels[k] === v)
  return (
    byLabel &&
    asObjects(s.matchExpressions).every((e) => {
      const key = String(e.key)
      const values = (e.values ?? []) as Array<string>
      switch (e.operator) {
        case "In":
          return key in labels && values.includes(labels[key]!)
        case "NotIn":
          return !(key in labels && values.includes(labels[key]!))
        case "Exists":
          return key in labels
        case "DoesNotExist":
          return !(key in labels)
        default:
          throw new Error(`operator ${String(e.operator)}`)
      }
    })
  )
}

/** The webhooks of a configuration that would inject a pod with `pod` labels in a namespace with `ns` labels. */
const injecting = (configuration: Obj, ns: Labels, pod: Labels = {}): Array<string> =>
  asObjects(configuration.webhooks)
    .filter((w) => matches(w.namespaceSelector, ns) && matches(w.objectSelector, pod))
    .map((w) => String(w.name))

const planned = (r: TagRequest, v: TagClusterView) => Either.getOrThrowWith(planTag(r, v), (m) => new Error(m))

describe("planTag", () => {
  it("copies the revision's webhook and labels the tag with tag and revision", () => {
    const plan = planned(request(), view())
    expect(plan.apply).toHaveLength(1)
    const tag = plan.apply[0]!
    expect(tag.kind).toBe("MutatingWebhookConfiguration")
    expect(asObject(tag.metadata).name).toBe("mesh-revision-tag-prod")
    expect(asObject(tag.metadata).labels).toMatchObject({ "mesh.io/tag": "prod", "mesh.io/rev": "canary" })
    const source = asObjects(canary.webhooks)[0]!
    for (const webhook of asObjects(tag.webhooks)) {
      expect(webhook.clientConfig).toEqual(source.clientConfig)
      expect(webhook.rules).toEqual(source.rules)
      expect(webhook.failurePolicy).toBe(source.failurePolicy)
    }
    expect(asObject(asObject(asObjects(tag.webhooks)[0]!.clientConfig).service).name).toBe("meshd-canary")
    expect(plan.deactivate).toBeUndefined()
  })

  it("injects namespaces labelled with the tag, and tag-labelled pods in unlabelled namespaces, nothing else", () => {
    const tag = planned(request(), view()).apply[0]!
    expect(injecting(tag, { "mesh.io/rev": "prod" })).toEqual(["rev.namespace.sidecar-injector.mesh.io"])
    expect(injecting(tag, { "mesh.io/rev": "prod" }, { "sidecar.mesh.io/inject": "false" })).toEqual([])
    expect(injecting(tag, {}, { "mesh.io/rev": "prod" })).toEqual(["rev.object.sidecar-injector.mesh.io"])
    expect(injecting(tag, { "mesh.io/rev": "canary" })).toEqual([])
    expect(injecting(tag, { "mesh-injection": "enabled" })).toEqual([])
    expect(injecting(tag, {}, { "sidecar.mesh.io/inject": "true" })).toEqual([])
  })

  it("makes the default tag serve the revision-less labels and validate cluster-wide, deactivating the old default", () => {
    const plan = planned(
      request({ tag: "default" }),
      view({ defaultInjector: stableDefault, defaultRevisionInjectors: [stableDefault] }),
    )
    const [tag, validator] = plan.apply
    expect(injecting(tag!, { "mesh-injection": "enabled" })).toEqual(["namespace.sidecar-injector.mesh.io"])
    expect(injecting(tag!, {}, { "sidecar.mesh.io/inject": "true" })).toEqual(["object.sidecar-injector.mesh.io"])
    expect(injecting(tag!, { "mesh.io/rev": "default" })).toEqual(["rev.namespace.sidecar-injector.mesh.io"])
    expect(injecting(tag!, {})).toEqual([])
    expect(validator!.kind).toBe("ValidatingWebhookConfiguration")
    expect(asObject(validator!.metadata)).toMatchObject({
      name: "meshd-default-validator",
      labels: { "mesh.io/rev": "canary" },
    })
    const webhook = asObjects(validator!.webhooks)[0]!
    expect(asObject(webhook.clientConfig).service).toEqual({
      name: "meshd-canary",
      namespace: "mesh-system",
      path: "/validate",
      port: 443,
    })
    expect(asObject(webhook.clientConfig).caBundle).toBe("Q0EtY2FuYXJ5")
    expect(asObject(asObjects(webhook.rules)[0]).apiGroups).toContain("networking.mesh.io")
    // The default install's own injector now matches nothing; the tag alone serves the default labels.
    const old = plan.deactivate!
    expect(asObject(old.metadata).name).toBe("mesh-sidecar-injector")
    expect(injecting(old, { "mesh-injection": "enabled" })).toEqual([])
    expect(injecting(old, { "mesh.io/rev": "default" })).toEqual([])
    expect(asObjects(old.webhooks)).toHaveLength(asObjects(stableDefault.webhooks).length)
  })

  it("injects every unlabelled namespace but the orchestrator's own with --auto-inject-namespaces (default tag only)", () => {
    const auto = planned(request({ tag: "default", autoInjectNamespaces: true }), view()).apply[0]!
    expect(injecting(auto, { "kubernetes.io/metadata.name": "shop" })).toEqual(["auto.sidecar-injector.mesh.io"])
    expect(injecting(auto, { "kubernetes.io/metadata.name": "kube-system" })).toEqual([])
    expect(injecting(auto, { "mesh-injection": "disabled" })).toEqual([])
    const other = planned(request({ autoInjectNamespaces: true }), view()).apply[0]!
    expect(injecting(other, { "kubernetes.io/metadata.name": "shop" })).toEqual([])
  })

  it("refuses to replace an existing tag without --overwrite, naming the revision it references", () => {
    const existing = tagWebhookConfiguration({
      tag: "prod",
      canonical: installedInjector("stable"),
      name: "old-prod",
      autoInjectNamespaces: false,
    })
    const refused = planTag(request(), view({ taggedAlready: [existing] }))
    expect(Either.isLeft(refused)).toBe(true)
    expect(Either.getLeft(refused).pipe((m) => m._tag === "Some" && m.value)).toMatch(
      /revision tag "prod" already exists and references revision "stable".*--overwrite/,
    )
    const replaced = planned(request({ overwrite: true }), view({ taggedAlready: [existing] }))
    expect(asObject(replaced.apply[0]!.metadata).labels).toMatchObject({ "mesh.io/rev": "canary" })
    expect(replaced.removeStale).toEqual(["old-prod"])
  })

  it("refuses a tag named like an installed revision, a missing revision and an ambiguous one", () => {
    const left = (r: TagRequest, v: TagClusterView) =>
      Either.match(planTag(r, v), { onLeft: (m) => m, onRight: () => "planned" })
    expect(left(request({ tag: "canary" }), view({ revisionsNamedLikeTag: [canary] }))).toMatch(
      /cannot create revision tag "canary": a control plane revision of the same name exists/,
    )
    expect(left(request({ revision: "nope" }), view({ revisionInjectors: [] }))).toMatch(
      /cannot find a MutatingWebhookConfiguration of revision "nope" \(label mesh\.io\/rev=nope\)/,
    )
    expect(left(request(), view({ revisionInjectors: [canary, canary] }))).toMatch(/found several/)
    expect(left(request({ revision: "" }), view())).toMatch(/--revision\/-r is required/)
  })

  it("falls back to mesh-sidecar-injector for the default revision, and honours --webhook-name and the mesh namespace", () => {
    const plan = planned(
      request({ revision: "default" }),
      view({ revisionInjectors: [], defaultInjector: stableDefault }),
    )
    expect(asObject(plan.apply[0]!.metadata).labels).toMatchObject({ "mesh.io/rev": "default" })
    const named = planned(request({ webhookName: "my-hook" }), view()).apply[0]!
    expect(asObject(named.metadata).name).toBe("my-hook")
    const elsewhere = planned(request({ meshNamespace: "mesh-two" }), view()).apply[0]!
    expect(asObject(elsewhere.metadata).name).toBe("mesh-revision-tag-prod-mesh-two")
  })
})
