/**
 * The one ADS stream loop, driven by a fake protocol and in-memory streams (no sockets): what
 * state-of-the-world and delta streams both get from it.
 */

import { EventEmitter } from "node:events"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import type { Connection } from "../../../src/layers/xds/connections.js"
import { makeInbox } from "../../../src/layers/xds/inbox.js"
import { serveStream } from "../../../src/layers/xds/stream-loop.js"
import type { StreamEnv, StreamEvent, StreamProtocol } from "../../../src/layers/xds/stream-protocol.js"
import { noProxyConnections } from "../../../src/services/registry/autoregistration/proxy-connections.js"
import type { ProxyInfo } from "../../../src/services/xds/cache/responder.js"
import type { PushContext } from "../../../src/services/xds/model/push-context.js"
import type { DebugCaller } from "../../../src/services/xds/protocol/debug-type.js"
import { defaultNameLimits, makeNameBudget, type NameLimits } from "../../../src/services/xds/protocol/name-budget.js"
import { MAX_ERROR_LENGTH } from "../../../src/services/xds/protocol/request-limits.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { makePushDispatcher } from "../../../src/services/xds/push/push-dispatcher.js"
import { makePushRequest } from "../../../src/services/xds/push/push-request.js"
import { makeWatchedHosts } from "../../../src/services/xds/push/watched-hosts.js"

interface Req {
  readonly type_url: string
  /** The nonce of the response it acknowledges; absent = a new watch. */
  readonly response_nonce?: string
  readonly resource_names?: ReadonlyArray<string>
}
interface Res {
  readonly typeUrl: string
  readonly nonce: string
  /** A debug answer's body. */
  readonly body?: string
}
interface Watch {
  readonly typeUrl: string
  readonly wildcard: boolean
  readonly names: ReadonlyArray<string>
  readonly nonceSent?: string
}
interface State {
  readonly watches: ReadonlyMap<string, Watch>
}
interface Built {
  readonly response: Res
  readonly sharedReads: number
  readonly notFound: ReadonlyArray<string>
}

const withWatch = (state: State, watch: Watch): State => ({ watches: new Map(state.watches).set(watch.typeUrl, watch) })

/** A protocol in miniature: a request without a nonce subscribes (answered), one with a nonce ACKs. */
const fakeProtocol: StreamProtocol<Req, Res, State, Watch, StreamEvent, Built> = {
  logScope: "ads",
  newConnection: "new connection",
  coalescePerType: false,
  maxPending: 16,
  empty: { watches: new Map() },
  step: (state, request) =>
    request.response_nonce === undefined
      ? {
          state: withWatch(state, {
            typeUrl: request.type_url,
            wildcard: request.resource_names === undefined,
            names: request.resource_names ?? [],
          }),
          event: { _tag: "Subscribe", reconnect: false },
          respond: true,
        }
      : { state, event: { _tag: "Ack" }, respond: false },
  watches: (state) => state.watches,
  names: (watch) => watch.names,
  due: () => false,
  build: (_push, watch, nonce) => ({
    response: { typeUrl: watch.typeUrl, nonce: typeof nonce === "string" ? nonce : nonce() },
    sharedReads: 0,
    notFound: [],
  }),
  sent: (state, watch, built) => withWatch(state, { ...watch, nonceSent: built.response.nonce }),
  pushLine: () => "",
  requestLine: () => undefined,
  debugReply: (typeUrl, _name, body, nonce) => ({ typeUrl, nonce, body: Buffer.from(body).toString() }),
  status: (id, peer, proxy, connectedAt) => ({
    id,
    peer,
    nodeId: proxy?.id ?? "",
    generator: "",
    delta: false,
    connectedAt,
    watches: [],
  }),
}

const proxy: ProxyInfo = { id: "sidecar~10.0.0.1~a.default~default.svc.cluster.local", generator: "grpc", metadata: {} }

