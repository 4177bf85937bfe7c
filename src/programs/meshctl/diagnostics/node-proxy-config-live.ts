/**
 * `meshctl node-proxy-config` against a running node proxy (loaded only without `--file`): which
 * node proxy, then its admin `/config_dump`. Node proxies are the pods labelled
 * `app=node-proxy` in the mesh namespace (`-i`), one per node (the reference's ztunnel
 * DaemonSet). A pod argument names a node proxy, or a workload pod: then the proxy on the
 * workload's node is read and the output narrowed to that workload. `--node` reads the proxy
 * on that node. Otherwise the first running node proxy by name (for `connections`, which is
 * per node, only when exactly one runs). As proxy-config does, the admin port is reached at the
 * pod's IP.
 */
import { Data, Effect } from "effect"
import type { OrchPod } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"
import { getPodByRef, ipOf } from "../pod-lookup.js"
import { adminRequest, parsePodRef } from "./proxy-config-live.js"

export class NodeProxyUnreachable extends Data.TaggedError("NodeProxyUnreachable")<{ readonly message: string }> {}

const fail = (message: string) => new NodeProxyUnreachable({ message })

/** The label every node proxy pod carries (the reference's `app=ztunnel`). */
export const NODE_PROXY_SELECTOR = "app=node-proxy"

export interface NodeProxyTarget {
  /** `name.namespace` of the node proxy read. */
  readonly proxy: string
  /** The workload pod the user named, when it was not a node proxy. */
  readonly workload?: { readonly name: string; readonly namespace: string }
  readonly dump: string
}

const isNodeProxy = (pod: OrchPod, meshNamespace: string): boolean =>
  pod.metadata.namespace === meshNamespace && pod.metadata.labels?.app === "node-proxy"

export interface LiveQuery {
  readonly pod: string
  readonly node: string
  readonly proxyAdminPort: number
  readonly global: GlobalOptions
  /** Refuse to pick among several node proxies (connections are per node). */
  readonly single: boolean
}

/** The dump of the node proxy the query names, and the workload it narrows to. */
export const fetchNodeProxyDump = (query: LiveQuery) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { global } = query
      const meshNamespace = global.meshNamespace
      const client = yield* orchestratorClient(global).pipe(Effect.mapError((e) => fail(e.message)))
      const proxiesOn = (node: string) =>
        client
          .list<OrchPod>(Resources.pods, {
            namespace: meshNamespace,
            labelSelector: NODE_PROXY_SELECTOR,
            ...(node === "" ? {} : { fieldSelector: `spec.nodeName=${node}` }),
          })
          .pipe(
            Effect.mapError((e) => fail(`cannot list node proxies in ${meshNamespace}: ${e.message}`)),
            Effect.map((page) =>
              page.items
                .filter((p) => (p.status?.phase ?? "Running") === "Running" && ipOf(p) !== "")
                .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? "")),
            ),
          )
      const firstOn = (node: string, why: string) =>
        Effect.flatMap(proxiesOn(node), (proxies) => {
          const first = proxies[0]
          if (first === undefined) {
            return Effect.fail(
              fail(
                `no running node proxy (${NODE_PROXY_SELECTOR}) in ${meshNamespace}${node === "" ? "" : ` on node ${node}`}${why}`,
              ),
            )
          }
          if (node === "" && query.single && proxies.length > 1) {
            return Effect.fail(
              fail(
                `${proxies.length} node proxies run (${proxies.map((p) => p.metadata.name).join(", ")}): name one, or a pod, or pass --node`,
              ),
            )
          }
          return Effect.succeed(first)
        })

      let proxy: OrchPod
      let workload: NodeProxyTarget["workload"]
      if (query.pod !== "") {
        const ref = parsePodRef(query.pod, global.namespace)
        if (typeof ref === "string") return yield* fail(ref)
        const pod = yield* getPodByRef(client, ref).pipe(Effect.mapError(fail))
        if (isNodeProxy(pod, meshNamespace)) {
          proxy = pod
        } else {
          const node = pod.spec?.nodeName ?? ""
          if (node === "") return yield* fail(`pod ${ref.name}.${ref.namespace} is not scheduled to a node`)
          workload = { name: ref.name, namespace: ref.namespace }
          proxy = yield* firstOn(node, ` for pod ${ref.name}.${ref.namespace}`)
        }
      } else {
        proxy = yield* firstOn(query.node, "")
      }
      const ip = ipOf(proxy)
      const name = `${proxy.metadata.name}.${proxy.metadata.namespace}`
      if (ip === "") return yield* fail(`node proxy ${name} has no IP yet`)
      const dump = yield* adminRequest(ip, query.proxyAdminPort, "GET", "/config_dump", global.orchclientTimeout).pipe(
        Effect.mapError((e) => fail(`node proxy ${name}: ${e.message}`)),
      )
      return { proxy: name, dump, ...(workload === undefined ? {} : { workload }) } satisfies NodeProxyTarget
    }),
  )
