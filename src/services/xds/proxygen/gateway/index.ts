/** The router (gateway proxy) generators: listeners and routes from mesh Gateway resources. */

export { credentialResourceName } from "./external-sds.js"
export { generateGatewayListeners, sniDnatClusterName } from "./listeners.js"
export { type GatewayServer, gatewaysForProxy, type MergedGateway, type MergedPort } from "./merge.js"
export { gatewayReferencedHosts } from "./referenced-hosts.js"
export { generateGatewayRoutes } from "./routes.js"
