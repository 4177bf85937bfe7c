/**
 * The node proxy's workload-handoff protocol (proto/mesh/workload/zds/zds.proto), as the
 * reference's node agent speaks it: the messages as typed values, the timing rule (every
 * request waits for its acknowledgement, at most ACK_TIMEOUT), and what a connection is sent
 * first (the snapshot). The socket and the encoding live in src/layers/cni.
 */
import { Data, Duration } from "effect"

export const ZDS_PROTO_FILE = "mesh/workload/zds/zds.proto"
export const ZDS_PACKAGE = "mesh.workload.zds"

/** The only protocol version (ZdsHello.version). */
export const ZDS_VERSION_V1 = 1

/** The reference's read/write deadline for the hello and for each acknowledgement. */
export const ACK_TIMEOUT = Duration.seconds(5)

/** At most this many node proxies are connected at once (the reference expects at most two). */
export const MAX_NODE_PROXY_CONNECTIONS = 8

export interface WorkloadInfo {
  readonly name: string
  readonly namespace: string
  readonly serviceAccount: string
}

export type WorkloadRequest =
  | { readonly _tag: "Add"; readonly uid: string; readonly workload: WorkloadInfo }
  | { readonly _tag: "Keep"; readonly uid: string }
  | { readonly _tag: "Del"; readonly uid: string }
  | { readonly _tag: "SnapshotSent" }

/** The node proxy's answer: an acknowledgement, with an error message when the request failed. */
export interface WorkloadAck {
  readonly error: string
}

/** A message could not be read as the protocol says. */
export class ZdsDecodeError extends Data.TaggedError("ZdsDecodeError")<{ readonly message: string }> {}

/** A pod the node agent holds: the node proxy gets it with its namespace, or `keep` without one. */
export interface HeldPod {
  readonly uid: string
  readonly workload: WorkloadInfo
  /** The open network namespace descriptor; undefined when it could not be opened. */
  readonly netnsFd: number | undefined
}

/** What a snapshot sends for one pod. */
export const snapshotRequest = (pod: HeldPod): WorkloadRequest =>
  pod.netnsFd === undefined ? { _tag: "Keep", uid: pod.uid } : { _tag: "Add", uid: pod.uid, workload: pod.workload }

export const describeRequest = (request: WorkloadRequest): string => {
  switch (request._tag) {
    case "Add":
      return `add ${request.workload.namespace}/${request.workload.name} (uid ${request.uid})`
    case "Keep":
      return `keep uid ${request.uid}`
    case "Del":
      return `delete uid ${request.uid}`
    case "SnapshotSent":
      return "snapshot sent"
  }
}
