/** The environment-variable tables of the three daemons, by binary name (feeds the generated docs). */
import { agentEnv } from "./agent-env.js"
import { cniEnv } from "./cni-env.js"
import { discoveryEnv } from "./discovery-env.js"
import type { EnvTable } from "./env.js"

export { agentEnv, cniEnv, discoveryEnv }

export const envTables = {
  "mesh-discovery": discoveryEnv,
  "mesh-agent": agentEnv,
  "install-cni": cniEnv,
} as const satisfies Record<string, EnvTable>

export type BinaryName = keyof typeof envTables
