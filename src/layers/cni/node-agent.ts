/**
 * install-cni's node agent in ambient mode (`--ambient-enabled`): the plugin's events in, the
 * node proxy's socket out.
 *
 * ADD (from the plugin, for a pod the ambient labels enrol): open the pod's network namespace
 * and keep it open, program the in-pod redirection inside it, hold the pod, and hand it to the
 * newest connected node proxy with the namespace descriptor attached. When no node proxy is
 * connected the ADD still succeeds: the pod's traffic is already redirected to listeners that
 * are not there yet (it fails closed, nothing bypasses the proxy), and the pod goes out in the
 * snapshot the node proxy gets when it connects. (The reference fails such an ADD, so that the
 * runtime retries the sandbox, and keeps the pod for the snapshot; here DEL comes from the
 * plugin, and a runtime tears a failed sandbox down with a DEL, which would drop the pod.)
 * A node proxy that refuses the pod fails the ADD; the pod stays held.
 *
 * DEL (from the plugin): every connected node proxy is told, and the namespace is let go. The
 * rules are not removed: the namespace goes away with the sandbox.
 */
import { mkdirSync, openSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { join } from "node:path"
import { Effect, Either, Layer, Runtime, type Scope } from "effect"
import { type InpodSettings, podOverridesOf } from "../../services/cni/inpod-rules.js"
import {
  type AddEvent,
  AddEventPath,
  type DelEvent,
  DelEventPath,
  decodeAddEvent,
  decodeDelEvent,
  MAX_EVENT_BYTES,
  PLUGIN_EVENT_SOCKET,
} from "../../services/cni/node-agent-events.js"
import type { HeldPod } from "../../services/cni/node-proxy-protocol.js"
import { withScope } from "../../services/logging/logging.js"
import { applyInpodRules, heldNamespacePath } from "./inpod-apply.js"
import { makeZdsCodec } from "./node-proxy-codec.js"
import { makeNodeProxyServer } from "./node-proxy-server.js"
import { closeFd, SeqpacketError } from "./seqpacket.js"

export interface NodeAgentSettings {
  /** `--cni-agent-run-dir`: the plugin's event socket goes here. */
  readonly runDir: string
  /** `--node-proxy-uds-address`. */
  readonly nodeProxyAddress: string
  readonly inpod: InpodSettings
}

interface Held extends HeldPod {
  readonly containerId: string
}

interface Answer {
  readonly status: number
  readonly body: string
}

const cut = (text: string) => (text.length > 256 ? `${text.slice(0, 256)}…` : text)

const makeNodeAgent = (settings: NodeAgentSettings): Effect.Effect<void, SeqpacketError, Scope.Scope> =>
  Effect.gen(function* () {
    const pods = new Map<string, Held>()
    const byContainer = new Map<string, string>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const pod of pods.values()) if (pod.netnsFd !== undefined) closeFd(pod.netnsFd)
        pods.clear()
      }),
    )
    const codec = yield* makeZdsCodec().pipe(Effect.mapError((e) => new SeqpacketError({ message: e.message })))
    const nodeProxy = yield* makeNodeProxyServer(
      settings.nodeProxyAddress,
      { get: (uid) => pods.get(uid), uids: () => [...pods.keys()] },
      codec,
    )

    const add = (event: AddEvent): Effect.Effect<Answer> =>
      Effect.gen(function* () {
        const pod = `${event.podNamespace}/${event.podName}`
        const opened = Either.try({
          try: () => openSync(event.netns, "r"),
          catch: (e) => (e as Error).message,
        })
        if (Either.isLeft(opened))
          return { status: 500, body: `cannot open the network namespace ${cut(event.netns)}: ${cut(opened.left)}` }
        const fd = opened.right
        const applied = yield* Effect.either(
          applyInpodRules(heldNamespacePath(fd), settings.inpod, podOverridesOf(event.annotations)),
        )
        if (Either.isLeft(applied)) {
          closeFd(fd)
          yield* Effect.logError(`cannot program the in-pod redirection of ${pod}: ${applied.left.message}`)
          return { status: 500, body: `cannot program the in-pod redirection: ${cut(applied.left.message)}` }
        }
        const previous = pods.get(event.podUid)
        pods.set(event.podUid, {
          uid: event.podUid,
          containerId: event.containerId,
          workload: { name: event.podName, namespace: event.podNamespace, serviceAccount: event.serviceAccount },
          netnsFd: fd,
        })
        byContainer.set(event.containerId, event.podUid)
        if (previous !== undefined) {
          if (previous.containerId !== event.containerId) byContainer.delete(previous.containerId)
          if (previous.netnsFd !== undefined) closeFd(previous.netnsFd)
        }
        yield* Effect.logInfo(
          `in-pod redirection programmed for ${pod} (uid ${event.podUid})${applied.right.replaced ? ", replacing earlier rules" : ""}`,
        )
        const outcome = yield* Effect.either(nodeProxy.podAdded(event.podUid))
        if (Either.isLeft(outcome)) {
          yield* Effect.logError(`the node proxy did not take ${pod}: ${outcome.left.message}`)
          return { status: 500, body: `the node proxy did not take the pod: ${cut(outcome.left.message)}` }
        }
        if (outcome.right === "no-node-proxy")
          yield* Effect.logInfo(`no node proxy connected: ${pod} goes out in the next snapshot`)
        return { status: 200, body: outcome.right }
      }).pipe(Effect.withSpan("CniNodeAgent.add"))

    const del = (event: DelEvent): Effect.Effect<Answer> =>
      Effect.gen(function* () {
        const uid = byContainer.get(event.containerId)
        const held = uid === undefined ? undefined : pods.get(uid)
        if (uid === undefined || held === undefined || held.containerId !== event.containerId)
          return { status: 200, body: "not held" }
        pods.delete(uid)
        byContainer.delete(event.containerId)
        yield* nodeProxy.podDeleted(uid)
        if (held.netnsFd !== undefined) closeFd(held.netnsFd)
        yield* Effect.logInfo(`${event.podNamespace}/${event.podName} (uid ${uid}) removed`)
        return { status: 200, body: "removed" }
      }).pipe(Effect.withSpan("CniNodeAgent.del"))

    const runtime = yield* Effect.runtime<never>()
    const handle = (path: string, body: string): Effect.Effect<Answer> => {
      if (path === AddEventPath)
        return Either.match(decodeAddEvent(body), {
          onLeft: (problem) => Effect.succeed({ status: 400, body: `invalid add event: ${problem}` }),
          onRight: add,
        })
      if (path === DelEventPath)
        return Either.match(decodeDelEvent(body), {
          onLeft: (problem) => Effect.succeed({ status: 400, body: `invalid delete event: ${problem}` }),
          onRight: del,
        })
      return Effect.succeed({ status: 404, body: "not found" })
    }
    const onRequest = (request: IncomingMessage, response: ServerResponse) => {
      const answer = (status: number, body: string) => {
        response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(body)
      }
      /** Over the bound: answer, stop reading, and close the connection once the answer is out. */
      const refuse = () => {
        request.removeAllListeners("data")
        request.pause()
        response
          .writeHead(413, { "content-type": "text/plain; charset=utf-8", connection: "close" })
          .end(`over ${MAX_EVENT_BYTES} bytes`, () => request.socket.destroy())
      }
      if (request.method !== "POST") return answer(405, "POST only")
      if (Number(request.headers["content-length"] ?? 0) > MAX_EVENT_BYTES) return refuse()
      const chunks: Array<Buffer> = []
      let size = 0
      request.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_EVENT_BYTES) return refuse()
        chunks.push(chunk)
      })
      request.on("end", () => {
        if (size > MAX_EVENT_BYTES) return
        const path = (request.url ?? "").split("?")[0] ?? ""
        Runtime.runPromise(runtime)(handle(path, Buffer.concat(chunks).toString("utf8"))).then(
          (result) => answer(result.status, result.body),
          (error) => answer(500, cut(String(error))),
        )
      })
    }

    const socketPath = join(settings.runDir, PLUGIN_EVENT_SOCKET)
    yield* Effect.acquireRelease(
      Effect.async<ReturnType<typeof createServer>, SeqpacketError>((resume) => {
        try {
          mkdirSync(settings.runDir, { recursive: true })
          rmSync(socketPath, { force: true })
        } catch (e) {
          return resume(
            Effect.fail(new SeqpacketError({ message: `cannot prepare ${socketPath}: ${(e as Error).message}` })),
          )
        }
        const server = createServer(onRequest)
        server.once("error", (e) => resume(Effect.fail(new SeqpacketError({ message: `${socketPath}: ${e.message}` }))))
        server.listen(socketPath, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        }).pipe(Effect.zipRight(Effect.sync(() => rmSync(socketPath, { force: true })))),
    )
    yield* Effect.logInfo(`ambient node agent: plugin events on ${socketPath}`)
  }).pipe(withScope("cni-agent"))

/** The node agent, running while the layer is up; start-up fails when a socket cannot be served. */
export const layer = (settings: NodeAgentSettings): Layer.Layer<never, SeqpacketError> =>
  Layer.scopedDiscard(makeNodeAgent(settings))
