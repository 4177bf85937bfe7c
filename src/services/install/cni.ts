/**
 * The install-cni DaemonSet (`components.cni.enabled`): one pod per node that installs the
 * mesh-cni plugin into the host's CNI directories and repairs pods hit by the CNI race, with
 * the RBAC that needs (read pods, nodes, namespaces; delete or label broken pods).
 */
import type { Obj } from "../orchestrator/json.js"
import { rbacFor } from "./control-plane.js"
import { CNI_NAME, CNI_SERVICE_ACCOUNT, componentLabels, type InstallNames } from "./names.js"
import type { ResolvedOperator } from "./resolve.js"
import { fieldEnv, imageOf, mergeEnv, meta, podSettings } from "./workload.js"

const cniRules: ReadonlyArray<Obj> = [
  { apiGroups: [""], resources: ["pods", "nodes", "namespaces"], verbs: ["get", "list", "watch"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["delete", "patch", "update"] },
]

export const cniObjects = (op: ResolvedOperator, names: InstallNames): ReadonlyArray<Obj> => {
  const cni = op.spec.components?.cni
  if (cni?.enabled !== true) return []
  const values = op.spec.values?.cni
  const ns = cni.namespace ?? op.namespace
  const k8s = cni.k8s
  const labels = componentLabels(names, "Cni")
  const selector = { "k8s-app": CNI_NAME }
  const binDir = values?.cniBinDir ?? "/opt/cni/bin"
  const confDir = values?.cniConfDir ?? "/etc/cni/net.d"
  const env = mergeEnv(
    [
      { name: "CNI_NET_DIR", value: confDir },
      { name: "CHAINED_CNI_PLUGIN", value: String(values?.chained ?? true) },
      { name: "REPAIR_ENABLED", value: String(values?.repair?.enabled ?? true) },
      { name: "AMBIENT_ENABLED", value: String(values?.ambient?.enabled ?? false) },
      fieldEnv("NODE_NAME", "spec.nodeName"),
      fieldEnv("POD_NAMESPACE", "metadata.namespace"),
    ],
    k8s?.env,
  )
  const daemonSet: Obj = {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: meta(CNI_NAME, ns, labels),
    spec: {
      selector: { matchLabels: selector },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: {
          labels: { ...selector, "sidecar.mesh.io/inject": "false" },
          annotations: { ...k8s?.podAnnotations },
        },
        spec: {
          serviceAccountName: CNI_SERVICE_ACCOUNT,
          ...podSettings(k8s),
          tolerations: structuredClone(k8s?.tolerations) ?? [
            { effect: "NoSchedule", operator: "Exists" },
            { key: "CriticalAddonsOnly", operator: "Exists" },
            { effect: "NoExecute", operator: "Exists" },
          ],
          priorityClassName: k8s?.priorityClassName ?? "system-node-critical",
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: "install-cni",
              image: imageOf(cni.hub ?? op.hub, values?.image ?? "install-cni", String(cni.tag ?? op.tag)),
              args: ["--log_output_level", `default:${values?.logLevel ?? "info"}`],
              readinessProbe: { httpGet: { path: "/readyz", port: 8000 } },
              env,
              resources: structuredClone(k8s?.resources) ?? { requests: { cpu: "100m", memory: "100Mi" } },
              securityContext: { privileged: true, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
              volumeMounts: [
                { name: "cni-bin-dir", mountPath: "/host/opt/cni/bin" },
                { name: "cni-net-dir", mountPath: "/host/etc/cni/net.d" },
                { name: "cni-log-dir", mountPath: "/var/run/mesh-cni" },
              ],
            },
          ],
          volumes: [
            { name: "cni-bin-dir", hostPath: { path: binDir } },
            { name: "cni-net-dir", hostPath: { path: confDir } },
            { name: "cni-log-dir", hostPath: { path: "/var/run/mesh-cni" } },
          ],
        },
      },
    },
  }
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(CNI_SERVICE_ACCOUNT, ns, labels) },
    ...rbacFor(CNI_SERVICE_ACCOUNT, ns, `mesh-cni${names.suffix}`, undefined, labels, cniRules, []),
    daemonSet,
  ]
}
