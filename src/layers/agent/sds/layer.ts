/** The SDS server of `mesh-agent proxy` on the workload-identity socket (`WORKLOAD_IDENTITY_SOCKET_FILE`). */
import { Effect, Layer } from "effect"
import { AgentSetup } from "../setup.js"
import { startSdsServer } from "./sds-server.js"

export const layer = Layer.scopedDiscard(
  Effect.flatMap(AgentSetup, (setup) => startSdsServer({ socketPath: setup.sdsSocket })),
)
