/**
 * The configuration of the `/inject` webhook in mesh-discovery: its slice of `discoveryEnv` and
 * where the injector's own configuration comes from (`--namespace` for the injector ConfigMap,
 * the mounted `config`/`values` files' directory).
 */
import { discoveryEnv } from "../config/discovery-env.js"
import { EnvConfig } from "../config/env-config.js"
import { SYSTEM_NAMESPACE } from "../constants.js"

/** The injector ConfigMap (keys `config` and `values`) of the default revision. */
export const INJECTOR_CONFIGMAP = "mesh-sidecar-injector"

/** Where the reference mounts the injector's `config` and `values` (relative to the working directory). */
export const DEFAULT_INJECT_DIR = "./var/lib/mesh/inject"

/** The injector ConfigMap of a revision: `mesh-sidecar-injector`, or `mesh-sidecar-injector-<revision>`. */
export const injectorConfigMapName = (revision: string): string =>
  revision === "" || revision === "default" ? INJECTOR_CONFIGMAP : `${INJECTOR_CONFIGMAP}-${revision}`

export interface InjectionWebhookFields {
  /** `--namespace`: where the injector ConfigMap is. */
  readonly namespace: string
  /** A directory holding `config` and `values`; when `config` is there, the ConfigMap is not read. */
  readonly injectDir: string
}

export class InjectionWebhookConfig extends EnvConfig<InjectionWebhookConfig, InjectionWebhookFields>()(
  "mesh/InjectionWebhookConfig",
  {
    table: discoveryEnv,
    names: ["REVISION", "ENABLE_NATIVE_SIDECARS", "COMPLIANCE_POLICY"],
    fields: { namespace: SYSTEM_NAMESPACE, injectDir: DEFAULT_INJECT_DIR },
  },
) {}