/** An in-memory stream: the test sends its requests and takes its writes, each write held until released. */
const fakeStream = (id: string, caller: DebugCaller = { identities: [], secure: false, loopback: true }) => {
  const call = Object.assign(new EventEmitter(), { pause: () => {}, resume: () => {} })
  const writes: Array<{ readonly response: Res; readonly written: () => void }> = []
  const failures: Array<string> = []
  let ended = false
  let opened = false
  return {
    id,
    writes,
    ended: () => ended,
    opened: () => opened,
    failures,
    send: (request: Req) => call.emit("data", request),
    close: () => call.emit("end"),
    channel: {
      id,
      peer: () => id,
      open: (acceptNow: (request: Req) => boolean) =>
        Effect.sync(() => {
          opened = true
          return {
            ...makeInbox<Req>(call, { screen: () => true, acceptNow, maxPending: 16, onOverflow: () => {} }),
            proxy: () => proxy,
          }
        }),
      write: (response: Res, written: () => void) => writes.push({ response, written }),
      authorize: () => Effect.succeed(true),
      end: () => {
        ended = true
      },
      caller,
      fail: (code: string, message: string) => Effect.sync(() => failures.push(`${code}: ${message}`)),
      warn: () => Effect.void,
    },
  }
}

const noop = { observe: () => {}, inc: () => {} }

/** A server's shared part around a push queue of `throttle` slots; registered connections by id. */
const makeEnv = (throttle: number, options: { names?: NameLimits; plaintextDebugRemote?: boolean } = {}) =>
  Effect.gen(function* () {
    const registered = new Map<string, Connection>()
    const dispatcher = makePushDispatcher<Connection>(
      throttle,
      (connection, request, done) => connection.startPush(request, done),
      () => {},
      { sliceMillis: Number.POSITIVE_INFINITY, now: () => 0, defer: (next) => setImmediate(next) },
    )
    const names = makeNameBudget(options.names ?? defaultNameLimits)
    const env: StreamEnv = {
      proxyConnections: noProxyConnections,
      current: () => ({ version: "v1" }) as unknown as PushContext,
      register: (connection) => registered.set(connection.id, connection),
      unregister: (connection) => {
        registered.delete(connection.id)
        dispatcher.remove(connection)
      },
      reindex: () => {},
      cache: {} as never,
      hosts: makeWatchedHosts(),
      sharable: () => true,
      built: () => {},
      pushDebug: () => {},
      nacks: { record: () => Effect.void, forget: () => {} },
      metrics: { sendTime: noop, pushTime: noop, pushes: noop, convergence: noop, expiredNonce: noop } as never,
      clock: yield* Effect.clock,
      debug: () => ({
        systemNamespace: "mesh-system",
        pages: (request) =>
          Effect.succeed(
            request.path === "syncz"
              ? { status: 200, body: `[${JSON.stringify([...registered.keys()])}]` }
              : request.path === "config_dump"
                ? { status: 404, body: `proxy not connected: ${request.query.get("proxyID")}\n` }
                : undefined,
          ),
      }),
      plaintextDebugRemote: options.plaintextDebugRemote === true,
      names,
    }
    return { env, registered, dispatcher, names }
  })

/** Lets the stream fibers run until `done` holds (they only wait for the test, never for time). */
const until = (done: () => boolean, turns = 1000): Effect.Effect<void> =>
  Effect.suspend(() =>
    done()
      ? Effect.void
      : turns === 0
        ? Effect.dieMessage("the stream fibers stopped short")
        : Effect.zipRight(Effect.yieldNow(), until(done, turns - 1)),
  )

const fullPush = makePushRequest({ full: true, reason: "config", start: 0 })

