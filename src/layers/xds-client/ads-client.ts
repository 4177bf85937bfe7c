/**
 * The ADS client over @grpc/grpc-js: one stream (SotW or delta) to an ADS server, ACKing or
 * NACKing every response, holding the resources it was sent.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Layer, Option, Queue, Ref, type Scope, Stream, SubscriptionRef } from "effect"
import type { ProtoObject } from "../../services/xds/cache/resource-spec.js"
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../../services/xds/protocol/messages.js"
import { isWildcardType } from "../../services/xds/protocol/type-urls.js"
import {
  AdsClient,
  AdsClientError,
  type AdsClientOptions,
  type AdsClientShape,
  type ClientSnapshot,
  type ClientTypeState,
  deltaClientOnResponse,
  emptySnapshot,
  emptyTypeState,
  sotwClientOnResponse,
} from "../../services/xds-client/client.js"
import { resourceNameOf } from "../../services/xds-client/resource-name.js"
import { loadXdsProtos } from "../xds/protos.js"

type AnyRequest = DiscoveryRequest | DeltaDiscoveryRequest
type AnyResponse = DiscoveryResponse | DeltaDiscoveryResponse

export const makeAdsClient = (options: AdsClientOptions): Effect.Effect<AdsClientShape, AdsClientError, Scope.Scope> =>
  Effect.gen(function* () {
    const protos = yield* Effect.try({
      try: () => loadXdsProtos(),
      catch: (cause) => new AdsClientError({ message: `loading xDS protos: ${String(cause)}`, cause }),
    })
    const decode = options.decode ?? true
    const undecodedNames = !decode && options.names === true
    const Ctor = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new Ctor(options.address, grpc.credentials.createInsecure(), { ...options.channelOptions })),
      (c) => Effect.sync(() => c.close()),
    )
    const snapshot = yield* SubscriptionRef.make<ClientSnapshot>(emptySnapshot)
    // Messages carry the generation of the stream they came from; older streams are ignored.
    const inbox = yield* Queue.unbounded<{ readonly generation: number; readonly response: AnyResponse | null }>()
    const autoAck = yield* Ref.make(true)
    let nodeSent = false
    let generation = 0
    let closing = false

    const open = (): grpc.ClientDuplexStream<AnyRequest, AnyResponse> => {
      const mine = ++generation
      nodeSent = false
      const method = options.mode === "sotw" ? "StreamAggregatedResources" : "DeltaAggregatedResources"
      const stream = (client as unknown as Record<string, () => grpc.ClientDuplexStream<AnyRequest, AnyResponse>>)[
        method
      ]!.call(client)
      stream.on("data", (response: AnyResponse) => Queue.unsafeOffer(inbox, { generation: mine, response }))
      stream.on("error", () => Queue.unsafeOffer(inbox, { generation: mine, response: null }))
      stream.on("end", () => Queue.unsafeOffer(inbox, { generation: mine, response: null }))
      return stream
    }

    let call = open()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closing = true
        call.removeAllListeners("data")
        call.on("error", () => {})
        call.cancel()
      }),
    )
    yield* SubscriptionRef.update(snapshot, (s) => ({ ...s, connected: true }))

    const write = (request: AnyRequest) =>
      Effect.sync(() => {
        const withNode = nodeSent ? request : { ...request, node: options.node }
        nodeSent = true
        call.write(withNode)
      })

    const setType = (state: ClientTypeState) =>
      SubscriptionRef.update(snapshot, (s) => {
        const types = new Map(s.types)
        types.set(state.typeUrl, state)
        return { ...s, types }
      })

    const typeState = (typeUrl: string) => SubscriptionRef.get(snapshot).pipe(Effect.map((s) => s.types.get(typeUrl)))

    const decodeOne = (typeUrl: string, value: Uint8Array): ProtoObject | undefined =>
      decode ? protos.codec.decode(typeUrl, value) : undefined

    const nameOf = (resource: ProtoObject | undefined, value: Uint8Array): string => {
      if (resource === undefined) return undecodedNames ? resourceNameOf(value) : ""
      const name = resource.name ?? resource.cluster_name
      return typeof name === "string" ? name : ""
    }

    const handle = (response: AnyResponse) =>
      Effect.gen(function* () {
        const typeUrl = response.type_url
        const state = (yield* typeState(typeUrl)) ?? emptyTypeState(typeUrl, [], isWildcardType(typeUrl))
        if (options.mode === "sotw") {
          const sotw = response as DiscoveryResponse
          const resources = (sotw.resources ?? []).map((any) => {
            const resource = decodeOne(any.type_url, any.value)
            return {
              name: nameOf(resource, any.value),
              bytes: any.value.length,
              ...(resource !== undefined ? { resource } : {}),
            }
          })
          const error = options.validate?.(typeUrl, resources)
          const step = sotwClientOnResponse(state, sotw, resources, error)
          yield* setType(step.state)
          options.onResponse?.({
            typeUrl,
            version: sotw.version_info,
            resources: resources.length,
            removed: 0,
            bytes: resources.reduce((n, r) => n + r.bytes, 0),
            accepted: error === undefined,
            names: resources.map((r) => r.name),
          })
          if (yield* Ref.get(autoAck)) yield* write(step.reply)
        } else {
          const delta = response as DeltaDiscoveryResponse
          const resources = (delta.resources ?? []).map((r) => {
            const resource = decodeOne(r.resource.type_url, r.resource.value)
            return {
              name: r.name,
              version: r.version,
              bytes: r.resource.value.length,
              ...(resource !== undefined ? { resource } : {}),
            }
          })
          const error = options.validate?.(typeUrl, resources)
          const step = deltaClientOnResponse(
            state,
            { ...delta, removed_resources: delta.removed_resources ?? [] },
            resources,
            error,
          )
          yield* setType(step.state)
          options.onResponse?.({
            typeUrl,
            version: delta.system_version_info,
            resources: resources.length,
            removed: (delta.removed_resources ?? []).length,
            bytes: resources.reduce((n, r) => n + r.bytes, 0),
            accepted: error === undefined,
            names: resources.map((r) => r.name),
          })
          if (yield* Ref.get(autoAck)) yield* write(step.reply)
        }
      })

    /** After a reconnect: every watch again, with what the client holds (version / resource versions). */
    const resubscribe = Effect.gen(function* () {
      const types = (yield* SubscriptionRef.get(snapshot)).types
      for (const state of types.values()) {
        yield* setType({ ...state, nonce: "" })
        if (options.mode === "sotw") {
          yield* write({
            type_url: state.typeUrl,
            resource_names: state.wildcard ? [] : [...state.names],
            version_info: state.version,
            response_nonce: "",
          })
        } else {
          yield* write({
            type_url: state.typeUrl,
            resource_names_subscribe: state.wildcard
              ? state.names.length > 0
                ? ["*", ...state.names]
                : []
              : [...state.names],
            initial_resource_versions: Object.fromEntries([...state.resources].map(([name, r]) => [name, r.version])),
          })
        }
      }
    })

    let backoffMs = 100
    const reconnect = options.reconnect ?? true
    yield* Queue.take(inbox).pipe(
      Effect.flatMap(({ generation: from, response }) => {
        if (from !== generation) return Effect.void
        if (response !== null) {
          backoffMs = 100
          return handle(response)
        }
        return Effect.gen(function* () {
          yield* SubscriptionRef.update(snapshot, (s) => ({ ...s, connected: false }))
          if (closing || !reconnect) return yield* Effect.never
          yield* Effect.sleep(Duration.millis(backoffMs * (0.5 + Math.random())))
          backoffMs = Math.min(5000, backoffMs * 2)
          if (closing) return yield* Effect.never
          call = open()
          yield* SubscriptionRef.update(snapshot, (s) => ({ ...s, connected: true }))
          yield* resubscribe
        })
      }),
      Effect.forever,
      Effect.forkScoped,
    )

    const subscribe = (typeUrl: string, names: ReadonlyArray<string> = []) =>
      Effect.gen(function* () {
        const previous = yield* typeState(typeUrl)
        const first = previous === undefined
        const wildcard = first ? names.length === 0 && isWildcardType(typeUrl) : previous.wildcard
        const merged = [...new Set([...(previous?.names ?? []), ...names])].sort()
        const state: ClientTypeState = {
          ...(previous ?? emptyTypeState(typeUrl, merged, wildcard)),
          names: merged,
          wildcard,
        }
        yield* setType(state)
        if (options.mode === "sotw") {
          yield* write({
            type_url: typeUrl,
            resource_names: wildcard ? [] : merged,
            version_info: state.version,
            response_nonce: state.nonce,
          })
        } else {
          const added = first ? [...names] : names.filter((n) => !(previous?.names ?? []).includes(n))
          if (!first && added.length === 0) return
          yield* write({ type_url: typeUrl, resource_names_subscribe: added })
        }
      })

    const unsubscribe = (typeUrl: string, names: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const previous = yield* typeState(typeUrl)
        if (previous === undefined) return
        const remaining = previous.names.filter((n) => !names.includes(n))
        const resources = new Map(previous.resources)
        if (options.mode === "delta") for (const n of names) resources.delete(n)
        yield* setType({ ...previous, names: remaining, resources })
        if (options.mode === "sotw") {
          yield* write({
            type_url: typeUrl,
            resource_names: remaining,
            version_info: previous.version,
            response_nonce: previous.nonce,
          })
        } else {
          yield* write({ type_url: typeUrl, resource_names_unsubscribe: [...names] })
        }
      })

    const waitFor: AdsClientShape["waitFor"] = (condition, timeout) =>
      snapshot.changes.pipe(
        Stream.filter(condition),
        Stream.runHead,
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new AdsClientError({ message: "stream ended before the condition held" })),
            onSome: Effect.succeed,
          }),
        ),
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new AdsClientError({ message: `condition not met within ${String(timeout)}` }),
        }),
      )

    return {
      subscribe,
      unsubscribe,
      snapshot: SubscriptionRef.get(snapshot),
      waitFor,
      sendRaw: write,
      setAutoAck: (enabled) => Ref.set(autoAck, enabled),
    } satisfies AdsClientShape
  })

export const layer = (options: AdsClientOptions): Layer.Layer<AdsClient, AdsClientError> =>
  Layer.scoped(AdsClient, makeAdsClient(options))
