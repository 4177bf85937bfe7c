/** The memory slice of a daemon's environment (the same two variables in every daemon's table). */
import { EnvConfig } from "../config/env-config.js"
import { memoryEnv } from "../config/memory-env.js"

export class MemoryConfig extends EnvConfig<MemoryConfig>()("mesh/MemoryConfig", {
  table: memoryEnv,
  names: ["MESH_HEAP_GROWTH_PERCENT", "MESH_MEMORY_LIMIT"],
  fields: {},
}) {}