describe("ADS stream loop", () => {
  it.effect("takes the next request only once the answer to the previous one was written", () =>
    Effect.gen(function* () {
      const { env } = yield* makeEnv(1)
      const stream = fakeStream("a")
      const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
      yield* until(stream.opened)
      stream.send({ type_url: TypeUrl.Cluster })
      yield* until(() => stream.writes.length === 1)
      // The CDS answer is not taken yet: the EDS request waits behind it.
      stream.send({ type_url: TypeUrl.Endpoint })
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      expect(stream.writes.map((w) => w.response.typeUrl)).toEqual([TypeUrl.Cluster])
      stream.writes[0]?.written()
      yield* until(() => stream.writes.length === 2)
      expect(stream.writes[1]?.response.typeUrl).toBe(TypeUrl.Endpoint)
      stream.writes[1]?.written()
      stream.close()
      yield* Fiber.join(fiber)
    }),
  )

  it.effect("a closed stream ends its loop and frees its push slot for the next connection", () =>
    Effect.gen(function* () {
      const { env, registered, dispatcher } = yield* makeEnv(1)
      const a = fakeStream("a")
      const b = fakeStream("b")
      const fiberA = yield* Effect.fork(serveStream(fakeProtocol, env, a.channel))
      yield* Effect.fork(serveStream(fakeProtocol, env, b.channel))
      for (const stream of [a, b]) {
        yield* until(stream.opened)
        stream.send({ type_url: TypeUrl.Cluster })
        yield* until(() => stream.writes.length === 1)
        stream.writes[0]?.written()
      }
      yield* until(() => registered.size === 2)
      // A's push is never taken by its peer: it holds the only slot, and B's push waits.
      dispatcher.enqueue(registered.get("a")!, fullPush)
      dispatcher.enqueue(registered.get("b")!, fullPush)
      expect([a.writes.length, b.writes.length]).toEqual([2, 1])
      expect(dispatcher.pending()).toBe(1)

      a.close()
      yield* Fiber.join(fiberA)
      expect(a.ended()).toBe(true)
      expect([...registered.keys()]).toEqual(["b"])
      yield* until(() => b.writes.length === 2)
      expect(dispatcher.pending()).toBe(0)
    }),
  )

  it.effect("answers a debug request once without registering the stream, and ignores its ACK", () =>
    Effect.gen(function* () {
      const { env, registered } = yield* makeEnv(1)
      const stream = fakeStream("meshctl")
      const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
      yield* until(stream.opened)
      stream.send({ type_url: "mesh.io/debug/syncz" })
      yield* until(() => stream.writes.length === 1)
      const answer = stream.writes[0]!
      expect(answer.response).toMatchObject({ typeUrl: "mesh.io/debug/syncz", body: "[[]]" })
      answer.written()
      stream.send({ type_url: "mesh.io/debug/syncz", response_nonce: answer.response.nonce })
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      expect(stream.writes).toHaveLength(1)
      expect(registered.size).toBe(0)
      // A proxy on its own stream is registered as before, and the debug page does not list meshctl.
      const proxyStream = fakeStream("proxy")
      const proxyFiber = yield* Effect.fork(serveStream(fakeProtocol, env, proxyStream.channel))
      yield* until(proxyStream.opened)
      proxyStream.send({ type_url: TypeUrl.Cluster })
      yield* until(() => proxyStream.writes.length === 1)
      expect([...registered.keys()]).toEqual(["proxy"])
      stream.send({ type_url: "istio.io/debug", resource_names: ["syncz"] })
      yield* until(() => stream.writes.length === 2)
      expect(stream.writes[1]!.response.body).toBe('[["proxy"]]')
      for (const w of [...stream.writes, ...proxyStream.writes]) w.written()
      stream.close()
      proxyStream.close()
      yield* Fiber.join(fiber)
      yield* Fiber.join(proxyFiber)
    }),
  )

  it.effect("ends a debug stream with a status: unknown path, failed page, refused caller", () =>
    Effect.gen(function* () {
      const { env } = yield* makeEnv(1)
      const ask = (caller: DebugCaller, request: Req) =>
        Effect.gen(function* () {
          const stream = fakeStream("meshctl", caller)
          const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
          yield* until(stream.opened)
          stream.send(request)
          yield* Fiber.join(fiber)
          expect(stream.writes).toHaveLength(0)
          return stream.failures
        })
      expect(yield* ask({ identities: [], secure: false, loopback: true }, { type_url: "mesh.io/debug/nope" })).toEqual(
        ["NOT_FOUND: unknown debug path /debug/nope (mesh.io/debug/list names them)"],
      )
      expect(
        yield* ask(
          { identities: [], secure: false, loopback: true },
          { type_url: "mesh.io/debug/config_dump?proxyID=x" },
        ),
      ).toEqual(["NOT_FOUND: /debug/config_dump: proxy not connected: x"])
      const [refused] = yield* ask(
        { identities: ["spiffe://cluster.local/ns/default/sa/app"], secure: true, loopback: false },
        { type_url: "mesh.io/debug/syncz" },
      )
      expect(refused).toMatch(
        /^PERMISSION_DENIED: debug information is only given to identities of namespace mesh-system/,
      )
      expect(yield* ask({ identities: [], secure: true, loopback: true }, { type_url: "mesh.io/debug/syncz" })).toEqual(
        [expect.stringMatching(/^UNAUTHENTICATED: /)],
      )
    }),
  )
  it.effect(
    "answers plaintext debug requests to loopback callers; other hosts only with MESH_XDS_PLAINTEXT_DEBUG_REMOTE",
    () =>
      Effect.gen(function* () {
        const ask = (env: StreamEnv, caller: DebugCaller) =>
          Effect.gen(function* () {
            const stream = fakeStream("meshctl", caller)
            const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
            yield* until(stream.opened)
            stream.send({ type_url: "mesh.io/debug/syncz" })
            yield* until(() => stream.writes.length > 0 || stream.failures.length > 0)
            stream.writes[0]?.written()
            stream.close()
            yield* Fiber.join(fiber)
            return { answered: stream.writes.length, failures: stream.failures }
          })
        const closed = (yield* makeEnv(1)).env
        const remote: DebugCaller = { identities: [], secure: false, loopback: false }
        expect(yield* ask(closed, { identities: [], secure: false, loopback: true })).toEqual({
          answered: 1,
          failures: [],
        })
        const refused = yield* ask(closed, remote)
        expect(refused.answered).toBe(0)
        expect(refused.failures).toEqual([
          expect.stringMatching(
            /^PERMISSION_DENIED: debug requests on the plaintext xDS port are answered to loopback callers only: .*MESH_XDS_PLAINTEXT_DEBUG_REMOTE=true/,
          ),
        ])
        const open = (yield* makeEnv(1, { plaintextDebugRemote: true })).env
        expect(yield* ask(open, remote)).toEqual({ answered: 1, failures: [] })
        // The TLS port keeps its identity check whatever the setting says.
        expect((yield* ask(open, { identities: [], secure: true, loopback: true })).failures).toEqual([
          expect.stringMatching(/^UNAUTHENTICATED: /),
        ])
      }),
  )

  it.effect("cuts a debug refusal's details short (a page's answer may repeat the caller's query)", () =>
    Effect.gen(function* () {
      const { env } = yield* makeEnv(1)
      const stream = fakeStream("meshctl")
      const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
      yield* until(stream.opened)
      stream.send({ type_url: `mesh.io/debug/config_dump?proxyID=${"x".repeat(5000)}` })
      yield* Fiber.join(fiber)
      expect(stream.failures).toHaveLength(1)
      expect(stream.failures[0]!.length).toBeLessThan(MAX_ERROR_LENGTH + 64)
      expect(stream.failures[0]).toMatch(/^NOT_FOUND: \/debug\/config_dump: proxy not connected: x+…\(\d+ chars\)$/)
    }),
  )

  it.effect("ends a stream whose names go over its bound or the server's, and releases its names when it ends", () =>
    Effect.gen(function* () {
      const { env, names } = yield* makeEnv(4, {
        names: { streamNames: 3, streamBytes: 0, totalNames: 5, totalBytes: 0 },
      })
      const open = (id: string) =>
        Effect.gen(function* () {
          const stream = fakeStream(id)
          const fiber = yield* Effect.fork(serveStream(fakeProtocol, env, stream.channel))
          yield* until(stream.opened)
          return { stream, fiber }
        })
      const a = yield* open("a")
      a.stream.send({ type_url: TypeUrl.Endpoint, resource_names: ["e1", "e2"] })
      yield* until(() => a.stream.writes.length === 1)
      a.stream.writes[0]!.written()
      expect(names.held()).toEqual({ names: 2, bytes: 4 })
      // Two more of another type: four in all, over the stream's three.
      a.stream.send({ type_url: TypeUrl.Listener, resource_names: ["l1", "l2"] })
      yield* Fiber.join(a.fiber)
      expect(a.stream.failures).toEqual([
        "RESOURCE_EXHAUSTED: the stream would watch 4 resource names; at most 3 per stream (MESH_XDS_MAX_STREAM_NAMES)",
      ])
      expect(a.stream.writes).toHaveLength(1)
      // The refused stream's names are released with it.
      expect(names.held()).toEqual({ names: 0, bytes: 0 })

      const b = yield* open("b")
      const c = yield* open("c")
      b.stream.send({ type_url: TypeUrl.Endpoint, resource_names: ["b1", "b2", "b3"] })
      yield* until(() => b.stream.writes.length === 1)
      b.stream.writes[0]!.written()
      c.stream.send({ type_url: TypeUrl.Endpoint, resource_names: ["c1", "c2", "c3"] })
      yield* Fiber.join(c.fiber)
      expect(c.stream.failures).toEqual([
        "RESOURCE_EXHAUSTED: the server's streams watch 3 resource names; at most 5 in all (MESH_XDS_MAX_NAMES)",
      ])
      b.stream.close()
      yield* Fiber.join(b.fiber)
      expect(names.held()).toEqual({ names: 0, bytes: 0 })
    }),
  )
})
