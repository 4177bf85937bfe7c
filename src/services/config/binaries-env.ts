/** The environment-variable tables of the three daemons and meshctl, by binary name (feeds the generated docs). */
import { agentEnv } from "./agent-env.js"
import { cniEnv } from "./cni-env.js"
import { discoveryEnv } from "./discovery-env.js"
import type { EnvTable } from "./env.js"
import { meshctlEnv } from "./meshctl-env.js"

export { agentEnv, cniEnv, discoveryEnv, meshctlEnv }

export const envTables = {
  "mesh-discovery": discoveryEnv,
  "mesh-agent": agentEnv,
  "install-cni": cniEnv,
  meshctl: meshctlEnv,
} as const satisfies Record<string, EnvTable>

export type BinaryName = keyof typeof envTables
