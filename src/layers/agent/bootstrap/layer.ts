/**
 * The proxyless gRPC bootstrap (`GRPC_XDS_BOOTSTRAP`), written when the agent runs proxyless or
 * the variable is set: the xDS proxy's socket, the node, and where the certificates are.
 * `GrpcBootstrapWritten` tells readiness whether it is there.
 */
import { resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { grpcBootstrap, unixUri } from "../../../services/agent/bootstrap/grpc-bootstrap.js"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { AgentSetup } from "../setup.js"
import { writeGrpcBootstrap } from "./grpc-bootstrap.js"

export class GrpcBootstrapWritten extends Context.Tag("mesh/agent/GrpcBootstrapWritten")<
  GrpcBootstrapWritten,
  { readonly written: boolean }
>() {}

export const layer = Layer.effect(
  GrpcBootstrapWritten,
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    if (!setup.writeGrpcBootstrap) return { written: false }
    for (const problem of setup.nodeProblems) yield* Effect.logWarning(problem)
    const ttl = setup.ttlSeconds
    yield* writeGrpcBootstrap(
      resolve(config.GRPC_XDS_BOOTSTRAP),
      grpcBootstrap({
        serverUri: unixUri(setup.xdsSocket),
        channelCreds: [{ type: "insecure" }],
        node: setup.node,
        // Mounted certificates are read where they are mounted; nothing is copied to certDir.
        certDir: config.FILE_MOUNTED_CERTS ? setup.mountedDir : resolve(setup.certDir),
        // re-read the files well within a short certificate lifetime
        ...(ttl > 0 ? { refreshSeconds: Math.min(900, Math.max(1, Math.floor(ttl / 4))) } : {}),
      }),
    )
    return { written: true }
  }),
)
