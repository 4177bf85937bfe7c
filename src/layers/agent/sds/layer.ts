/** The SDS server of `mesh-agent proxy` on the workload-identity socket (`WORKLOAD_IDENTITY_SOCKET_FILE`). */
import { Effect, Layer } from "effect"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { AgentSetup } from "../setup.js"
import { startSdsServer } from "./sds-server.js"

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const setup = yield* AgentSetup
    const config = yield* AgentConfig
    yield* startSdsServer({
      socketPath: setup.sdsSocket,
      files: {
        maxBytes: config.MESH_SDS_FILE_MAX_BYTES,
        maxFiles: config.MESH_SDS_MAX_FILES,
        debounce: config.FILE_DEBOUNCE_DURATION,
        pollInterval: config.MESH_SDS_FILE_POLL_INTERVAL,
      },
    })
  }),
)
