export * from "./mesh-config.js"
export {
  hostPortProblem,
  MeshConfig as MeshConfigSchema,
  MeshNetworks as MeshNetworksSchema,
  ProxyConfig as ProxyConfigSchema,
  trustDomainProblem,
} from "./schema.js"
export * from "./watcher.js"
