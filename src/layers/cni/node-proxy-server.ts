/**
 * The node proxy's socket (`--node-proxy-uds-address`): a SOCK_SEQPACKET listener speaking the
 * reference's workload-handoff protocol. For each node proxy that connects: read its hello
 * (within 5 s), send every pod the node agent holds (`add` with the pod's network namespace
 * descriptor attached, or `keep` when there is none), then `snapshot_sent`, each waiting for
 * its acknowledgement; afterwards send the adds and deletes the node agent asks for, one at a
 * time. An add goes to the newest connection only, a delete to all (so a node proxy being
 * replaced also lets go), as the reference does. A connection that sends anything unasked, does
 * not acknowledge within 5 s or hangs up is closed; its node proxy gets the whole snapshot
 * again when it reconnects.
 */
import { Context, Deferred, Effect, Either, Exit, type Scope } from "effect"
import {
  ACK_TIMEOUT,
  describeRequest,
  type HeldPod,
  MAX_NODE_PROXY_CONNECTIONS,
  snapshotRequest,
  type WorkloadAck,
  type WorkloadRequest,
  ZDS_VERSION_V1,
} from "../../services/cni/node-proxy-protocol.js"
import type { ZdsCodec } from "./node-proxy-codec.js"
import { listenSeqpacket, type SeqpacketConnection, SeqpacketError } from "./seqpacket.js"

/** What the node proxy server reads of the node agent's pods. */
export interface HeldPods {
  readonly get: (uid: string) => HeldPod | undefined
  readonly uids: () => ReadonlyArray<string>
}

export type AddOutcome = "sent" | "no-node-proxy" | "pod-gone"

export interface NodeProxyServerShape {
  /** Sends the pod (looked up when sent) to the newest node proxy and waits for its acknowledgement. */
  readonly podAdded: (uid: string) => Effect.Effect<AddOutcome, SeqpacketError>
  /** Tells every connected node proxy; failures are logged, not returned. */
  readonly podDeleted: (uid: string) => Effect.Effect<void>
  readonly connected: Effect.Effect<number>
}

export class NodeProxyServer extends Context.Tag("mesh/CniNodeProxyServer")<NodeProxyServer, NodeProxyServerShape>() {}

interface Update {
  readonly request: WorkloadRequest
  readonly done: Deferred.Deferred<WorkloadAck, SeqpacketError>
}

interface Connection {
  readonly id: number
  readonly updates: Array<Update>
  wakeUp: (() => void) | undefined
}

const protocolError = (message: string) => new SeqpacketError({ message })

