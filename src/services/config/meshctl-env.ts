/**
 * Environment variables of `meshctl`. Spec 002 documents none: each is beyond spec, read once
 * when a command starts (through `MeshctlEnv`) instead of wherever it is used.
 */

import { type EnvTable, env } from "./env.js"
import { EnvConfig } from "./env-config.js"
import { terminalEnv } from "./terminal-env.js"

export const meshctlEnv = {
  ...terminalEnv,
  KUBECONFIG: env.string(
    "",
    "Beyond spec: the orchestrator client configuration when --orchconfig is not given (a list; the first existing file is used), else ~/.kube/config",
  ),
  MESHCTL_PROXY_ADMIN_PORT: env.int(
    15000,
    "Beyond spec: the proxies' admin port that bug-report reads config dumps from (1-65535; another value falls back to 15000)",
  ),
  ENABLE_NATIVE_SIDECARS: env.string(
    "",
    "Beyond spec: orch-inject runs the proxy as a native sidecar (init container with restartPolicy Always): true, false, or auto/empty (when every node supports it)",
  ),
  COMPLIANCE_POLICY: env.string(
    "",
    "Beyond spec: orch-inject writes it into injected proxies, as mesh-discovery's injector does (fips-140-2, fips-140-3, pqc or empty)",
  ),
} as const satisfies EnvTable

/** meshctl's settings from the environment; commands read this Tag, tests give `MeshctlEnv.layer({...})`. */
export class MeshctlEnv extends EnvConfig<MeshctlEnv>()("mesh/MeshctlEnv", {
  table: meshctlEnv,
  names: ["NO_COLOR", "TERM", "KUBECONFIG", "MESHCTL_PROXY_ADMIN_PORT", "ENABLE_NATIVE_SIDECARS", "COMPLIANCE_POLICY"],
  fields: {},
}) {}
