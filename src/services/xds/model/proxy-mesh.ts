/**
 * The mesh config fields the proxy (sidecar and gateway) generators read, in their form:
 * durations as milliseconds, extension providers as their typed view (parsed here, once per mesh
 * config). A duration that does not parse keeps its default (the mesh config watcher already
 * reported it when the file was read).
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../../config/duration.js"
import { parseExtensionProviders } from "../../mesh-config/extension-providers.js"
import type { MeshConfig } from "../../mesh-config/mesh-config.js"
import type { ProxyMesh } from "../config.js"
import { defaultProxyGenOptions } from "./push-context.js"

const millis = (text: string, fallback: number): number =>
  Either.match(parseGoDurationNanos(text), { onLeft: () => fallback, onRight: (n) => Number(n / 1_000_000n) })

export const proxyMeshOf = (mesh: MeshConfig): ProxyMesh => ({
  outboundTrafficPolicy: mesh.outboundTrafficPolicy.mode,
  defaultServiceExportTo: mesh.defaultServiceExportTo,
  defaultVirtualServiceExportTo: mesh.defaultVirtualServiceExportTo,
  defaultDestinationRuleExportTo: mesh.defaultDestinationRuleExportTo,
  accessLogFile: mesh.accessLogFile,
  accessLogEncoding: mesh.accessLogEncoding,
  enableTracing: mesh.enableTracing,
  connectTimeoutMs: millis(mesh.connectTimeout, defaultProxyGenOptions.connectTimeoutMs),
  protocolDetectionTimeoutMs: millis(mesh.protocolDetectionTimeout, defaultProxyGenOptions.protocolDetectionTimeoutMs),
  extensionProviders: parseExtensionProviders(mesh.extensionProviders),
})