export const makeNodeProxyServer = (
  path: string,
  pods: HeldPods,
  codec: ZdsCodec,
): Effect.Effect<NodeProxyServerShape, SeqpacketError, Scope.Scope> =>
  Effect.gen(function* () {
    const server = yield* listenSeqpacket(path, MAX_NODE_PROXY_CONNECTIONS)
    /** Open connections past their hello, oldest first. */
    const connections: Array<Connection> = []

    const receiveWithin = (conn: SeqpacketConnection, what: string) =>
      conn.receive.pipe(
        Effect.timeoutFail({
          duration: ACK_TIMEOUT,
          onTimeout: () => protocolError(`no ${what} within 5s`),
        }),
        Effect.mapError((e) => (e._tag === "SeqpacketClosed" ? protocolError(e.reason) : e)),
      )

    /** One request and its acknowledgement. */
    const exchange = (conn: SeqpacketConnection, request: WorkloadRequest, fd?: number) =>
      Effect.gen(function* () {
        yield* conn
          .send(codec.encodeRequest(request), fd)
          .pipe(Effect.mapError((e) => (e._tag === "SeqpacketClosed" ? protocolError(e.reason) : e)))
        const answer = yield* receiveWithin(conn, `acknowledgement of ${describeRequest(request)}`)
        const ack = yield* Either.match(codec.decodeResponse(answer), {
          onLeft: (e) => Effect.fail(protocolError(e.message)),
          onRight: Effect.succeed,
        })
        if (ack.error !== "")
          yield* Effect.logWarning(`the node proxy refused ${describeRequest(request)}: ${ack.error.slice(0, 256)}`)
        return ack
      })

    /** Sends one request, with the pod's descriptor for an add (looked up now: it may be gone). */
    const sendRequest = (conn: SeqpacketConnection, request: WorkloadRequest) => {
      if (request._tag !== "Add") return exchange(conn, request)
      const pod = pods.get(request.uid)
      if (pod === undefined) return Effect.succeed<WorkloadAck>({ error: "" })
      return exchange(conn, snapshotRequest(pod), pod.netnsFd)
    }

    const nextUpdate = (state: Connection) =>
      Effect.async<Update>((resume) => {
        const ready = state.updates.shift()
        if (ready !== undefined) return resume(Effect.succeed(ready))
        state.wakeUp = () => {
          state.wakeUp = undefined
          const update = state.updates.shift()
          if (update !== undefined) resume(Effect.succeed(update))
        }
        return Effect.sync(() => {
          state.wakeUp = undefined
        })
      })

    const serve = (conn: SeqpacketConnection) => {
      const state: Connection = { id: conn.id, updates: [], wakeUp: undefined }
      return Effect.gen(function* () {
        const hello = yield* receiveWithin(conn, "hello")
        const version = yield* Either.match(codec.decodeHello(hello), {
          onLeft: (e) => Effect.fail(protocolError(e.message)),
          onRight: Effect.succeed,
        })
        if (version !== ZDS_VERSION_V1) yield* Effect.logWarning(`node proxy hello names version ${version}, not V1`)
        // Registered before the snapshot is read: a pod added meanwhile is in one or the other.
        connections.push(state)
        yield* Effect.logInfo(`node proxy ${conn.id} connected (${connections.length} connected); sending the snapshot`)
        let sent = 0
        for (const uid of pods.uids()) {
          const pod = pods.get(uid)
          if (pod === undefined) continue
          yield* exchange(conn, snapshotRequest(pod), pod.netnsFd)
          sent++
        }
        yield* exchange(conn, { _tag: "SnapshotSent" })
        yield* Effect.logInfo(`node proxy ${conn.id}: snapshot of ${sent} pods sent`)
        for (;;) {
          const next = yield* Effect.raceFirst(
            Effect.map(nextUpdate(state), (update) => ({ _tag: "Update" as const, update })),
            Effect.map(conn.receive, () => ({ _tag: "Unasked" as const })),
          ).pipe(Effect.mapError((e) => (e._tag === "SeqpacketClosed" ? protocolError(e.reason) : e)))
          if (next._tag === "Unasked") return yield* protocolError("the node proxy sent a message nobody asked for")
          const exit = yield* Effect.exit(sendRequest(conn, next.update.request))
          yield* Deferred.done(next.update.done, exit)
          // A failed exchange leaves the connection unusable: it ends here.
          if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
        }
      }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`node proxy ${conn.id} disconnected: ${error.message}`)),
        Effect.ensuring(
          Effect.gen(function* () {
            const index = connections.indexOf(state)
            if (index !== -1) connections.splice(index, 1)
            for (const update of state.updates.splice(0))
              yield* Deferred.fail(update.done, protocolError("the node proxy disconnected"))
            yield* conn.close
          }),
        ),
      )
    }

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(server.accept, (conn) => Effect.forkScoped(serve(conn)))))
    yield* Effect.logInfo(`serving node proxies on ${path}`)

    const enqueue = (state: Connection, request: WorkloadRequest) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<WorkloadAck, SeqpacketError>()
        state.updates.push({ request, done })
        state.wakeUp?.()
        return yield* Deferred.await(done)
      })

    return {
      podAdded: (uid) =>
        Effect.suspend(() => {
          const newest = connections[connections.length - 1]
          if (newest === undefined) return Effect.succeed<AddOutcome>("no-node-proxy")
          if (pods.get(uid) === undefined) return Effect.succeed<AddOutcome>("pod-gone")
          return enqueue(newest, { _tag: "Add", uid, workload: pods.get(uid)!.workload }).pipe(
            Effect.flatMap((ack) =>
              ack.error === ""
                ? Effect.succeed<AddOutcome>("sent")
                : Effect.fail(protocolError(`the node proxy refused the pod: ${ack.error.slice(0, 256)}`)),
            ),
          )
        }),
      podDeleted: (uid) =>
        Effect.forEach(
          [...connections],
          (state) =>
            Effect.catchAll(enqueue(state, { _tag: "Del", uid }), (error) =>
              Effect.logWarning(`node proxy ${state.id}: delete of uid ${uid} not acknowledged: ${error.message}`),
            ),
          { concurrency: "unbounded", discard: true },
        ),
      connected: Effect.sync(() => connections.length),
    }
  })
