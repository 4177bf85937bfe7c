/**
 * The operator resource (`install.mesh.io/v1alpha1`, kind `IstioOperator`; the upstream group
 * `install.istio.io` is accepted as an alias): the shape of its `spec` as an Effect Schema. Fields
 * the renderer reads are typed; `values` sections also keep keys they do not type (the reference
 * chart has hundreds), while the spec and the components refuse unknown fields so a misspelt
 * field is an error naming it rather than a silently ignored setting.
 */
import { Schema } from "effect"
import { MESH_DOMAIN } from "../constants.js"

export const OPERATOR_GROUP = `install.${MESH_DOMAIN}`
export const OPERATOR_GROUP_ALIASES = [OPERATOR_GROUP, "install.istio.io"] as const
export const OPERATOR_VERSION = "v1alpha1"
export const OPERATOR_KIND = "IstioOperator"

const FreeForm = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })
const Quantity = Schema.Union(Schema.String, Schema.Number)
const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

export const ResourceRequirements = Schema.Struct({
  requests: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
  limits: Schema.optional(Schema.Record({ key: Schema.String, value: Quantity })),
})

export const EnvVar = Schema.Struct({
  name: Schema.String,
  value: Schema.optional(Schema.String),
  valueFrom: Schema.optional(FreeForm),
})

export const HpaSpec = Schema.Struct({
  minReplicas: Schema.optional(NonNegativeInt),
  maxReplicas: Schema.optional(NonNegativeInt),
  metrics: Schema.optional(Schema.Array(FreeForm)),
  behavior: Schema.optional(FreeForm),
  scaleTargetRef: Schema.optional(FreeForm),
})

/** Orchestrator settings of one component (the reference's `k8s` block). */
export const K8sSettings = Schema.Struct({
  resources: Schema.optional(ResourceRequirements),
  replicaCount: Schema.optional(NonNegativeInt),
  hpaSpec: Schema.optional(HpaSpec),
  podDisruptionBudget: Schema.optional(FreeForm),
  env: Schema.optional(Schema.Array(EnvVar)),
  nodeSelector: Schema.optional(StringMap),
  tolerations: Schema.optional(Schema.Array(FreeForm)),
  affinity: Schema.optional(FreeForm),
  podAnnotations: Schema.optional(StringMap),
  serviceAnnotations: Schema.optional(StringMap),
  service: Schema.optional(FreeForm),
  strategy: Schema.optional(FreeForm),
  securityContext: Schema.optional(FreeForm),
  imagePullPolicy: Schema.optional(Schema.Literal("Always", "IfNotPresent", "Never")),
  priorityClassName: Schema.optional(Schema.String),
  readinessProbe: Schema.optional(FreeForm),
  volumes: Schema.optional(Schema.Array(FreeForm)),
  volumeMounts: Schema.optional(Schema.Array(FreeForm)),
}).annotations({ parseOptions: { onExcessProperty: "error" } })

export const Component = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  namespace: Schema.optional(Schema.String),
  hub: Schema.optional(Schema.String),
  tag: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  k8s: Schema.optional(K8sSettings),
})

export const GatewayComponent = Schema.Struct({
  ...Component.fields,
  name: Schema.String.pipe(Schema.pattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)),
  label: Schema.optional(StringMap),
})

export const Components = Schema.Struct({
  base: Schema.optional(Component),
  pilot: Schema.optional(Component),
  cni: Schema.optional(Component),
  ztunnel: Schema.optional(Component),
  ingressGateways: Schema.optional(Schema.Array(GatewayComponent)),
  egressGateways: Schema.optional(Schema.Array(GatewayComponent)),
})

/** A typed section of `values` that keeps the keys it does not type. */
const section = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields, FreeForm)

export const Values = section({
  global: Schema.optional(
    section({
      hub: Schema.optional(Schema.String),
      tag: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
      imagePullPolicy: Schema.optional(Schema.Literal("", "Always", "IfNotPresent", "Never")),
      meshID: Schema.optional(Schema.String),
      network: Schema.optional(Schema.String),
      istioNamespace: Schema.optional(Schema.String),
      logAsJson: Schema.optional(Schema.Boolean),
      multiCluster: Schema.optional(section({ clusterName: Schema.optional(Schema.String) })),
      proxy: Schema.optional(section({ image: Schema.optional(Schema.String) })),
      defaultPodDisruptionBudget: Schema.optional(section({ enabled: Schema.optional(Schema.Boolean) })),
    }),
  ),
  pilot: Schema.optional(
    section({
      image: Schema.optional(Schema.String),
      autoscaleEnabled: Schema.optional(Schema.Boolean),
      autoscaleMin: Schema.optional(NonNegativeInt),
      autoscaleMax: Schema.optional(NonNegativeInt),
      cpu: Schema.optional(section({ targetAverageUtilization: Schema.optional(NonNegativeInt) })),
      replicaCount: Schema.optional(NonNegativeInt),
      traceSampling: Schema.optional(Schema.Number.pipe(Schema.between(0, 100))),
      resources: Schema.optional(ResourceRequirements),
      env: Schema.optional(
        Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
      ),
    }),
  ),
  sidecarInjectorWebhook: Schema.optional(
    section({
      rewriteAppHTTPProbe: Schema.optional(Schema.Boolean),
      enableNamespacesByDefault: Schema.optional(Schema.Boolean),
    }),
  ),
  cni: Schema.optional(
    section({
      image: Schema.optional(Schema.String),
      chained: Schema.optional(Schema.Boolean),
      cniBinDir: Schema.optional(Schema.String),
      cniConfDir: Schema.optional(Schema.String),
      logLevel: Schema.optional(Schema.String),
      ambient: Schema.optional(section({ enabled: Schema.optional(Schema.Boolean) })),
      repair: Schema.optional(section({ enabled: Schema.optional(Schema.Boolean) })),
    }),
  ),
  gateways: Schema.optional(FreeForm),
})

/** The operator resource's `spec`. */
export const OperatorSpec = Schema.Struct({
  profile: Schema.optional(Schema.String),
  hub: Schema.optional(Schema.String),
  tag: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  revision: Schema.optional(Schema.String),
  namespace: Schema.optional(Schema.String),
  installPackagePath: Schema.optional(Schema.String),
  meshConfig: Schema.optional(FreeForm),
  values: Schema.optional(Values),
  unvalidatedValues: Schema.optional(FreeForm),
  components: Schema.optional(Components),
})
export type OperatorSpec = typeof OperatorSpec.Type
export type Component = typeof Component.Type
export type GatewayComponent = typeof GatewayComponent.Type
export type K8sSettings = typeof K8sSettings.Type
