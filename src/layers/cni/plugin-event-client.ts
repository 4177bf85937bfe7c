/**
 * The plugin's side of the node agent's event socket: one HTTP POST over the Unix socket
 * `<run dir>/pluginevent.sock`, at most 5 s, the answer read up to 64 KiB. An agent that cannot
 * be reached or answers an error fails ADD with the CNI error the runtime shows for the pod.
 */
import { request } from "node:http"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import {
  AddEventPath,
  DelEventPath,
  EVENT_TIMEOUT_MILLIS,
  MAX_EVENT_BYTES,
  PLUGIN_EVENT_SOCKET,
} from "../../services/cni/node-agent-events.js"
import { NodeAgentClient } from "../../services/cni/plugin-ambient.js"
import { CniError, CniErrorCodes } from "../../services/cni/plugin-protocol.js"

const post = (runDir: string, path: string, body: unknown): Effect.Effect<string, CniError> =>
  Effect.async<string, CniError>((resume) => {
    const socketPath = join(runDir, PLUGIN_EVENT_SOCKET)
    const fail = (details: string) =>
      resume(
        Effect.fail(
          new CniError({
            code: CniErrorCodes.tryAgainLater,
            msg: "cannot hand the ambient pod to the mesh CNI node agent",
            details: `${socketPath}${path}: ${details}`,
          }),
        ),
      )
    const text = JSON.stringify(body)
    const call = request(
      {
        socketPath,
        path,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) },
        timeout: EVENT_TIMEOUT_MILLIS,
      },
      (response) => {
        let answer = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          if (answer.length < MAX_EVENT_BYTES) answer += chunk
        })
        response.on("end", () => {
          if (response.statusCode === 200) resume(Effect.succeed(answer))
          else fail(`HTTP ${response.statusCode}: ${answer.slice(0, 1024)}`)
        })
      },
    )
    call.on("timeout", () => call.destroy(new Error(`no answer within ${EVENT_TIMEOUT_MILLIS} ms`)))
    call.on("error", (error) => fail(error.message))
    call.end(text)
    return Effect.sync(() => call.destroy())
  })

export const layer: Layer.Layer<NodeAgentClient> = Layer.succeed(
  NodeAgentClient,
  NodeAgentClient.of({
    add: (runDir, event) => post(runDir, AddEventPath, event),
    del: (runDir, event) => post(runDir, DelEventPath, event),
  }),
)
